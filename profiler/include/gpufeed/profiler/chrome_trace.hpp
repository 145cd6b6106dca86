#pragma once
// Chrome trace event JSON (opens in Perfetto and chrome://tracing).
#include <iosfwd>
#include <string>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

struct ChromeTraceOptions {
  bool flows = true;
  bool gaps = true;  ///< needs a report
};

/// Writes a timeline as trace events: host ranges as "X" events per thread (process "host"),
/// device activity per stream (one process per device, thread = stream), flow arrows ("s"/"f",
/// binding point "e") from each runtime launch to the work it started (by correlation id),
/// metadata naming processes and threads, and, given a report, a lane of idle gaps coloured by
/// cause. Timestamps are microseconds from the earliest event; otherData.origin_ns holds the
/// host-clock origin.
class ChromeTrace {
 public:
  using Options = ChromeTraceOptions;

  static void write(std::ostream& out, const Timeline& timeline, const GapReport* report,
                    const Options& options);
  static void write(std::ostream& out, const Timeline& timeline,
                    const GapReport* report = nullptr) {
    write(out, timeline, report, Options{});
  }
  /// Throws ReportError when `path` cannot be written.
  static void write_file(const std::string& path, const Timeline& timeline,
                         const GapReport* report = nullptr, const Options& options = {});
};

}  // namespace gpufeed::profiler
