#pragma once
// One self-contained HTML file: summary numbers, SVG timeline and utilization plot, advice.
#include <cstddef>
#include <string>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

struct HtmlReportOptions {
  std::string title = "gpufeed profile";
  int width = 1200;                           ///< pixels of the figures
  std::size_t max_host_threads = 16;          ///< busiest threads shown in the timeline
  SettingSpelling spelling = field_spelling;  ///< how recommended settings are written
};

/// Renders the report for a browser with no network: inline CSS and SVG only, no scripts,
/// no external references.
class HtmlReport {
 public:
  using Options = HtmlReportOptions;

  static std::string render(const Timeline& timeline, const GapReport& report,
                            const Options& options);
  static std::string render(const Timeline& timeline, const GapReport& report) {
    return render(timeline, report, Options{});
  }
  /// Throws ReportError when `path` cannot be written.
  static void write_file(const std::string& path, const Timeline& timeline, const GapReport& report,
                         const Options& options = {});
};

}  // namespace gpufeed::profiler
