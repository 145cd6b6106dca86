#pragma once
// `pipebench analyze TRACE.json`: the gap report of a PyTorch profiler (Kineto) trace or of a
// trace pipebench wrote, plus HolisticTraceAnalysis's per-stream idle breakdown.
// `pipebench analyze R0.json R1.json ...`: one trace per rank of a job, side by side, and the
// straggler: which rank the others wait for, why, and what it cost them.
#include <string>
#include <vector>

namespace gpufeed::tools::pipebench {

struct AnalyzeOptions {
  std::vector<std::string> traces;
  std::string json;    ///< --json OUT.json
  std::string report;  ///< --report OUT.html
};

/// Prints the summary; exit code. Throws profiler::TraceError (one line) for an unreadable trace.
int run_analyze(const AnalyzeOptions& options);

}  // namespace gpufeed::tools::pipebench
