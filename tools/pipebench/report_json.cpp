// The --json object of a run, written atomically.
#include "common/cli.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "pipebench/report.hpp"
#include "pipebench/sweep.hpp"

namespace gpufeed::tools::pipebench {

namespace {

using nlohmann::json;

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

json settings_json(const BenchReport& r, const json& stats) {
  const BenchOptions& o = r.options;
  return {{"device_requested", r.device.requested.str()},
          {"device_resolved", r.device.used.str()},
          {"batch", o.loader.sampling.batch_size},
          {"workers", r.workers},
          {"prefetch", r.run.stats.prefetch},
          {"workers_setting", count_json(o.loader.resources.workers)},
          {"prefetch_setting", count_json(o.loader.resources.prefetch)},
          {"tuning", stats["tuning"]},
          {"order", to_string(o.loader.sampling.order)},
          {"seed", o.loader.sampling.seed},
          {"epochs", r.plan.steps != 0 ? json(nullptr) : json(r.plan.epochs)},
          {"steps", r.plan.steps != 0 ? json(r.plan.steps) : json(nullptr)},
          {"cache_mb", o.loader.storage.cache_bytes >> 20},
          {"use_index", o.loader.source.use_index},
          {"images", o.loader.source.images},
          {"labels", o.loader.source.labels},
          {"dtype", to_string(o.loader.output.dtype)},
          {"echo", o.loader.echo.to_string()},
          {"augment", to_string(o.loader.image.augment)},
          {"decode", to_string(o.loader.image.decode)},
          {"on_error", to_string(o.loader.on_error)},
          {"size", o.loader.image.height == 0 ? json(nullptr) : json(size_text(o.loader))},
          {"inject_stall", o.inject_stall ? json(o.inject_stall->str()) : json(nullptr)}};
}

}  // namespace

json report_json(const BenchReport& r) {
  const LoaderStats& s = r.run.stats;
  const json stats = diagnosis::stats_json(s);
  const bool cpu = r.device.used.is_cpu();
  json j = diagnosis::run_json(r.facts);
  // The run's own clock and counts (the loader's cover the same span).
  j["samples_per_s"] = samples_per_s(r);
  j["wall_s"] = r.run.wall_s;
  j["samples"] = r.run.samples;
  j.erase("steps");
  j.erase("epochs");
  j["device"] = r.device.used.str();
  j["dataset"] = dataset_json(r.dataset);
  j["settings"] = settings_json(r, stats);
  j["batches"] = r.run.batches;
  j["epochs_run"] = r.run.epochs;
  j["interrupted"] =
      r.run.interrupted_by != 0 ? json(signal_name(r.run.interrupted_by)) : json(nullptr);
  j["steady_samples_per_s"] = diagnosis::number_or_null(steady_samples_per_s(r));
  j["output_bytes_per_s"] = output_bytes_per_s(r);
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["slot_bytes"] = s.slot_bytes;
  j["cache"] = stats["cache"];
  j["network"] = stats["network"];  // null for a local file
  j["skipped_samples"] = s.skipped_samples;
  j["memory"] = stats["memory"];
  j["memory"]["cache_peak_bytes"] = s.cache_peak_bytes;
  j["memory"]["peak_rss_bytes"] = r.peak_rss_bytes;
  j["memory"]["allocator_peak_bytes"] =
      r.run.training && !cpu ? json(r.run.training->allocator_peak_bytes) : json(nullptr);
  j["h2d"] =
      cpu ? json{{"pinned_bytes_per_s", nullptr}, {"pageable_bytes_per_s", nullptr}} : stats["h2d"];
  return j;
}

void write_json_file(const std::string& path, const json& value) {
  diagnosis::write_text_atomically(path, value.dump(2) + "\n");
}

}  // namespace gpufeed::tools::pipebench
