// Attribution accuracy on the CPU: a real Loader with an injected stall feeds a consumer whose
// "training step" is CPU work marked like pipebench's training stage; the profiler must blame
// the idle time on input_wait and the stalled stage (and a forced sync on host_sync).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/range.hpp"
#include "gpufeed/profiler/recorder.hpp"
#include "gpufeed/profiler/timeline.hpp"
#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"
#include "test_hooks.hpp"

namespace gpufeed::testing {
namespace {

using profiler::GapCause;
using profiler::GapReport;
using profiler::now_ns;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint64_t kSteps = 40;

Counter deliveries;
void count_delivery() {
  deliveries.add();
}

/// Burns CPU for `ns`: the stand-in for a training step's compute.
void spin_for(std::int64_t ns) {
  const std::int64_t end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

struct Consumer {
  std::int64_t step_ns = 5 * kMs;
  /// Each step also lasts until the loader has the next batch ready, however slowly a busy
  /// machine runs the workers: the loader keeps up by construction.
  bool until_next_ready = false;
  std::int64_t sync_ns = 0;  ///< a forced host sync after every `sync_every`-th step
  std::uint64_t sync_every = 0;
};

struct Outcome {
  GapReport report;
  profiler::Timeline timeline;
};

/// Sum of the named host ranges inside the report's window.
std::int64_t ranges_in_window(const Outcome& o, const char* name) {
  std::int64_t total = 0;
  for (const profiler::HostRange& r : o.timeline.host) {
    if (r.name != name) continue;
    const std::int64_t b = std::max(r.begin_ns, o.report.window_begin_ns);
    const std::int64_t e = std::min(r.end_ns, o.report.window_end_ns);
    total += std::max<std::int64_t>(0, e - b);
  }
  return total;
}

double share_during_wait(const GapReport& r, const std::string& stage) {
  for (const profiler::StageShare& s : r.stages) {
    if (s.name == stage) return s.share_during_wait;
  }
  return 0;
}

/// 1024 samples of 16x16x3, 32 per chunk: small enough that only injected stalls matter.
class StallAttribution : public SharedDataset<StallAttribution> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    return h5pack_synthetic(dir.file("stall.h5"), "1024:16x16x3", 32);
  }

 protected:
  static Outcome run(const std::optional<std::string>& stall, const Consumer& consumer) {
    LoaderOptions o;
    o.source.path = data_;
    o.sampling.batch_size = 16;
    o.resources.workers = 1;
    o.sampling.order = Order::sequential;
    const testing::StallOverride injected(
        stall ? std::optional(StallInjection::parse(*stall, "--inject-stall")) : std::nullopt);
    std::optional<ScopedHook> hook;
    if (consumer.until_next_ready)
      hook.emplace(pipeline::detail::test_hooks.delivered, count_delivery);
    deliveries.reset();
    Loader loader(o);
    profiler::Recorder& recorder = profiler::Recorder::global();
    recorder.set_enabled(true);
    recorder.clear();
    loader.start_epoch(0);
    for (std::uint64_t i = 0; i < kSteps; ++i) {
      Batch batch = loader.next();
      EXPECT_TRUE(batch);
      if (!batch) break;
      {
        GPUFEED_RANGE_ARG("step", i);
        spin_for(consumer.step_ns);
        if (consumer.until_next_ready) {
          EXPECT_TRUE(deliveries.wait_for(i + 2));
        }
      }
      if (consumer.sync_every != 0 && (i + 1) % consumer.sync_every == 0) {
        GPUFEED_RANGE("sync");
        spin_for(consumer.sync_ns);
      }
      batch.release();
    }
    Outcome out;
    out.timeline = profiler::timeline_from(recorder.snapshot());
    profiler::PipelineFacts facts;
    facts.workers = 1;
    out.report = profiler::analyze(out.timeline, profiler::AnalysisOptions{}, facts);
    return out;
  }

