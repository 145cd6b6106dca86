#include "gpufeed/profiler/text_format.hpp"

#include "render/palette.hpp"
#include "render/svg.hpp"
#include "render/svg_plots.hpp"

namespace gpufeed::profiler::detail {

std::string svg_utilization(const GapReport& report, int width) {
  constexpr double kLeft = 50, kTop = 10, kHeight = 160, kBottom = 24;
  const double plot_w = std::max(100.0, static_cast<double>(width) - kLeft - 10);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"util\" width=\"" +
                  std::to_string(width) + "\" height=\"" + fmt(kTop + kHeight + kBottom) + "\">";
  s += "<rect x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop) + "\" width=\"" + fmt(plot_w) +
       "\" height=\"" + fmt(kHeight) + "\" fill=\"#fbe9e7\"/>";  // idle background
  const std::size_t n = report.utilization.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double u = std::clamp(report.utilization[i], 0.0, 1.0);
    const double x0 = kLeft + plot_w * static_cast<double>(i) / static_cast<double>(n);
    const double x1 = kLeft + plot_w * static_cast<double>(i + 1) / static_cast<double>(n);
    s += "<rect x=\"" + fmt(x0) + "\" y=\"" + fmt(kTop + kHeight * (1 - u)) + "\" width=\"" +
         fmt(std::max(0.5, x1 - x0 - 0.3)) + "\" height=\"" + fmt(kHeight * u) +
         "\" fill=\"#2e86ab\"/>";
  }
  for (int p = 0; p <= 100; p += 25) {
    const double y = kTop + kHeight * (1 - p / 100.0);
    s += "<line x1=\"" + fmt(kLeft - 4) + "\" y1=\"" + fmt(y) + "\" x2=\"" + fmt(kLeft + plot_w) +
         "\" y2=\"" + fmt(y) + "\" stroke=\"#0002\"/><text x=\"4\" y=\"" + fmt(y + 4) +
         "\" class=\"tick\">" + std::to_string(p) + "%</text>";
  }
  const double mean_y = kTop + kHeight * (1 - std::clamp(report.device_util, 0.0, 1.0));
  s += "<line x1=\"" + fmt(kLeft) + "\" y1=\"" + fmt(mean_y) + "\" x2=\"" + fmt(kLeft + plot_w) +
       "\" y2=\"" + fmt(mean_y) +
       "\" stroke=\"#e4572e\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>";
  s += "<text x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop + kHeight + 18) + "\" class=\"tick\">" +
       "window " + xml_escape(duration(report.window_ns())) + "; dashed: mean " +
       xml_escape(percent(report.device_util)) + "</text></svg>";
  return s;
}

}  // namespace gpufeed::profiler::detail
