// decode=auto's split on simulated rates: the engines first, the workers only for what the
// engines cannot keep up with, never past the share at which the workers become the bottleneck.
#include "decode_split.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace gpufeed::pipeline::detail {
namespace {

constexpr std::uint32_t kBatch = 256;

/// A split fed `batches` batches of: engines at `engine_us` per image on one lane, the workers
/// at `cpu_us` per image each, the consumer stepping at `step_us` per image after waiting
/// `wait_us` per image.
std::unique_ptr<DecodeSplit> simulated(double engine_us, double cpu_us, double step_us,
                                       double wait_us = 0, int batches = 16) {
  auto split_owner = std::make_unique<DecodeSplit>();
  DecodeSplit& split = *split_owner;
  for (int i = 0; i < batches; ++i) {
    split.record_engines(kBatch, static_cast<std::int64_t>(engine_us * 1e3 * kBatch), 1);
    if (cpu_us > 0) split.record_cpu(kBatch, static_cast<std::int64_t>(cpu_us * 1e3 * kBatch));
    const double interval = (step_us + wait_us) * 1e3 * kBatch;
    split.record_consumer(kBatch, static_cast<std::int64_t>(interval),
                          static_cast<std::int64_t>(wait_us * 1e3 * kBatch));
  }
  return split_owner;
}

TEST(DecodeSplit, NothingForTheCpuBeforeAnythingIsMeasured) {
  DecodeSplit split;
  EXPECT_EQ(split.cpu_share(kBatch, 16), 0u);
  split.record_engines(kBatch, 1'000'000, 1);  // engines measured, the consumer not yet
  EXPECT_EQ(split.cpu_share(kBatch, 16), 0u);
}

TEST(DecodeSplit, EnginesThatKeepUpTakeEverything) {
  // 25,000 images/s of engines for a model that takes 13,000/s (an H200 and resnet18).
  EXPECT_EQ(simulated(40, 1800, 77)->cpu_share(kBatch, 16), 0u);
  // A consumer that waits is still judged by its own step time, not by the wait.
  EXPECT_EQ(simulated(40, 1800, 77, 200)->cpu_share(kBatch, 16), 0u);
}

TEST(DecodeSplit, WorkersTakeOnlyTheEnginesShortfall) {
  // Engines at 10,000/s, the consumer at 20,000/s: the engines keep up with 45% of the images
  // (a 0.9 headroom); 32 workers at 600/s each could take up to 66%, and take 55%.
  const std::uint32_t share = simulated(100, 1667, 50)->cpu_share(kBatch, 32);
  EXPECT_NEAR(share, kBatch * (1.0 - 0.9 * 50 / 100), 2);
}

TEST(DecodeSplit, NeverPastTheShareAtWhichTheWorkersAreTheBottleneck) {
  // Engines at 10,000/s, two workers at 500/s each, a consumer that would take 100,000/s: the
  // best either side can do is finish together, 1,000 / 11,000 of the images on the CPU.
  const std::uint32_t share = simulated(100, 2000, 10)->cpu_share(kBatch, 2);
  EXPECT_NEAR(share, kBatch * 1000.0 / 11000.0, 1);
  // More workers, a larger share.
  EXPECT_GT(simulated(100, 2000, 10)->cpu_share(kBatch, 8), share);
}

TEST(DecodeSplit, SlowBatchesOfTheEnginesCountNotTheirMean) {
  // 14 batches at 40 us an image and 2 at 120: the mean (50) keeps up with a 60 us consumer,
  // the 90th percentile does not.
  const std::unique_ptr<DecodeSplit> split = simulated(40, 1000, 60, 0, 14);
  EXPECT_EQ(split->cpu_share(kBatch, 16), 0u);
  for (int i = 0; i < 2; ++i) split->record_engines(kBatch, 120'000 * kBatch, 1);
  EXPECT_GT(split->cpu_share(kBatch, 16), 0u);
}

TEST(DecodeSplit, OverlappingLanesShareTheEnginesTime) {
  // Two lanes each taking 80 us an image at once are 40 us an image of engines.
  DecodeSplit split;
  for (int i = 0; i < 16; ++i) {
    split.record_engines(kBatch, 80'000 * kBatch, 2);
    split.record_consumer(kBatch, 60'000 * kBatch, 0);
  }
  EXPECT_DOUBLE_EQ(split.rates().engine_ns, 40'000);
  EXPECT_EQ(split.cpu_share(kBatch, 16), 0u);
}

}  // namespace
}  // namespace gpufeed::pipeline::detail