  /// The stalled stage makes the device idle; >= 95% of that idle time must be input_wait,
  /// and the stage must be named. Stalls of 40 ms against 2 ms steps: input-bound even when a
  /// busy machine stretches the steps.
  static void expect_attributed(const std::string& stall, const std::string& stage) {
    Consumer c;
    c.step_ns = 2 * kMs;
    const Outcome o = run(stall, c);
    const GapReport& r = o.report;
    const std::int64_t idle = r.idle_ns.total();
    const std::int64_t input_wait = r.idle_ns[GapCause::input_wait];
    ASSERT_GT(r.steps, 25u);
    // About 38 ms of idleness per step.
    EXPECT_GT(idle, static_cast<std::int64_t>(r.steps) * 20 * kMs);
    const double share = static_cast<double>(input_wait) / static_cast<double>(idle);
    const double of_waits =
        static_cast<double>(input_wait) / static_cast<double>(r.consumer_wait_ns);
    std::printf(
        "[ %s ] idle %.1f ms, input_wait %.1f ms (%.2f%% of idle, %.2f%% of the "
        "consumer's waits), %s share during waits %.3f, util %.3f, bottleneck %s\n",
        stall.c_str(), static_cast<double>(idle) / kMs, static_cast<double>(input_wait) / kMs,
        100 * share, 100 * of_waits, stage.c_str(), share_during_wait(r, stage), r.device_util,
        r.bottleneck_stage.c_str());
    EXPECT_GE(share, 0.95);
    EXPECT_GE(of_waits, 0.95);
    EXPECT_EQ(r.bottleneck_stage, stage);
    EXPECT_EQ(r.bottleneck_basis, "input_wait");
    EXPECT_GE(share_during_wait(r, stage), 0.95)
        << "one worker, in " << stage << " while waited on";
    EXPECT_EQ(r.verdict, profiler::Verdict::highly_input_bound);
  }
};

TEST_F(StallAttribution, ReadStallIsInputWaitInRead) {
  expect_attributed("read:40@1", "read");
}

TEST_F(StallAttribution, NormalizeStallIsInputWaitInNormalize) {
  expect_attributed("normalize:40@1", "normalize");
}

TEST_F(StallAttribution, WithoutStallsInputWaitIsSmall) {
  Consumer c;
  c.until_next_ready = true;
  const Outcome o = run(std::nullopt, c);
  const GapReport& r = o.report;
  std::printf("[ control ] util %.3f, input_wait %.2f%%\n", r.device_util,
              100 * r.idle_share(GapCause::input_wait));
  EXPECT_LT(r.idle_share(GapCause::input_wait), 0.05);
  EXPECT_EQ(r.verdict, profiler::Verdict::not_input_bound);
  EXPECT_GT(r.device_util, 0.9);
}

TEST_F(StallAttribution, ForcedSyncIsHostSync) {
  Consumer c;
  c.step_ns = 4 * kMs;
  c.sync_ns = 3 * kMs;
  c.sync_every = 2;
  const Outcome o = run(std::nullopt, c);
  const GapReport& r = o.report;
  const std::int64_t injected = ranges_in_window(o, "sync");
  const std::int64_t host_sync = r.idle_ns[GapCause::host_sync];
  std::printf("[ sync ] injected %.1f ms, host_sync %.1f ms (%.2f%%), idle %.1f ms\n",
              static_cast<double>(injected) / kMs, static_cast<double>(host_sync) / kMs,
              100.0 * static_cast<double>(host_sync) / static_cast<double>(injected),
              static_cast<double>(r.idle_ns.total()) / kMs);
  ASSERT_GT(injected, 30 * kMs);
  EXPECT_GE(static_cast<double>(host_sync), 0.95 * static_cast<double>(injected));
  EXPECT_LE(static_cast<double>(host_sync), 1.05 * static_cast<double>(injected));
  EXPECT_EQ(r.idle_ns.largest(), GapCause::host_sync);
  EXPECT_EQ(r.verdict, profiler::Verdict::not_input_bound);
}

}  // namespace
}  // namespace gpufeed::testing
