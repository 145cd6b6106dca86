#include "gpufeed/profiler/html_report.hpp"

#include <set>
#include <string_view>

#include "gpufeed/base/names.hpp"
#include "gpufeed/profiler/text_format.hpp"

#include "render/palette.hpp"
#include "render/svg.hpp"
#include "render/svg_plots.hpp"
#include "traces/file_output.hpp"

namespace gpufeed::profiler {

namespace {

using detail::xml_escape;

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:24px 0 8px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:8px;padding:10px 14px;min-width:160px;background:#fafafa}
.card b{display:block;font-size:24px}.verdict-highly{background:#fdecea}.verdict-moderately{background:#fff4e0}
.verdict-not{background:#e8f5e9}.verdict-idle{background:#fff4e0}
.bar{display:flex;height:22px;border-radius:4px;overflow:hidden;border:1px solid #ccc;max-width:900px}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse}td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:left}
.lane{font-size:11px;fill:#333}.tick{font-size:10px;fill:#555}
li{margin-bottom:6px}.why{color:#555}.warn{color:#b00020}
)";

constexpr GapCause kCauses[] = {GapCause::input_wait, GapCause::host_sync, GapCause::launch,
                                GapCause::other};

std::string card(const std::string& label, const std::string& value, const char* cls = "") {
  return "<div class=\"card " + std::string(cls) + "\">" + xml_escape(label) + "<b>" +
         xml_escape(value) + "</b></div>";
}

std::string verdict_class(Verdict v) {
  constexpr std::array<const char*, 3> kClasses{"verdict-not", "verdict-moderately",
                                                "verdict-highly"};
  return name_of(kClasses, v, "");
}

std::string summary(const GapReport& r) {
  std::string s = "<div class=\"cards\">";
  s += card("device utilization", percent(r.device_util));
  const std::string elsewhere = idle_elsewhere(r);
  // A mostly idle device is no healthy run, input-bound or not: never the green card.
  s += card("verdict", verdict_text(r.verdict),
            elsewhere.empty() ? verdict_class(r.verdict).c_str() : "verdict-idle");
  s += card("waiting for input", percent(r.input_bound_share));
  if (r.verdict != Verdict::not_input_bound) {
    s += card("bottleneck stage", r.bottleneck_stage.empty() ? "unknown" : r.bottleneck_stage);
  }
  s += card("window", duration(r.window_ns()) + ", " + std::to_string(r.steps) + " steps");
  s += "</div><h2>Where the device time went</h2><div class=\"bar\">";
  auto segment = [&](double f, const char* color, const std::string& title) {
    if (f > 0) {
      s += "<div style=\"width:" + detail::fmt(f * 100) + "%;background:" + color + "\" title=\"" +
           xml_escape(title) + "\"></div>";
    }
  };
  segment(r.device_util, "#2e86ab", "busy " + percent(r.device_util));
  for (GapCause c : kCauses) {
    segment(r.idle_share(c), detail::cause_color(c),
            std::string(gap_cause_name(c)) + " " + percent(r.idle_share(c)));
  }
  s += "</div><p class=\"legend\"><span><i class=\"sw\" style=\"background:#2e86ab\"></i>busy " +
       percent(r.device_util) + "</span>";
  for (GapCause c : kCauses) {
    s += "<span><i class=\"sw\" style=\"background:" + std::string(detail::cause_color(c)) +
         "\"></i>" + gap_cause_name(c) + " " + percent(r.idle_share(c)) + "</span>";
  }
  if (!elsewhere.empty())
    s += "</p><p class=\"elsewhere\"><b>Idle elsewhere:</b> " + xml_escape(elsewhere);
  return s + "</p><p>Window: " + xml_escape(r.window_basis) +
         "; device timeline: " + xml_escape(r.device_timeline) + ".</p>";
}

std::string recommendations(const GapReport& r, const SettingSpelling& spelling) {
  if (r.recommendations.empty()) return "<p>No change recommended.</p>";
  std::string s = "<ol class=\"recommendations\">";
  for (const Recommendation& rec : r.recommendations) {
    s += "<li><b>" + xml_escape(rec.action(spelling)) + "</b> &mdash; " +
         xml_escape(rec.predicted_effect) +
         "<br><span class=\"why\">why: " + xml_escape(rec.reason) + "</span></li>";
  }
  return s + "</ol>";
}

std::string stages(const GapReport& r) {
  if (r.stages.empty()) return "<p>No pipeline stage ranges recorded.</p>";
  std::string s =
      "<table><tr><th>stage</th><th>busy</th><th>threads busy while waiting</th>"
      "<th>ranges</th></tr>";
  for (const StageShare& st : r.stages) {
    s += "<tr><td><i class=\"sw\" style=\"background:" + std::string(detail::range_color(st.name)) +
         "\"></i>" + xml_escape(st.name) + "</td><td>" + percent(st.busy_frac) + "</td><td>" +
         detail::fmt(st.share_during_wait) + "</td><td>" + std::to_string(st.items) + "</td></tr>";
  }
  return s + "</table>";
}

/// The colours of the timeline: only the range names and device activity kinds that occur in
/// the window shown.
std::string legend(const Timeline& t, const GapReport& r) {
  const auto shown = [&](std::int64_t b, std::int64_t e) {
    return e > r.window_begin_ns && b < r.window_end_ns;
  };
  std::set<std::string_view> names;
  for (const HostRange& h : t.host) {
    if (shown(h.begin_ns, h.end_ns)) names.insert(h.name);
  }
  std::set<ActivityKind> kinds;
  for (const DeviceActivity& a : t.device) {
    if (a.is_work() && shown(a.begin_ns, a.end_ns)) kinds.insert(a.kind);
  }
  std::string s = "<p class=\"legend\">";
  for (const char* name : {"step", "wait", "sync", "launch", "read", "decode", "assemble", "h2d",
                           "normalize", "echo", "transform", "dataset", "collate"}) {
    if (!names.contains(name)) continue;
    s += "<span><i class=\"sw\" style=\"background:" + std::string(detail::range_color(name)) +
         "\"></i>" + name + "</span>";
  }
  for (ActivityKind k : kinds) {
    s += "<span><i class=\"sw\" style=\"background:" + std::string(detail::activity_color(k)) +
         "\"></i>" + activity_kind_name(k) + "</span>";
  }
  return s + "</p>";
}

}  // namespace

std::string HtmlReport::render(const Timeline& timeline, const GapReport& report,
                               const Options& options) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  xml_escape(options.title) + "</title><style>" + kStyle + "</style></head><body>";
  s += "<h1>" + xml_escape(options.title) + "</h1>" + summary(report);
  s += "<h2>Recommendations</h2>" + recommendations(report, options.spelling);
  s += "<h2>Timeline (steady-state window)</h2>" +
       detail::svg_timeline(timeline, report, options.width, options.max_host_threads) +
       legend(timeline, report);
  s += "<h2>Device utilization over time</h2>" + detail::svg_utilization(report, options.width);
  s += "<h2>Pipeline stages</h2>" + stages(report);
  for (const std::string& w : report.warnings)
    s += "<p class=\"warn\">warning: " + xml_escape(w) + "</p>";
  return s + "</body></html>\n";
}

void HtmlReport::write_file(const std::string& path, const Timeline& timeline,
                            const GapReport& report, const Options& options) {
  detail::write_text_file(path, render(timeline, report, options), "HTML report");
}

}  // namespace gpufeed::profiler
