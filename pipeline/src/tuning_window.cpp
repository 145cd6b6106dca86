#include "tuning_window.hpp"

#include <algorithm>

namespace gpufeed::pipeline::detail {

namespace {

constexpr std::int64_t kMinTuneWindowNs = 100'000'000;

}  // namespace

TuningWindow::TuningWindow(const TunerLimits& limits, unsigned workers, unsigned prefetch)
    : tuner_(limits, workers, prefetch) {}

std::optional<TuningChange> TuningWindow::observe(std::uint64_t epoch, std::uint64_t fresh,
                                                  const StageCounters& counters, std::int64_t now) {
  const std::int64_t wait = counters.busy_ns[static_cast<std::size_t>(Stage::wait)].load();
  auto restart = [&] {
    batches_ = fresh;
    start_ns_ = now;
    wait_ns_ = wait;
    epoch_ = epoch;
    for (std::size_t i = 0; i < kStageCount; ++i) busy_ns_[i] = counters.busy_ns[i].load();
  };
  // The first window, one after reset_stats(), or one across the start of an epoch (its wait
  // while the queue fills again says nothing about the settings): start afresh.
  if (start_ns_ == 0 || fresh < batches_ || wait < wait_ns_ || epoch != epoch_) {
    restart();
    return std::nullopt;
  }
  if (fresh < batches_ + tuner_.window_batches() || now - start_ns_ < kMinTuneWindowNs) {
    return std::nullopt;
  }
  TunerWindow w;
  w.wall_ns = now - start_ns_;
  w.wait_ns = wait - wait_ns_;
  w.batches = fresh - batches_;
  std::int64_t most = 0;
  for (const Stage s : {Stage::read, Stage::decode, Stage::assemble, Stage::normalize}) {
    const std::size_t i = static_cast<std::size_t>(s);
    const std::int64_t busy = counters.busy_ns[i].load() - busy_ns_[i];
    w.loader_busy_ns += std::max<std::int64_t>(0, busy);
    if (busy > most) {
      most = busy;
      w.busiest = s;
    }
  }
  restart();
  std::optional<TuningChange> change = tuner_.observe(w);
  if (change) change->time_ns = now;
  return change;
}

void TuningWindow::record(TuningChange change) {
  std::lock_guard lock(log_mutex_);
  log_.push_back(std::move(change));
}

std::vector<TuningChange> TuningWindow::log() const {
  std::lock_guard lock(log_mutex_);
  return log_;
}

}  // namespace gpufeed::pipeline::detail
