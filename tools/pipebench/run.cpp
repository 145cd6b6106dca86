#include "pipebench/run.hpp"

#include <sys/resource.h>

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

/// Consumes one epoch, or until the plan's step budget is spent.
void consume_epoch(Loader& loader, std::uint64_t epoch, const RunPlan& plan,
                   TrainingStage* training, StageStats& steps, RunResult& r) {
  loader.start_epoch(epoch);
  while (plan.steps == 0 || r.batches < plan.steps) {
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
  }
}

bool more_to_do(const RunResult& r, const RunPlan& plan, std::uint64_t epoch) {
  return plan.steps != 0 ? r.batches < plan.steps : epoch < plan.epochs;
}

}  // namespace

RunResult run_benchmark(Loader& loader, const RunPlan& plan, TrainingStage* training) {
  RunResult r;
  StageStats steps;
  const std::int64_t start = profiler::now_ns();
  std::int64_t first_epoch_end = 0;
  std::uint64_t first_epoch_samples = 0;
  for (std::uint64_t epoch = 0; more_to_do(r, plan, epoch); ++epoch) {
    const std::uint64_t before = r.batches;
    consume_epoch(loader, epoch, plan, training, steps, r);
    ++r.epochs;
    if (epoch == 0) {
      first_epoch_end = profiler::now_ns();
      first_epoch_samples = r.samples;
    }
    if (r.batches == before) break;  // an empty epoch: nothing more will come
  }
  const std::int64_t end = profiler::now_ns();
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
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace gpufeed::tools::pipebench
