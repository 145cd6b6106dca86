// The gap analysis on synthetic timelines whose answers are known by construction.
#include <gtest/gtest.h>

#include "gpufeed/profiler/gap_report.hpp"
#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

using testing::kConsumer;
using testing::kMs;
using testing::LoopSpec;
using testing::LoopTruth;
using testing::training_loop;

TEST(GapReport, InjectedInputStallsAreInputWaitInTheStalledStage) {
  for (const char* stage : {"read", "decode", "assemble"}) {
    LoopSpec spec;
    spec.stall_every = 4;
    spec.stall_stage = stage;
    LoopTruth truth;
    const GapReport r = analyze(training_loop(spec, &truth));
    ASSERT_GT(truth.injected_stall_ns, 0);
    EXPECT_GE(static_cast<double>(r.idle_ns[GapCause::input_wait]),
              0.95 * static_cast<double>(truth.injected_stall_ns))
        << stage;
    EXPECT_EQ(r.bottleneck_stage, stage);
    EXPECT_EQ(r.bottleneck_basis, "input_wait");
    EXPECT_EQ(r.device_timeline, "step ranges");
    EXPECT_EQ(r.idle_ns[GapCause::host_sync], 0);
  }
}

TEST(GapReport, UtilizationAndVerdictMatchTheConstruction) {
  LoopSpec spec;  // every iteration: 5 ms wait, 10 ms step
  spec.base_wait_ns = 5 * kMs;
  const GapReport r = analyze(training_loop(spec));
  // The window starts where step 4 ends, so it holds 55 x (wait + step).
  EXPECT_EQ(r.steps, 55u);
  EXPECT_EQ(r.window_ns(), 55 * 15 * kMs);
  EXPECT_NEAR(r.device_util, 10.0 / 15.0, 1e-9);
  EXPECT_NEAR(r.idle_share(GapCause::input_wait), 5.0 / 15.0, 1e-9);
  EXPECT_EQ(r.verdict, Verdict::highly_input_bound);
  EXPECT_EQ(r.gaps.size(), 55u);
  EXPECT_EQ(r.gap_stats[0].count, 55u);
  EXPECT_EQ(r.gap_stats[0].median_ns, 5 * kMs);
  ASSERT_EQ(r.utilization.size(), 100u);
}

TEST(GapReport, InjectedSyncsAreHostSync) {
  LoopSpec spec;
  spec.sync_every = 3;
  LoopTruth truth;
  const GapReport r = analyze(training_loop(spec, &truth));
  ASSERT_GT(truth.injected_sync_ns, 0);
  EXPECT_GE(static_cast<double>(r.idle_ns[GapCause::host_sync]),
            0.95 * static_cast<double>(truth.injected_sync_ns));
  EXPECT_LE(r.idle_ns[GapCause::host_sync], truth.injected_sync_ns);
  EXPECT_TRUE(r.recommendations.empty());  // advice is gpufeed::diagnosis's
}

