// Ranks of a data-parallel job compared: the straggler, its cause and what it cost the others,
// on synthetic timelines with known answers.
#include "gpufeed/profiler/job_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

using ::testing::HasSubstr;
using testing::kMs;

/// One rank of a synchronous job: each iteration waits `wait` for input (loader threads in
/// `stage` meanwhile), syncs `sync`, computes `compute`, then sits in the all-reduce until
/// the iteration's common end `period` (the slowest rank's own time plus `comm`).
Timeline rank_loop(int rank, int steps, std::int64_t period, std::int64_t wait,
                   std::int64_t compute, std::int64_t sync, bool collectives,
                   const std::string& stage = "read") {
  Timeline t;
  t.rank = rank;
  t.world_size = 2;
  std::int64_t start = 1'000 * kMs;
  for (int i = 0; i < steps; ++i, start += period) {
    std::int64_t now = start;
    t.host.push_back({"wait", now, now + wait, 1, i, 0, {}});
    t.host.push_back({stage, now, now + wait, 7, kNoArg, 0, {}});
    now += wait;
    const std::int64_t step_end = start + period;
    t.host.push_back({"step", now, step_end, 1, i, 0, {}});
    now += compute;
    if (sync > 0) {
      t.host.push_back({"sync", now, now + sync, 1, i, 0, "cudaStreamSynchronize"});
      now += sync;
    }
    if (collectives) t.host.push_back({"collective", now, step_end, 9, i, 0, "allreduce"});
  }
  t.normalize();
  return t;
}

TEST(JobReport, NamesTheRankWhoseInputIsLateAndWhatTheOthersLost) {
  // Rank 1 waits 30 ms a step for its read stage; both compute 10 ms, the all-reduce 1 ms.
  const std::int64_t period = 41 * kMs;
  const JobReport job = analyze_job({rank_loop(0, 60, period, 0, 10 * kMs, 0, true),
                                     rank_loop(1, 60, period, 30 * kMs, 10 * kMs, 0, true)});
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_NEAR(job.ranks[0].collective_ms, 31.0, 0.01);
  EXPECT_NEAR(job.ranks[1].collective_ms, 1.0, 0.01);
  EXPECT_NEAR(job.ranks[1].input_wait_ms, 30.0, 0.01);
  const Straggler& s = job.straggler;
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.cause, "input");
  EXPECT_EQ(s.stage, "read");
  EXPECT_EQ(s.basis, "collectives");
  // 30 ms a step over the window's steps of rank 0.
  EXPECT_NEAR(s.lost_s, 0.030 * static_cast<double>(job.ranks[0].steps), 1e-6);
  EXPECT_THAT(s.explanation, HasSubstr("rank 1 waits for its input (\"read\") 30.0 ms"));
  const auto j = nlohmann::json::parse(job_json(job));
  EXPECT_EQ(j["straggler"]["rank"], 1);
  EXPECT_EQ(j["straggler"]["stage"], "read");
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_THAT(format_job(job), HasSubstr("straggler   rank 1"));
}

TEST(JobReport, HostSyncsAndComputeAreCausesToo) {
  const std::int64_t period = 30 * kMs;
  const JobReport syncs = analyze_job({rank_loop(0, 60, period, 0, 10 * kMs, 0, true),
                                       rank_loop(1, 60, period, 0, 10 * kMs, 15 * kMs, true)});
  EXPECT_EQ(syncs.straggler.rank, 1);
  EXPECT_EQ(syncs.straggler.cause, "host_sync");
  const JobReport compute = analyze_job({rank_loop(0, 60, period, 0, 25 * kMs, 0, true),
                                         rank_loop(1, 60, period, 0, 10 * kMs, 0, true)});
  EXPECT_EQ(compute.straggler.rank, 0);
  EXPECT_EQ(compute.straggler.cause, "compute");
  EXPECT_TRUE(compute.straggler.stage.empty());
}

TEST(JobReport, AStragglerLateForNoMeasuredReasonHasAnUnknownCause) {
  // Rank 1 spends 30 ms a step on host work that is neither a step nor a wait for input.
  const std::int64_t period = 41 * kMs;
  Timeline late = rank_loop(1, 60, period, 30 * kMs, 10 * kMs, 0, true);
  for (HostRange& r : late.host) {
    if (r.name == "wait" || r.name == "read") r.name = "python";
  }
  const JobReport job = analyze_job({rank_loop(0, 60, period, 0, 10 * kMs, 0, true), late});
  EXPECT_EQ(job.straggler.rank, 1);
  EXPECT_EQ(job.straggler.cause, "unknown");
  EXPECT_TRUE(job.straggler.stage.empty());
  EXPECT_THAT(job.straggler.explanation,
              HasSubstr("no longer than the other ranks; 30.0 ms a step is outside its steps"));
}

TEST(JobReport, WithoutCollectivesTheLossIsEstimatedFromStepTimes) {
  // No collective ranges: rank 0's steps hold its wait for rank 1 (25 ms longer).
  const std::int64_t period = 40 * kMs;
  const JobReport job = analyze_job({rank_loop(0, 60, period, 0, 10 * kMs, 0, false),
                                     rank_loop(1, 60, period, 25 * kMs, 10 * kMs, 0, false)});
  EXPECT_EQ(job.straggler.rank, 1);
  EXPECT_EQ(job.straggler.basis, "step times");
  EXPECT_EQ(job.straggler.cause, "input");
  EXPECT_NEAR(job.straggler.lost_s, 0.025 * static_cast<double>(job.ranks[0].steps), 1e-6);
}

TEST(JobReport, RanksInStepHaveNoStraggler) {
  const std::int64_t period = 12 * kMs;
  const JobReport job = analyze_job({rank_loop(0, 60, period, kMs / 10, 10 * kMs, 0, true),
                                     rank_loop(1, 60, period, kMs / 20, 10 * kMs, 0, true)});
  EXPECT_EQ(job.straggler.rank, -1);
  EXPECT_THAT(job.straggler.explanation, HasSubstr("no rank holds the others back"));
  EXPECT_TRUE(nlohmann::json::parse(job_json(job))["straggler"].is_null());
}

TEST(JobReport, OddInputGivesWarningsNotErrors) {
  const JobReport one = analyze_job({rank_loop(0, 60, 12 * kMs, 0, 10 * kMs, 0, true)});
  EXPECT_EQ(one.straggler.rank, -1);
  Timeline empty;
  const JobReport bad = analyze_job({empty, empty});
  EXPECT_EQ(bad.straggler.rank, -1);
  EXPECT_FALSE(bad.warnings.empty());
  // Two traces claiming the same rank.
  const JobReport twice = analyze_job({rank_loop(1, 60, 12 * kMs, 0, 10 * kMs, 0, true),
                                       rank_loop(1, 60, 12 * kMs, 0, 10 * kMs, 0, true)});
  EXPECT_THAT(twice.warnings.front(), HasSubstr("two traces are rank 1"));
}

}  // namespace
}  // namespace gpufeed::profiler
