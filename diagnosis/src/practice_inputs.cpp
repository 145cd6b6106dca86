// What the practice checks read, gathered from a run's report and the profiler's timeline.
#include <algorithm>
#include <map>
#include <thread>
#include <vector>

#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/diagnosis/practice_inputs.hpp"

namespace gpufeed::diagnosis {

namespace {

/// Syncs ("sync" host ranges: the training stage's own, CUPTI's runtime calls) that lie inside
/// a "step" range of the same thread.
void count_step_syncs(const profiler::Timeline& t, PracticeInputs& in) {
  std::map<std::uint64_t, std::vector<const profiler::HostRange*>> steps;
  for (const profiler::HostRange& r : t.host) {
    if (r.name == profiler::range_names::step) steps[r.thread].push_back(&r);
  }
  for (const profiler::HostRange& r : t.host) {
    if (r.name != profiler::range_names::sync) continue;
    const auto it = steps.find(r.thread);
    if (it == steps.end()) continue;
    const bool inside = std::any_of(it->second.begin(), it->second.end(), [&](const auto* s) {
      return r.begin_ns >= s->begin_ns && r.end_ns <= s->end_ns;
    });
    if (!inside) continue;
    ++in.step_syncs;
    in.step_sync_ns += r.end_ns - r.begin_ns;
  }
}

void count_copies(const profiler::Timeline& t, PracticeInputs& in) {
  for (const profiler::DeviceActivity& a : t.device) {
    if (a.kind != profiler::ActivityKind::memcpy_h2d) continue;
    ++in.h2d_copies;
    in.h2d_bytes += a.bytes;
    if (a.pageable) {
      ++in.pageable_h2d_copies;
      in.pageable_h2d_bytes += a.bytes;
    }
  }
}

}  // namespace

PracticeInputs practice_inputs(const RunFacts& r, const Diagnosis& d) {
  PracticeInputs in;
  const LoaderStats& s = r.stats;
  in.cuda = r.cuda;
  in.profiled = d.profiled;
  in.device_records = d.cupti.has_value() && d.timeline.has_device_work();
  in.training = r.training;
  in.training_on_cpu = in.training && !in.cuda;
  in.cores = std::thread::hardware_concurrency();
  in.workers = r.workers;
  in.torch_threads = in.training ? r.torch_threads : 0;
  if (s.wall_ns > 0) {
    for (const Stage stage : kLoaderStages) {
      in.loader_busy_threads +=
          static_cast<double>(s[stage].busy_ns) / static_cast<double>(s.wall_ns);
    }
  }
  in.steps = r.steps;
  in.habits = r.habits;
  in.fresh_batches = s.fresh_batches;
  in.fresh_samples = s.fresh_batches == s.batches
                         ? s.samples
                         : s.fresh_batches * r.batch_size;  // echoes repeat whole batches
  in.uint8_bytes_per_sample = r.sample.bytes();
  in.pinned = s.pinned;
  in.pinned_bytes = s.pinned_bytes;
  in.pinned_h2d_bytes_per_s = s.pinned_h2d_bytes_per_s;
  in.pageable_h2d_bytes_per_s = s.pageable_h2d_bytes_per_s;
  if (d.profiled) {
    count_step_syncs(d.timeline, in);
    count_copies(d.timeline, in);
    in.host_sync_idle_share = d.report.idle_share(profiler::GapCause::host_sync);
    in.input_bound = d.report.verdict != profiler::Verdict::not_input_bound;
    in.bottleneck_stage = d.report.bottleneck_stage;
    if (const auto stage = parse_stage(in.bottleneck_stage)) {
      in.bottleneck_busy = s.busy_fraction(*stage);
    }
  }
  in.gpufeed_input = r.gpufeed_input;
  in.seed = r.seed;
  in.order = r.order;
  in.label_mix = r.label_mix;
  in.augment = r.augment;
  in.deterministic = in.training && r.deterministic;
  return in;
}

}  // namespace gpufeed::diagnosis