TEST(GapReport, WarmUpIsExcluded) {
  LoopSpec spec;
  spec.steps = 20;
  Timeline t = training_loop(spec);
  // A huge first wait (compilation, file open) must not reach the verdict.
  t.host.push_back({"wait", 0, 999 * kMs, kConsumer, kNoArg, 0, {}});
  t.host.push_back({"step", 999 * kMs, 1'000 * kMs - 1, kConsumer, kNoArg, 0, {}});
  t.normalize();
  const GapReport r = analyze(t);
  EXPECT_EQ(r.verdict, Verdict::not_input_bound);  // 0.1 ms of every 10.1 ms
  EXPECT_NEAR(r.input_bound_share, 0.1 / 10.1, 1e-6);
  EXPECT_NE(r.window_basis.find("first 5 steps"), std::string::npos) << r.window_basis;
}

TEST(GapReport, FewStepsFallBackToAFractionOfTheSpan) {
  LoopSpec spec;
  spec.steps = 4;
  AnalysisOptions o;
  o.warmup_fraction = 0.25;
  const GapReport r = analyze(training_loop(spec), o);
  EXPECT_NE(r.window_basis.find("25%"), std::string::npos) << r.window_basis;
  EXPECT_GT(r.window_ns(), 0);
}

TEST(GapReport, GapIsSplitByOverlapWithDeviceRecords) {
  Timeline t;
  // Device: kernels at [0,10) and [30,40); the host waits on input in [10,18), syncs in [18,25),
  // launches in [25,28), nothing recorded in [28,30).
  t.device.push_back({ActivityKind::kernel, 0, 7, 0, 10, 0, 1, false, "k1"});
  t.device.push_back({ActivityKind::kernel, 0, 7, 30, 40, 0, 2, false, "k2"});
  t.host.push_back({"wait", 8, 18, kConsumer, kNoArg, 0, {}});
  t.host.push_back({"sync", 18, 25, kConsumer, kNoArg, 0, "cudaStreamSynchronize"});
  t.host.push_back({"launch", 25, 28, kConsumer, kNoArg, 2, "cudaLaunchKernel"});
  t.normalize();
  AnalysisOptions o;
  o.warmup_steps = 0;
  const GapReport r = analyze(t, o);
  EXPECT_EQ(r.device_timeline, "device activity");
  EXPECT_EQ(r.busy_ns, 20);
  ASSERT_EQ(r.gaps.size(), 1u);
  const Gap& g = r.gaps[0];
  EXPECT_EQ(g.by_cause[GapCause::input_wait], 8);
  EXPECT_EQ(g.by_cause[GapCause::host_sync], 7);
  EXPECT_EQ(g.by_cause[GapCause::launch], 3);
  EXPECT_EQ(g.by_cause[GapCause::other], 2);
  EXPECT_EQ(g.cause, GapCause::input_wait);
  EXPECT_EQ(r.idle_ns.total(), 20);
}

TEST(GapReport, NestedStagesCreditTheInnermostRange) {
  Timeline t;
  t.host.push_back({"step", 0, 10, kConsumer, kNoArg, 0, {}});
  t.host.push_back({"wait", 10, 30, kConsumer, kNoArg, 0, {}});
  t.host.push_back({"step", 30, 40, kConsumer, kNoArg, 0, {}});
  t.host.push_back({"assemble", 5, 35, 101, kNoArg, 0, {}});
  t.host.push_back({"read", 12, 28, 101, kNoArg, 0, {}});  // inside assemble
  t.normalize();
  AnalysisOptions o;
  o.warmup_steps = 0;
  const GapReport r = analyze(t, o);
  EXPECT_EQ(r.bottleneck_stage, "read");
  double read = 0, assemble = 0;
  for (const StageShare& s : r.stages) (s.name == "read" ? read : assemble) = s.share_during_wait;
  EXPECT_NEAR(read, 16.0 / 20.0, 1e-9);
  EXPECT_NEAR(assemble, 4.0 / 20.0, 1e-9);
}

TEST(GapReport, BottleneckFallsBackToPipelineFacts) {
  LoopSpec spec;
  Timeline t = training_loop(spec);
  std::erase_if(t.host, [](const HostRange& h) { return h.thread != kConsumer; });
  PipelineFacts facts;
  facts.stage_busy = {{"decode", 0.95}, {"read", 0.2}};
  const GapReport r = analyze(t, {}, facts);
  EXPECT_EQ(r.bottleneck_stage, "decode");
  EXPECT_EQ(r.bottleneck_basis, "pipeline facts");
}

TEST(GapReport, EmptyOrDeviceLessTimelinesGiveWarningsNotCrashes) {
  const GapReport empty = analyze(Timeline{});
  EXPECT_EQ(empty.window_ns(), 0);
  ASSERT_FALSE(empty.warnings.empty());
  EXPECT_EQ(empty.device_util, 0);
  Timeline hosts_only;
  hosts_only.host.push_back({"decode", 0, 10, 5, kNoArg, 0, {}});
  const GapReport r = analyze(hosts_only);
  EXPECT_FALSE(r.warnings.empty());
  EXPECT_TRUE(r.gaps.empty());
}

}  // namespace
}  // namespace gpufeed::profiler
