#include "tuner.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace gpufeed::pipeline::detail {

namespace {

constexpr double kWaitHigh = 0.03;    ///< the consumer waits: the loader is too slow
constexpr double kWaitStarved = 0.5;  ///< it waits most of the time: far too few workers
constexpr double kWaitLow = 0.005;    ///< the consumer never waits
constexpr double kBusyHigh = 0.6;     ///< each worker busy: more workers help
constexpr double kBusyLow = 0.3;      ///< each worker mostly idle: fewer would do
constexpr double kGain = 0.05;        ///< a raise is kept when it delivers this much faster

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100.0 * share);
  return text;
}

std::string per_second(double batches_per_ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", batches_per_ns * 1e9);
  return text;
}

}  // namespace

Tuner::Tuner(const TunerLimits& limits, unsigned workers, unsigned prefetch)
    : budget_(limits),
      limits_(limits),
      workers_(std::max(1u, workers)),
      prefetch_(std::max(1u, prefetch)) {}

std::uint64_t Tuner::window_batches() const noexcept {
  return std::max<std::uint64_t>(8, 2 * std::uint64_t{prefetch_});
}

TuningChange Tuner::change(Knob knob, unsigned to, Stage stage, std::string why) {
  unsigned& value = knob == Knob::workers ? workers_ : prefetch_;
  TuningChange c{0, knob, value, to, stage, std::move(why)};
  lowered_ = knob == Knob::workers && to < value;
  value = to;
  settle_ = true;
  return c;
}

TuningChange Tuner::raise(Knob knob, unsigned to, Stage stage, std::string why, double rate) {
  trial_ = Trial{knob, knob == Knob::workers ? workers_ : prefetch_, rate};
  return change(knob, to, stage, std::move(why));
}

std::optional<TuningChange> Tuner::observe(const TunerWindow& w) {
  if (w.wall_ns <= 0) return std::nullopt;
  if (std::exchange(settle_, false)) return std::nullopt;
  const double wall = static_cast<double>(w.wall_ns);
  const double rate = static_cast<double>(w.batches) / wall;
  if (const std::optional<Trial> t = std::exchange(trial_, std::nullopt)) {
    if (rate < t->rate * (1 + kGain)) {
      // No faster: back to the old value, which stays the ceiling from now on.
      (t->knob == Knob::workers ? limits_.max_workers : limits_.max_prefetch) = t->from;
      const unsigned tried = t->knob == Knob::workers ? workers_ : prefetch_;
      TuningChange undo =
          change(t->knob, t->from, w.busiest.value_or(Stage::read),
                 "batches/s " + per_second(t->rate) + " before, " + per_second(rate) + " with " +
                     std::to_string(tried) + ": no faster, so back");
      lowered_ = false;  // an undone raise, not a worker taken away
      return undo;
    }
    // It paid: the other knob may pay again now.
    if (t->knob == Knob::workers) {
      limits_.max_prefetch = budget_.max_prefetch;
    } else {
      limits_.max_workers = budget_.max_workers;
    }
  }
  const double wait = static_cast<double>(w.wait_ns) / wall;
  const double busy = static_cast<double>(w.loader_busy_ns) / (wall * workers_);
  const Stage stage = w.busiest.value_or(Stage::read);
  const std::string seen =
      "the consumer waited " + percent(wait) + " of the window, workers " + percent(busy) + " busy";
  if (wait >= kWaitHigh) {
    if (limits_.workers && lowered_) {
      floor_ = workers_ + 1;  // one worker fewer was too few
      return change(Knob::workers, workers_ + 1, stage, seen + ": the worker taken away is back");
    }
    if (limits_.workers && busy >= kBusyHigh && workers_ < limits_.max_workers) {
      const unsigned more = wait >= kWaitStarved ? workers_ : std::max(1u, workers_ / 2);
      const unsigned to = std::min(limits_.max_workers, workers_ + more);
      return raise(Knob::workers, to, stage, seen + ": \"" + stage_name(stage) + "\" needs threads",
                   rate);
    }
    if (limits_.prefetch && prefetch_ < limits_.max_prefetch) {
      const unsigned to = std::min(limits_.max_prefetch, 2 * prefetch_);
      return raise(Knob::prefetch, to, stage, seen + ": a deeper queue absorbs bursts", rate);
    }
    lowered_ = false;
    return std::nullopt;
  }
  lowered_ = false;
  if (limits_.workers && wait < kWaitLow && busy < kBusyLow && workers_ > floor_) {
    return change(Knob::workers, workers_ - 1, stage, seen + ": a core goes back to the trainer");
  }
  return std::nullopt;
}

}  // namespace gpufeed::pipeline::detail
