// The consumer's side of the contract: bounded waits, and batches released on other threads
// (a tensor freed by an autograd thread or a Python thread).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>
#include <thread>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/in_flight.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr formats::SampleShape kShape{4, 4, 3, formats::Layout::nhwc};
constexpr std::uint64_t kSamples = 96;

class Consumer : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, kSamples, kShape, 8); }

  [[nodiscard]] LoaderOptions options() const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 8;
    o.resources.workers = 2;
    o.resources.prefetch = 1;  // two slots: the one in flight and the consumer's
    o.sampling.order = Order::sequential;
    o.sampling.shard = Shard{};
    return o;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

TEST_F(Consumer, TryNextTimesOutWhileTheBatchIsLateAndThenDelivers) {
  LoaderOptions o = options();
  const testing::StallOverride stall(StallInjection{Stage::read, 300, 1});
  Loader loader(o);
  loader.start_epoch(0);
  int timeouts = 0;
  std::optional<Batch> batch;
  while (!(batch = loader.try_next(20ms))) ++timeouts;
  EXPECT_GE(timeouts, 2) << "a 300 ms stall must outlast several 20 ms waits";
  ASSERT_TRUE(*batch);
  EXPECT_EQ(batch->index(), 0u);
  EXPECT_EQ(loader.stats().mean_ready_batches, 0.0) << "the resumed waits are one request";
}

TEST_F(Consumer, AStalledReadIsSeenInFlightWithItsBatchAndAge) {
  // What the Python profile's stall report reads from another thread while the consumer waits.
  LoaderOptions o = options();
  const testing::StallOverride stall(StallInjection{Stage::read, 1000, 1000});  // batch 0 only
  Loader loader(o);
  loader.start_epoch(0);
  const auto give_up = std::chrono::steady_clock::now() + 900ms;
  std::vector<WorkInFlight> work;
  while ((work = work_in_flight()).empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_FALSE(work.empty()) << "batch 0's read stalls for 1 s";
  std::this_thread::sleep_for(200ms);
  work = work_in_flight();
  ASSERT_FALSE(work.empty());
  const WorkInFlight& read = work.front();  // the oldest: the stalled batch
  EXPECT_EQ(read.stage, "read");
  EXPECT_EQ(read.path, path_);
  EXPECT_EQ(read.batch, 0u);
  EXPECT_EQ(read.epoch, 0u);
  EXPECT_GE(profiler::now_ns() - read.since_ns, 150'000'000) << "its age: since it began";
  std::optional<Batch> batch;
  while (!(batch = loader.try_next(1s))) {
  }
  ASSERT_TRUE(*batch);
  EXPECT_EQ(batch->index(), 0u);
  for (const WorkInFlight& w : work_in_flight()) EXPECT_NE(w.batch, 0u) << "batch 0 is done";
}

TEST_F(Consumer, TryNextReportsTheEndOfTheEpochAsAnEmptyBatch) {
  Loader loader(options());
  loader.start_epoch(0);
  std::uint64_t batches = 0;
  for (;;) {
    std::optional<Batch> b = loader.try_next(1s);
    if (!b) continue;
    if (!*b) break;
    ++batches;
  }
  EXPECT_EQ(batches, loader.batches_per_epoch());
}

TEST_F(Consumer, BatchesReleasedOnAnotherThreadKeepTheEpochGoing) {
  // The consumer asks while every slot is held: one by itself, one by another thread that lets
  // it go a little later, as an autograd thread freeing a tensor does. It must wait, not fail.
  Loader loader(options());
  std::set<std::uint64_t> seen;
  loader.start_epoch(0);
  Batch older = loader.next();
  Batch newer = loader.next();
  for (int i = 0; older; ++i) {
    for (auto s : older.sample_indices()) seen.insert(s);
    auto released = std::async(std::launch::async, [b = std::move(older), i]() mutable {
      std::this_thread::sleep_for(i % 3 == 0 ? 0ms : 30ms);
      b.release();
    });
    older = std::move(newer);
    newer = loader.next();
    released.get();
  }
  EXPECT_EQ(seen.size(), kSamples);
}

TEST_F(Consumer, SlotsHeldForGoodAreAnErrorNamingPrefetch) {
  Loader loader(options());
  loader.start_epoch(0);
  std::vector<Batch> kept;
  kept.push_back(loader.next());
  kept.push_back(loader.next());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)loader.next();
    FAIL() << "every slot is held and nothing can be prepared";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "prefetch");
    EXPECT_THAT(e.what(), HasSubstr("all 2 batch slots are held"));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 900ms) << "reported before the grace period";
  kept.clear();
  loader.start_epoch(1);
  EXPECT_TRUE(loader.next()) << "the next epoch works";
}

}  // namespace
}  // namespace gpufeed::pipeline
