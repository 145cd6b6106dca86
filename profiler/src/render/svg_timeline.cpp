#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gpufeed/profiler/text_format.hpp"

#include "analyze/lanes.hpp"
#include "render/palette.hpp"
#include "render/svg.hpp"
#include "render/svg_plots.hpp"

namespace gpufeed::profiler::detail {

namespace {

constexpr double kLabelWidth = 150;
constexpr double kLaneHeight = 18;
constexpr double kLaneGap = 6;
constexpr double kTop = 24;

struct Frame {
  std::int64_t begin;
  std::int64_t end;
  double plot_width;
  [[nodiscard]] bool visible(std::int64_t b, std::int64_t e) const { return e > begin && b < end; }
  [[nodiscard]] double x(std::int64_t t) const {
    const double f = static_cast<double>(std::clamp(t, begin, end) - begin) /
                     static_cast<double>(std::max<std::int64_t>(1, end - begin));
    return kLabelWidth + f * plot_width;
  }
};

class Lanes {
 public:
  Lanes(std::string& out, const Frame& frame) : out_(out), frame_(frame) {}
  /// Starts a lane; returns its rectangle row (merged on screen).
  RectRow row(const std::string& label) {
    const double y = kTop + static_cast<double>(count_++) * (kLaneHeight + kLaneGap);
    out_ += "<text x=\"4\" y=\"" + fmt(y + 13) + "\" class=\"lane\">" + xml_escape(label) +
            "</text><rect x=\"" + fmt(kLabelWidth) + "\" y=\"" + fmt(y) + "\" width=\"" +
            fmt(frame_.plot_width) + "\" height=\"" + fmt(kLaneHeight) + "\" fill=\"#f4f4f4\"/>";
    return RectRow(out_, y, kLaneHeight);
  }
  [[nodiscard]] double height() const {
    return kTop + static_cast<double>(count_) * (kLaneHeight + kLaneGap);
  }

 private:
  std::string& out_;
  const Frame& frame_;
  int count_ = 0;
};

void device_lanes(const Timeline& t, const GapReport& r, const Frame& f, Lanes& lanes) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const DeviceActivity*>> streams;
  for (const DeviceActivity& a : t.device) {
    if (a.is_work() && f.visible(a.begin_ns, a.end_ns)) streams[{a.device, a.stream}].push_back(&a);
  }
  const auto names = stream_lane_names(t);
  for (const auto& [key, acts] : streams) {
    RectRow row = lanes.row("device " + std::to_string(key.first) + " " + names.at(key));
    for (const DeviceActivity* a : acts)
      row.add(f.x(a->begin_ns), f.x(a->end_ns), activity_color(a->kind));
  }
  if (streams.empty()) {
    RectRow row = lanes.row("device (step ranges)");
    for (const HostRange& h : t.host) {
      if (h.name == range_names::step && f.visible(h.begin_ns, h.end_ns)) {
        row.add(f.x(h.begin_ns), f.x(h.end_ns), range_color(h.name));
      }
    }
  }
  RectRow gaps = lanes.row("idle gaps by cause");
  for (const Gap& g : r.gaps) gaps.add(f.x(g.begin_ns), f.x(g.end_ns), cause_color(g.cause));
}

void host_lanes(const Timeline& t, const Frame& f, std::size_t max_threads, Lanes& lanes) {
  std::map<std::uint64_t, std::int64_t> busy;
  for (const HostRange& h : t.host) {
    if (f.visible(h.begin_ns, h.end_ns)) busy[h.thread] += h.end_ns - h.begin_ns;
  }
  std::vector<std::pair<std::int64_t, std::uint64_t>> order;
  for (const auto& [tid, ns] : busy) order.emplace_back(-ns, tid);
  std::sort(order.begin(), order.end());
  if (order.size() > max_threads) order.resize(max_threads);
  std::set<std::uint64_t> shown;
  for (const auto& o : order) shown.insert(o.second);
  const auto names = host_lane_names(t);
  for (std::uint64_t tid : shown) {
    RectRow row = lanes.row(names.at(tid));
    for (const HostRange& h : t.host) {
      // Ranges the analysis does not know (free-form annotations) would only hide the others.
      const char* color = range_color(h.name);
      if (h.thread == tid && f.visible(h.begin_ns, h.end_ns) && color != kUnknownRangeColor) {
        row.add(f.x(h.begin_ns), f.x(h.end_ns), color);
      }
    }
  }
}

void axis(std::string& out, const Frame& f, double y) {
  for (int i = 0; i <= 4; ++i) {
    const std::int64_t t = f.begin + (f.end - f.begin) * i / 4;
    const double x = f.x(t);
    const char* anchor = i == 4 ? "end" : "start";  // keep the last label inside the figure
    out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(kTop - 4) + "\" x2=\"" + fmt(x) + "\" y2=\"" +
           fmt(y) + "\" stroke=\"#ccc\"/><text x=\"" + fmt(i == 4 ? x - 2 : x + 2) +
           "\" y=\"12\" text-anchor=\"" + anchor + "\" class=\"tick\">" +
           xml_escape(duration(t - f.begin)) + "</text>";
  }
}

}  // namespace

std::string svg_timeline(const Timeline& timeline, const GapReport& report, int width,
                         std::size_t max_host_threads) {
  const Frame frame{report.window_begin_ns, report.window_end_ns,
                    std::max(100.0, static_cast<double>(width) - kLabelWidth - 10)};
  std::string body;
  Lanes lanes(body, frame);
  device_lanes(timeline, report, frame, lanes);
  host_lanes(timeline, frame, max_host_threads, lanes);
  axis(body, frame, lanes.height());
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" +
         std::to_string(width) + "\" height=\"" + fmt(lanes.height() + 4) + "\" viewBox=\"0 0 " +
         std::to_string(width) + " " + fmt(lanes.height() + 4) + "\">" + body + "</svg>";
}

}  // namespace gpufeed::profiler::detail
