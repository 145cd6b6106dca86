// The --json object of a run, written atomically.
#include "common/cli.hpp"
#include "pipebench/diagnosis.hpp"
#include "pipebench/report.hpp"
#include "pipebench/sweep.hpp"

namespace gpufeed::tools::pipebench {

namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json stages_json(const LoaderStats& stats, double input_wait) {
  json stages = json::object();
  for (std::size_t i = 0; i < kStageCount; ++i) {
    const auto stage = static_cast<Stage>(i);
    const StageStats& s = stats[stage];
    if (s.items == 0) continue;
    const double busy = stage == Stage::wait ? input_wait : stats.busy_fraction(stage);
    stages[stage_name(stage)] = {{"busy_frac", busy}, {"items", s.items}, {"busy_ns", s.busy_ns}};
  }
  return stages;
}

json tuning_json(const LoaderStats& s) {
  json out = json::array();
  for (const TuningChange& c : s.tuning) {
    out.push_back({{"time_ns", c.time_ns},
                   {"knob", knob_name(c.knob)},
                   {"from", c.from},
                   {"to", c.to},
                   {"stage", stage_name(c.stage)},
                   {"reason", c.reason}});
  }
  return out;
}

json dataset_json(const DatasetSummary& d) {
  return {{"path", d.path},
          {"synthetic", d.synthetic.empty() ? json(nullptr) : json(d.synthetic)},
          {"samples", d.samples},
          {"shape", {d.shape.height, d.shape.width, d.shape.channels}},
          {"layout", formats::to_string(d.shape.layout)},
          {"chunk", d.chunk},
          {"chunks", d.chunks},
          {"compression", d.compression},
          {"read_path", d.read_path}};
}

json settings_json(const BenchReport& r) {
  const BenchOptions& o = r.options;
  return {{"device_requested", r.device.requested},
          {"device_resolved", r.device.resolved},
          {"batch", o.batch},
          {"workers", r.workers},
          {"prefetch", r.run.stats.prefetch},
          {"workers_setting", count_json(o.workers)},
          {"prefetch_setting", count_json(o.prefetch)},
          {"tuning", tuning_json(r.run.stats)},
          {"order", o.order},
          {"seed", o.seed},
          {"epochs", r.plan.steps != 0 ? json(nullptr) : json(r.plan.epochs)},
          {"steps", r.plan.steps != 0 ? json(r.plan.steps) : json(nullptr)},
          {"cache_mb", o.cache_mb},
          {"use_index", !o.no_index},
          {"images", o.images},
          {"labels", o.labels},
          {"dtype", o.dtype},
          {"echo", o.echo},
          {"augment", o.augment},
          {"on_error", o.on_error},
          {"size", o.size.empty() ? json(nullptr) : json(o.size)},
          {"inject_stall", o.inject_stall.empty() ? json(nullptr) : json(o.inject_stall)}};
}

json cache_json(const BenchReport& r) {
  const LoaderStats& s = r.run.stats;
  return {{"hits", s.cache_hits},
          {"misses", s.cache_misses},
          {"hit_rate", optional_number(cache_hit_rate(r.run.stats))},
          {"peak_bytes", s.cache_peak_bytes},
          {"chunk_reads", s.chunk_reads},
          {"bytes_read", s.bytes_read}};
}

}  // namespace

json report_json(const BenchReport& r) {
  const LoaderStats& s = r.run.stats;
  const auto bottleneck = s.bottleneck();
  const double input_wait = input_wait_share(r);
  json j = {{"samples_per_s", samples_per_s(r)},
            {"device_util", nullptr},
            {"idle_by_cause",
             {{"input_wait", input_wait},
              {"host_sync", nullptr},
              {"launch", nullptr},
              {"other", nullptr}}},
            {"bottleneck_stage", bottleneck ? json(stage_name(*bottleneck)) : json(nullptr)},
            {"stages", stages_json(s, input_wait)},
            {"echo",
             {{"fresh_batches", s.fresh_batches},
              {"echoed_batches", s.echoed_batches},
              {"reaugmented_batches", s.reaugmented_batches}}},
            {"device", r.device.used}};
  j["dataset"] = dataset_json(r.dataset);
  j["settings"] = settings_json(r);
  j["wall_s"] = r.run.wall_s;
  j["samples"] = r.run.samples;
  j["batches"] = r.run.batches;
  j["epochs_run"] = r.run.epochs;
  j["interrupted"] =
      r.run.interrupted_by != 0 ? json(signal_name(r.run.interrupted_by)) : json(nullptr);
  j["steady_samples_per_s"] = optional_number(steady_samples_per_s(r));
  j["output_bytes_per_s"] = output_bytes_per_s(r);
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["slot_bytes"] = s.slot_bytes;
  j["cache"] = cache_json(r);
  j["skipped_samples"] = s.skipped_samples;
  j["memory"] = {{"slot_bytes", s.slot_bytes},
                 {"pinned", s.pinned},
                 {"pinned_bytes", s.pinned_bytes},
                 {"device_bytes", s.device_bytes},
                 {"cache_peak_bytes", s.cache_peak_bytes},
                 {"peak_rss_bytes", r.peak_rss_bytes},
                 {"allocator_peak_bytes", r.run.training && r.device.used != "cpu"
                                              ? json(r.run.training->allocator_peak_bytes)
                                              : json(nullptr)}};
  j["h2d"] = {{"pinned_bytes_per_s",
               r.device.used == "cpu" ? json(nullptr) : json(s.pinned_h2d_bytes_per_s)},
              {"pageable_bytes_per_s",
               r.device.used == "cpu" ? json(nullptr) : json(s.pageable_h2d_bytes_per_s)}};
  return j;
}

void write_json_file(const std::string& path, const json& value) {
  write_text_atomically(path, value.dump(2) + "\n");
}

}  // namespace gpufeed::tools::pipebench
