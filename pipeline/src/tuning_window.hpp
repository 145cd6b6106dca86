#pragma once
// workers=auto / prefetch=auto while the loader runs: the window of counters the tuner is
// judging, and the log of the changes it made.
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "gpufeed/pipeline/stats.hpp"
#include "tuner.hpp"

namespace gpufeed::pipeline::detail {

/// Owns the tuner and the window it judges (the consumer's thread), and the log of the changes
/// the loader applied (read from any thread).
class TuningWindow {
 public:
  TuningWindow(const TunerLimits& limits, unsigned workers, unsigned prefetch);

  /// At a delivery of a batch of `epoch`, with `fresh_batches` fresh batches delivered so far,
  /// the stage `counters` and the time `now_ns`: judges the window that ends here once it is
  /// long enough, and returns the tuner's change (timed `now_ns`), if any. Consumer thread.
  std::optional<TuningChange> observe(std::uint64_t epoch, std::uint64_t fresh_batches,
                                      const StageCounters& counters, std::int64_t now_ns);
  /// Logs `change` once the loader applied it.
  void record(TuningChange change);
  /// The changes applied so far. Any thread.
  [[nodiscard]] std::vector<TuningChange> log() const;

 private:
  Tuner tuner_;
  // The window being judged: its start.
  std::uint64_t batches_ = 0;  // fresh batches at the window's start
  std::uint64_t epoch_ = 0;    // the epoch it started in
  std::int64_t start_ns_ = 0;
  std::int64_t wait_ns_ = 0;
  std::array<std::int64_t, kStageCount> busy_ns_{};

  mutable std::mutex log_mutex_;
  std::vector<TuningChange> log_;
};

}  // namespace gpufeed::pipeline::detail
