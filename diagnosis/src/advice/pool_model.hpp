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
  double others = 0;      ///< of them, kept busy by the machine's other processes
  double period_now = 0;  ///< today's period of a step, waits included
  double wait_now = 0;    ///< today's wait for input a step
  double warm = 0;        ///< a step's busy time with no wait before it (0: not measured)
  /// The input's work on the loop's own thread between two steps (a Loader's transform ops on
  /// each delivered batch): the loop cannot take a step more often than q + serial.
  double serial = 0;
  /// A step whose CPU time is at most this many cores runs on one thread (a little over 1:
  /// the process's other threads, the profile's own).
  static constexpr double kOneThread = 1.2;

  /// The loop when `n` suppliers make batches that cost `cost` core-ns each: the period of a
  /// step and the step's own busy time.
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
      return {std::max({q + serial, cost / k, (cost + step_cores * q) / free_cores()}), b};
    }
    Point p{std::max(q + serial, cost / k), b};
    if (step_cores <= 0 || cores <= 0) return p;
    // A step of several threads (torch's intra-op pool) runs at the pace of its slowest
    // thread: the suppliers' core-time that the cores it leaves idle cannot take (cores -
    // step_cores while it runs, all but the loop's own thread between steps) takes a core from
    // one of its threads, and the others wait for that one at their next barrier. The step
    // grows by that whole time, not by a fair share of it (pytorch/examples' imagenet main.py
    // on 2 cores, a step of 1.97 cores: 173 ms beside no loading, 231 ms beside 72 core-ms of
    // decoding a step, where a fair share said 206). A fixed point, damped: the time between
    // steps, where the suppliers run free, depends on the step.
    const double base = std::max(b - displaced(workers == 0 ? 0.0 : c, period_now, b), 0.5 * b);
    for (int i = 0; i < 64; ++i) {
      p.busy = 0.5 * p.busy + 0.5 * (base + displaced(cost, p.period, p.busy));
      p.period = std::max(q - b + p.busy + serial, cost / k);
    }
    return p;
  }
  /// The cores the loop and its input share: those the machine's other processes leave, at
  /// least one.
  [[nodiscard]] double free_cores() const { return std::max(1.0, cores - others); }
  /// The suppliers' core-time a step of `busy` ns in a period of `period` ns takes from the
  /// step's threads: `cost` less what the cores the step leaves idle take.
  [[nodiscard]] double displaced(double cost, double period, double busy) const {
    const double idle_beside = std::max(0.0, free_cores() - step_cores) * busy;
    const double between = std::max(0.0, free_cores() - 1) * std::max(0.0, period - busy);
    return std::max(0.0, cost - idle_beside - between);
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
  /// The run's time outside its steps' periods (its start, evaluation, checkpoints: what the
  /// advice does not change), its samples and its batches; outside < 0: the run's wall is not
  /// known (a trace), the figures are the steps' alone.
  double outside = -1;
  double run_samples = 0;
  double run_batches = 0;
  /// Samples a second the loop takes at a step period of `period` ns, over the whole run where
  /// its wall is known (today's at period_now: the run's own figure); -1: a batch's samples
  /// are not known.
  [[nodiscard]] double samples_per_s(double period) const {
    if (outside >= 0 && run_samples > 0) {
      return run_samples * 1e9 / std::max(outside + run_batches * period, 1.0);
    }
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
