#include "gpufeed/profiler/summary.hpp"

#include <sstream>

#include "gpufeed/profiler/text_format.hpp"

namespace gpufeed::profiler {

namespace {

void write_causes(std::ostringstream& out, const GapReport& r) {
  out << "idle by cause      ";
  for (GapCause c :
       {GapCause::input_wait, GapCause::host_sync, GapCause::launch, GapCause::other}) {
    out << ' ' << gap_cause_name(c) << ' ' << percent(r.idle_share(c));
  }
  out << '\n';
}

void write_gaps(std::ostringstream& out, const GapReport& r) {
  std::int64_t longest = 0;
  for (const Gap& g : r.gaps) longest = std::max(longest, g.end_ns - g.begin_ns);
  out << "gaps                " << r.gaps.size() << " (longest " << duration(longest);
  const GapStats& w = r.gap_stats[static_cast<std::size_t>(GapCause::input_wait)];
  if (w.count > 0) {
    out << "; input waits: " << w.count << ", median " << duration(w.median_ns);
  }
  out << ")\n";
}

}  // namespace

std::string format_summary(const GapReport& r, const SettingSpelling& spelling) {
  std::ostringstream out;
  out << "window              " << duration(r.window_ns()) << ' ' << r.window_basis << ", "
      << r.steps << " steps; device timeline: " << r.device_timeline << '\n';
  out << "device utilization  " << percent(r.device_util) << '\n';
  write_causes(out, r);
  out << "verdict             " << verdict_text(r.verdict) << " (" << percent(r.input_bound_share)
      << " of the time waiting for input)\n";
  if (const std::string elsewhere = idle_elsewhere(r); !elsewhere.empty()) {
    out << "idle elsewhere      " << elsewhere << '\n';
  }
  if (r.verdict != Verdict::not_input_bound) {
    out << "bottleneck stage    "
        << (r.bottleneck_stage.empty() ? std::string("unknown (no stage ranges)")
                                       : r.bottleneck_stage + " (" + r.bottleneck_basis + ")")
        << '\n';
  }
  write_gaps(out, r);
  if (r.recommendations.empty()) {
    out << (idle_elsewhere(r).empty() ? "recommendations     no change\n"
                                      : "recommendations     no input setting to change; the "
                                        "idle time is elsewhere (above)\n");
  } else {
    out << "recommendations\n";
  }
  int i = 0;
  for (const Recommendation& rec : r.recommendations) {
    out << "  " << ++i << ". " << rec.action(spelling) << ": " << rec.predicted_effect
        << "\n     why: " << rec.reason << '\n';
  }
  for (const std::string& w : r.warnings) out << "warning: " << w << '\n';
  return out.str();
}

}  // namespace gpufeed::profiler
