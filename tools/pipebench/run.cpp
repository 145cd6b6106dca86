#include "pipebench/run.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

#include "common/cli.hpp"
#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::tools::pipebench {

namespace {

double touch(const Batch& batch) {
  const auto images = batch.images();
  double sum = 0;
  if (!images.empty()) sum += images.front() + images[images.size() / 2] + images.back();
  for (const std::int64_t label : batch.labels()) sum += static_cast<double>(label);
  return sum;
}

ProgressPoint progress_point(const Loader& loader, std::uint64_t epoch, const StageStats& steps,
                             const RunResult& r, std::int64_t now_ns) {
  const LoaderStats s = loader.stats();
  return ProgressPoint{now_ns,          epoch,         r.batches,
                       r.samples,       steps.busy_ns, s[Stage::wait].busy_ns,
                       s.ready_batches, s.prefetch};
}

/// Consumes one epoch, or until the plan's step budget is spent.
void consume_epoch(Loader& loader, std::uint64_t epoch, const RunPlan& plan,
                   TrainingStage* training, Progress* progress, StageStats& steps, RunResult& r) {
  loader.start_epoch(epoch);
  while ((plan.steps == 0 || r.batches < plan.steps) && stop_signal() == 0) {
    Batch batch = loader.next();
    if (!batch) break;
    r.checksum += touch(batch);
    if (training != nullptr) {
      const std::int64_t t0 = profiler::now_ns();
      training->step(batch);
      steps.busy_ns += profiler::now_ns() - t0;
      ++steps.items;
    }
    r.samples += batch.size();
    ++r.batches;
    batch.release();
    if (progress != nullptr) {
      if (const std::int64_t now = profiler::now_ns(); progress->due(now)) {
        progress->update(progress_point(loader, epoch, steps, r, now));
      }
    }
  }
  if (progress != nullptr) {
    progress->epoch_end(progress_point(loader, epoch, steps, r, profiler::now_ns()));
  }
}

bool more_to_do(const RunResult& r, const RunPlan& plan, std::uint64_t epoch) {
  return plan.steps != 0 ? r.batches < plan.steps : epoch < plan.epochs;
}

}  // namespace

RunResult run_benchmark(Loader& loader, const RunPlan& plan, TrainingStage* training,
                        Progress* progress) {
  RunResult r;
  StageStats steps;
  loader.reset_stats();  // the counters and their wall time cover the run, not the set-up
  const std::int64_t start = profiler::now_ns();
  std::int64_t first_epoch_end = 0;
  std::uint64_t first_epoch_samples = 0;
  for (std::uint64_t epoch = 0; more_to_do(r, plan, epoch) && stop_signal() == 0; ++epoch) {
    const std::uint64_t before = r.batches;
    consume_epoch(loader, epoch, plan, training, progress, steps, r);
    ++r.epochs;
    if (epoch == 0) {
      first_epoch_end = profiler::now_ns();
      first_epoch_samples = r.samples;
    }
    if (r.batches == before) break;  // an empty epoch: nothing more will come
  }
  const std::int64_t end = profiler::now_ns();
  r.interrupted_by = stop_signal();
  if (progress != nullptr) progress->finish();
  r.stats = loader.stats();
  if (training != nullptr) {
    r.stats.stages[static_cast<std::size_t>(Stage::step)] = steps;
    r.training = training->stats();
  }
  r.wall_s = static_cast<double>(end - start) * 1e-9;
  r.steady_samples = r.samples - first_epoch_samples;
  if (r.steady_samples > 0) r.steady_s = static_cast<double>(end - first_epoch_end) * 1e-9;
  return r;
}

std::uint64_t peak_rss_bytes() {
  // VmHWM follows reset_peak_rss(); getrusage's maximum never goes down.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "... kB"
  }
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

}  // namespace gpufeed::tools::pipebench
