#pragma once
// The two SVG figures of the HTML report.
#include <string>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler::detail {

/// Device lanes (per stream, or the step ranges without device records), a lane of idle gaps
/// coloured by cause, then the busiest host threads, over the steady-state window.
std::string svg_timeline(const Timeline& timeline, const GapReport& report, int width,
                         std::size_t max_host_threads);

/// Device utilization per bin of the window, with the mean as a line.
std::string svg_utilization(const GapReport& report, int width);

}  // namespace gpufeed::profiler::detail
