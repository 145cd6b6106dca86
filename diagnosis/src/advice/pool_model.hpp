#pragma once
// The model behind a DataLoader pool's advice: the loop's period and a step's busy time when
// n workers (or gpufeed's threads) make its batches on the cores the step leaves them.
#include <algorithm>
#include <optional>

#include "advice/rules.hpp"

namespace gpufeed::diagnosis::detail {

/// A DataLoader's worker pool against the loop it feeds, per step: the step's work `b`, its
/// period without waits `q`, what a batch costs one worker `c` (its items and collate), and
/// the workers that would keep up (`needed`) against those the cores beside the training
/// process can run (`room`: every core but the loop's own).
struct PoolModel {
  double b = 0, q = 0, c = 0, collate = 0;
  double samples = 0;  ///< a batch's; 0: unknown (a trace)
  unsigned room = 1, needed = 1;
  unsigned workers = 0;   ///< today's
  double step_cores = 0;  ///< cores a CPU step keeps busy (0: a device step)
  double cores = 0;       ///< cores there are (0: unknown)
  double period_now = 0;  ///< today's period of a step, waits included
  double wait_now = 0;    ///< today's wait for input a step
  double warm = 0;        ///< a step's busy time with no wait before it (0: not measured)
  /// The input's work on the loop's own thread between two steps (a Loader's transform ops on
  /// each delivered batch): the loop cannot take a step more often than q + serial.
  double serial = 0;
  /// A step whose CPU time is at most this many cores runs on one thread (a little over 1:
  /// the process's other threads, the profile's own).
  static constexpr double kOneThread = 1.2;

  /// What a CPU step's time is multiplied by when `busy` worker cores run beside it: the
  /// share of the cores it lacks.
  [[nodiscard]] double crowding(double busy) const {
    if (step_cores <= 0 || cores <= 0) return 1.0;
    return std::max(1.0, (step_cores + busy) / cores);
  }
  /// Today's: each worker busy making its batches (no workers: the loop loads between steps).
  [[nodiscard]] double crowding_now() const {
    return crowding(workers == 0 ? 0.0 : std::min<double>(workers, c / std::max(period_now, 1.0)));
  }
  /// The loop when `n` suppliers make batches that cost `cost` core-ns each: the period of a
  /// step and the step's own busy time. Where a CPU step of several threads (torch's intra-op
  /// pool) and the workers want more cores than there are, both run slower by the crowding (a
  /// fixed point, damped: the workers' load depends on the period it sets): a parallel step
  /// waits for its slowest thread.
  struct Point {
    double period = 0;
    double busy = 0;
  };
  [[nodiscard]] Point at(unsigned n, double cost) const {
    const double k = std::max(n, 1u);
    if (step_cores > 0 && step_cores <= kOneThread && cores > 0) {
      // A step on one thread keeps its core (the scheduler runs the thread that slept through
      // its wait for input first) and runs as fast as today; the suppliers get the core-time
      // the loop leaves them: cores * period >= cost + the loop's own core-time.
      return {std::max({q + serial, cost / k, (cost + step_cores * q) / cores}), b};
    }
    double slow = 1.0;
    Point p{std::max(q + serial, cost / k), b};
    for (int i = 0; i < 64; ++i) {
      const double working = std::min(k, cost * slow / std::max(p.period, 1.0));
      slow = 0.5 * slow + 0.5 * crowding(working) / crowding_now();
      p.busy = b * slow;
      p.period = std::max((q + serial) * slow, cost * slow / k);
    }
    return p;
  }
  /// at(), with the step as long as it would be after that point's wait for input. A step
  /// after a wait runs on cold caches (a halted core, the loading's data in them): today's step
  /// `b` follows today's wait, the probe's `warm` none; in between, the step is taken to grow
  /// linearly with the wait before it (measured on a CPU step: 0.88 ms back to back, 0.95 after
  /// 0.5 ms, 1.10 after 2 ms, 1.77 after 10 ms). The point's wait depends on its step: a few
  /// rounds of a fixed point.
  [[nodiscard]] Point after(unsigned n, double cost) const {
    if (warm <= 0 || warm >= b || wait_now <= 0) return at(n, cost);
    PoolModel then = *this;
    Point p = at(n, cost);
    for (int i = 0; i < 16; ++i) {
      const double wait = std::max(0.0, p.period - then.q);
      const double step = warm + (b - warm) * std::min(1.0, wait / wait_now);
      then.q = q - b + step;
      then.b = step;
      p = then.at(n, cost);
    }
    return p;
  }
  [[nodiscard]] static double util(const Point& p) {
    return std::min(1.0, p.busy / std::max(p.period, 1.0));
  }
  /// Samples a second the loop takes at a step period of `period` ns; today's at period_now.
  [[nodiscard]] double samples_per_s(double period) const {
    return samples > 0 ? samples * 1e9 / std::max(period, 1.0) : -1;
  }
  /// The samples a second `n` workers make.
  [[nodiscard]] double rate(unsigned n) const { return std::max(n, 1u) * samples * 1e9 / c; }
};

/// The model of `pool` feeding the loop of `report` on `cores` cores (0: unknown); nullopt where
/// the run is not input-bound or the pool made no batch.
std::optional<PoolModel> pool_model(const GapReport& report, const InputPoolFacts& pool,
                                    unsigned cores);

}  // namespace gpufeed::diagnosis::detail
