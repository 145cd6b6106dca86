#pragma once
// Synthetic training loops with known answers: a consumer thread alternating "wait" and "step"
// and loader threads cycling through pipeline stages, with injected stalls and syncs; and gap
// reports made by hand from busy and idle times.
#include <cstdint>
#include <string>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler::testing {

inline constexpr std::uint64_t kConsumer = 1;
inline constexpr std::uint64_t kLoaders[] = {101, 102};
inline constexpr std::int64_t kMs = 1'000'000;

struct LoopSpec {
  int steps = 60;
  std::int64_t step_ns = 10 * kMs;
  std::int64_t base_wait_ns = kMs / 10;  ///< wait before every step when nothing is injected
  int stall_every = 0;                   ///< inject an input stall before every k-th step
  std::int64_t stall_ns = 20 * kMs;
  std::string stall_stage = "read";  ///< the stage that runs long during the stall
  int sync_every = 0;                ///< a host sync after every k-th step
  std::int64_t sync_ns = 5 * kMs;
};

struct LoopTruth {
  std::int64_t injected_stall_ns = 0;  ///< inside the steady-state window (warm-up excluded)
  std::int64_t injected_sync_ns = 0;
};

/// Loader threads repeat read 1 ms, decode 2 ms, assemble 1 ms; during a stall they sit in the
/// stalled stage. `truth` counts what was injected after the first `warmup_steps` steps.
inline Timeline training_loop(const LoopSpec& spec, LoopTruth* truth = nullptr,
                              int warmup_steps = 5) {
  Timeline t;
  auto loaders_busy = [&](std::int64_t from, std::int64_t to, const std::string* only) {
    const char* cycle[] = {"read", "decode", "decode", "assemble"};
    for (std::uint64_t tid : kLoaders) {
      for (std::int64_t at = from, k = 0; at < to; at += kMs, ++k) {
        const std::string name = only != nullptr ? *only : cycle[k % 4];
        t.host.push_back({name, at, std::min(at + kMs, to), tid, kNoArg, 0, {}});
      }
    }
  };
  std::int64_t now = 1'000 * kMs;
  for (int i = 0; i < spec.steps; ++i) {
    const bool stall = spec.stall_every > 0 && i % spec.stall_every == spec.stall_every - 1;
    const std::int64_t wait = stall ? spec.stall_ns : spec.base_wait_ns;
    t.host.push_back({"wait", now, now + wait, kConsumer, i, 0, {}});
    loaders_busy(now, now + wait, stall ? &spec.stall_stage : nullptr);
    if (truth != nullptr && stall && i > warmup_steps) truth->injected_stall_ns += wait;
    now += wait;
    t.host.push_back({"step", now, now + spec.step_ns, kConsumer, i, 0, {}});
    loaders_busy(now, now + spec.step_ns, nullptr);
    now += spec.step_ns;
    if (spec.sync_every > 0 && i % spec.sync_every == spec.sync_every - 1 && i + 1 < spec.steps) {
      t.host.push_back({"sync", now, now + spec.sync_ns, kConsumer, i, 0, "cudaStreamSynchronize"});
      if (truth != nullptr && i >= warmup_steps) truth->injected_sync_ns += spec.sync_ns;
      now += spec.sync_ns;
    }
  }
  t.normalize();
  return t;
}

/// A report of a window of busy, input_wait and other idle time, its verdict from the share
/// of input_wait.
inline GapReport report_with(std::int64_t busy, std::int64_t input_wait, std::int64_t other) {
  GapReport r;
  r.window_begin_ns = 0;
  r.window_end_ns = busy + input_wait + other;
  r.busy_ns = busy;
  r.device_util = static_cast<double>(busy) / static_cast<double>(r.window_end_ns);
  r.idle_ns[GapCause::input_wait] = input_wait;
  r.idle_ns[GapCause::other] = other;
  r.idle_by_cause[0] = static_cast<double>(input_wait) / static_cast<double>(r.window_end_ns);
  r.input_bound_share = r.idle_by_cause[0];
  r.verdict = input_bound_verdict(r.input_bound_share);
  return r;
}

/// A recommendation as gpufeed::diagnosis adds it after the analysis: plain data the reports
/// show (the profiler itself does not advise).
inline void add_advice(GapReport& report) {
  report.recommendations.push_back({"echo",
                                    {Setting::of(Knob::echo, 2)},
                                    "",
                                    "the device waits for input a third of the time",
                                    "device utilization 66.7% -> 100.0%",
                                    1.0});
}

}  // namespace gpufeed::profiler::testing
