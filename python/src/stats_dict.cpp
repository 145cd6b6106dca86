#include "stats_dict.hpp"

#include <nanobind/stl/string.h>

#include "pipebench/run_facts.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

}  // namespace

nb::dict stats_dict(const LoaderStats& s) {
  nb::dict d;
  d["wall_s"] = seconds(s.wall_ns);
  d["workers"] = s.workers;
  d["prefetch"] = s.prefetch;
  nb::list tuning;
  for (const TuningChange& c : s.tuning) {
    nb::dict one;
    one["time_s"] = seconds(c.time_ns);
    one["knob"] = knob_name(c.knob);
    one["from"] = c.from;
    one["to"] = c.to;
    one["stage"] = stage_name(c.stage);
    one["reason"] = c.reason;
    tuning.append(one);
  }
  d["tuning"] = tuning;
  d["batches"] = s.batches;
  d["samples"] = s.samples;
  d["fresh_batches"] = s.fresh_batches;
  d["echoed_batches"] = s.echoed_batches;
  d["reaugmented_batches"] = s.reaugmented_batches;
  d["skipped_samples"] = s.skipped_samples;
  nb::dict stages;
  for (const StageInfo& info : gpufeed::kStages) {
    const Stage stage = info.stage;
    if (stage == Stage::step) continue;  // the trainer's, not the loader's
    nb::dict one;
    one["busy_s"] = seconds(s[stage].busy_ns);
    one["busy_frac"] = s.busy_fraction(stage);
    one["items"] = s[stage].items;
    stages[stage_name(stage)] = one;
  }
  d["stages"] = stages;
  const std::optional<Stage> bottleneck = s.bottleneck();
  d["bottleneck"] = bottleneck ? nb::object(nb::str(stage_name(*bottleneck))) : nb::none();
  nb::dict queue;
  queue["mean_ready"] = s.mean_ready_batches;
  queue["max_ready"] = s.max_ready_batches;
  queue["ready"] = s.ready_batches;
  d["queue"] = queue;
  nb::dict cache;
  cache["hits"] = s.cache_hits;
  cache["misses"] = s.cache_misses;
  const std::optional<double> hit_rate = tools::pipebench::cache_hit_rate(s);
  cache["hit_rate"] = hit_rate ? nb::object(nb::float_(*hit_rate)) : nb::none();
  cache["peak_bytes"] = s.cache_peak_bytes;
  cache["chunk_reads"] = s.chunk_reads;
  cache["bytes_read"] = s.bytes_read;
  d["cache"] = cache;
  nb::dict memory;
  memory["slot_bytes"] = s.slot_bytes;
  memory["pinned"] = s.pinned;
  memory["pinned_bytes"] = s.pinned_bytes;
  memory["device_bytes"] = s.device_bytes;
  d["memory"] = memory;
  nb::dict h2d;
  h2d["pinned_bytes_per_s"] = s.pinned_h2d_bytes_per_s;
  h2d["pageable_bytes_per_s"] = s.pageable_h2d_bytes_per_s;
  d["h2d"] = h2d;
  return d;
}

}  // namespace gpufeed::python
