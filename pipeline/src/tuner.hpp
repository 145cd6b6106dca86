#pragma once
// workers=auto and prefetch=auto: the decisions, one window of the loader's counters at a time.
// Pure logic (no threads, no clock), so every rule is tested on made-up windows.
#include <cstdint>
#include <optional>
#include <string>

#include "gpufeed/pipeline/stats.hpp"

namespace gpufeed::pipeline::detail {

/// What the tuner reads over one window: differences of the loader's counters.
struct TunerWindow {
  std::int64_t wall_ns = 0;
  std::int64_t wait_ns = 0;         ///< the consumer blocked on the loader
  std::int64_t loader_busy_ns = 0;  ///< the loader's stages, summed over its threads
  std::optional<Stage> busiest;     ///< the loader stage with the most busy time
  std::uint64_t batches = 0;        ///< fresh batches delivered: the throughput
};

/// Which settings the tuner may change, and how far.
struct TunerLimits {
  bool workers = false;       ///< workers=auto
  bool prefetch = false;      ///< prefetch=auto
  unsigned max_workers = 1;   ///< the CPU budget
  unsigned max_prefetch = 1;  ///< the batches the memory budget holds
};

/// Starts small and raises the concurrency of what limits the loader:
///  - the consumer waited (>= 3% of the window) and the workers were busy (>= 60% each): more
///    workers, by half again (twice as many when it waited most of the window), up to the CPU
///    budget;
///  - it waited with workers to spare: a deeper prefetch queue (bursty stages), doubled up to
///    the memory budget;
///  - it never waited (< 0.5%) and the workers idled (< 30% each): one worker fewer, for the
///    trainer's own threads; if the consumer then waits, the worker comes back and the tuner
///    stays at or above that count.
/// After a change it lets one window pass before it judges again. A raise is a trial: when the
/// window after it delivers batches no faster (by 5%) than the window before, the raise is
/// undone and that knob is not raised past its old value again, so a setting that only costs
/// (threads competing with the trainer, slots that no longer fit in the caches) does not stay;
/// until a raise of the other knob pays (more batches in flight can give more threads work).
class Tuner {
 public:
  Tuner(const TunerLimits& limits, unsigned workers, unsigned prefetch);

  /// Fresh batches a window spans before observe() judges it.
  [[nodiscard]] std::uint64_t window_batches() const noexcept;
  /// Judges one window; the change to apply, if any (at most one per window).
  std::optional<TuningChange> observe(const TunerWindow& window);

  [[nodiscard]] unsigned workers() const noexcept { return workers_; }
  [[nodiscard]] unsigned prefetch() const noexcept { return prefetch_; }
  [[nodiscard]] const TunerLimits& limits() const noexcept { return limits_; }

 private:
  TuningChange change(Knob knob, unsigned to, Stage stage, std::string why);
  /// A change that raises `knob`, judged by the throughput of the window after it.
  TuningChange raise(Knob knob, unsigned to, Stage stage, std::string why, double rate);

  /// A raise being judged: the knob, its value before, and the throughput then (batches/ns).
  struct Trial {
    Knob knob = Knob::workers;
    unsigned from = 0;
    double rate = 0;
  };

  const TunerLimits budget_;  ///< the limits given
  TunerLimits limits_;        ///< the budget, lowered where a raise did not pay
  unsigned workers_;
  unsigned prefetch_;
  unsigned floor_ = 1;    ///< fewer workers than this made the consumer wait
  bool lowered_ = false;  ///< the last change took a worker away
  bool settle_ = false;   ///< skip the window after a change
  std::optional<Trial> trial_;
};

}  // namespace gpufeed::pipeline::detail
