#include "gpufeed/profiler/report_json.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "traces/file_output.hpp"

namespace gpufeed::profiler {

namespace {

using nlohmann::json;

constexpr GapCause kCauses[] = {GapCause::input_wait, GapCause::host_sync, GapCause::launch,
                                GapCause::other};

json gaps_json(const GapReport& r) {
  json by_cause = json::object();
  for (GapCause c : kCauses) {
    const GapStats& s = r.gap_stats[static_cast<std::size_t>(c)];
    by_cause[gap_cause_name(c)] = {{"count", s.count},
                                   {"total_ns", s.total_ns},
                                   {"median_ns", s.median_ns},
                                   {"max_ns", s.max_ns},
                                   {"cv", s.cv},
                                   {"idle_ns", r.idle_ns[c]}};
  }
  std::vector<const Gap*> longest;
  for (const Gap& g : r.gaps) longest.push_back(&g);
  const std::size_t n = std::min<std::size_t>(10, longest.size());
  std::partial_sort(
      longest.begin(), longest.begin() + static_cast<std::ptrdiff_t>(n), longest.end(),
      [](const Gap* a, const Gap* b) { return a->end_ns - a->begin_ns > b->end_ns - b->begin_ns; });
  json top = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const Gap& g = *longest[i];
    top.push_back({{"begin_ns", g.begin_ns},
                   {"ns", g.end_ns - g.begin_ns},
                   {"cause", gap_cause_name(g.cause)}});
  }
  return {{"count", r.gaps.size()},
          {"idle_ns", r.idle_ns.total()},
          {"by_cause", by_cause},
          {"longest", top}};
}

json setting_json(const Setting& s) {
  return {{"knob", knob_name(s.knob)},
          {"value", s.knob == Knob::order ? json(s.value_text()) : json(s.value)}};
}

json recommendations_json(const GapReport& r, const SettingSpelling& spelling) {
  json out = json::array();
  for (const Recommendation& rec : r.recommendations) {
    json settings = json::array();
    for (const Setting& s : rec.settings) settings.push_back(setting_json(s));
    for (const InputSetting& s : rec.input_settings) {
      settings.push_back(
          {{"knob", s.keyword}, {"value", s.boolean ? json(s.value != 0) : json(s.value)}});
    }
    out.push_back(
        {{"kind", rec.kind},
         {"settings", settings},
         {"action", rec.action(spelling)},
         {"reason", rec.reason},
         {"predicted_effect", rec.predicted_effect},
         {"predicted_device_util",
          rec.predicted_device_util >= 0 ? json(rec.predicted_device_util) : json(nullptr)},
         {"predicted_samples_per_s",
          rec.predicted_samples_per_s >= 0 ? json(rec.predicted_samples_per_s) : json(nullptr)}});
  }
  return out;
}

/// The model's device utilization for each echo factor, by factor; the largest is what
/// `--echo auto` (cap 4: up to 5 deliveries of a batch) can reach.
json echo_predictions_json(const GapReport& r) {
  json out = json::object();
  for (int factor = 2; factor <= 5; ++factor) {
    out[std::to_string(factor)] = predicted_util_with_echo(r, factor);
  }
  return out;
}

json report_object(const GapReport& r, const SettingSpelling& spelling) {
  json idle = json::object();
  for (GapCause c : kCauses) idle[gap_cause_name(c)] = r.idle_share(c);
  json stages = json::object();
  for (const StageShare& s : r.stages) {
    stages[s.name] = {
        {"busy_frac", s.busy_frac}, {"items", s.items}, {"share_during_wait", s.share_during_wait}};
  }
  return {
      {"device_util", r.device_util},
      {"idle_by_cause", idle},
      {"bottleneck_stage", r.bottleneck_stage.empty() ? json(nullptr) : json(r.bottleneck_stage)},
      {"bottleneck_basis", r.bottleneck_basis},
      {"verdict", verdict_text(r.verdict)},
      {"input_bound_share", r.input_bound_share},
      {"stages", stages},
      {"gaps", gaps_json(r)},
      {"recommendations", recommendations_json(r, spelling)},
      {"echo_predicted_util", echo_predictions_json(r)},
      {"window",
       {{"begin_ns", r.window_begin_ns},
        {"end_ns", r.window_end_ns},
        {"ns", r.window_ns()},
        {"basis", r.window_basis}}},
      {"device_timeline", r.device_timeline},
      {"busy_ns", r.busy_ns},
      {"steps", r.steps},
      {"consumer_wait_ns", r.consumer_wait_ns},
      {"h2d_ns", r.h2d_ns},
      {"pageable_h2d_ns", r.pageable_h2d_ns},
      {"utilization", r.utilization},
      {"warnings", r.warnings}};
}

}  // namespace

std::string report_json(const GapReport& report, int indent, const SettingSpelling& spelling) {
  // Kernel names from foreign traces may hold invalid UTF-8: replace rather than throw.
  return report_object(report, spelling).dump(indent, ' ', false, json::error_handler_t::replace);
}

void write_report_json(const GapReport& report, const std::string& path) {
  detail::write_text_file(path, report_json(report) + "\n", "report JSON");
}

}  // namespace gpufeed::profiler
