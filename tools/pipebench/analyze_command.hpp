#pragma once
// `pipebench analyze TRACE.json`: the gap report of a PyTorch profiler (Kineto) trace or of a
// trace pipebench wrote, plus HolisticTraceAnalysis's per-stream idle breakdown.
#include <string>

#include <CLI/CLI.hpp>

namespace gpufeed::tools::pipebench {

struct AnalyzeOptions {
  std::string trace;
  std::string json;    ///< --json OUT.json
  std::string report;  ///< --report OUT.html
};

/// Adds the `analyze` subcommand and its options to `app`.
CLI::App* add_analyze_command(CLI::App& app, AnalyzeOptions& options);

/// Prints the summary; exit code. Throws profiler::TraceError (one line) for an unreadable trace.
int run_analyze(const AnalyzeOptions& options);

}  // namespace gpufeed::tools::pipebench
