#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/pipeline/normalize.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using formats::Layout;
using formats::SampleShape;

constexpr SampleShape kShape{8, 6, 3, Layout::nhwc};
constexpr std::uint64_t kSamples = 1000;  // not a multiple of the chunk (48) or batch (64)

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, kSamples, kShape, 48, 4); }

  LoaderOptions options(Order order, unsigned workers = 2) const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 64;
    o.resources.workers = workers;
    o.resources.prefetch = 3;
    o.sampling.order = order;
    o.sampling.seed = 11;
    o.sampling.chunk_window = 4;
    o.sampling.shard = Shard{};
    o.output.keep_raw = true;  // the tests compare Batch::raw()
    return o;
  }

  /// The sample indices of one epoch, in delivery order, checking every batch's content.
  static std::vector<std::uint64_t> run_epoch(Loader& loader, std::uint64_t epoch) {
    std::vector<std::uint64_t> seen;
    std::uint64_t expected_index = 0;
    for (Batch& batch : loader.epoch(epoch)) {
      EXPECT_EQ(batch.index(), expected_index++);
      EXPECT_EQ(batch.epoch(), epoch);
      check_batch(loader, batch);
      for (auto i : batch.sample_indices()) seen.push_back(i);
    }
    EXPECT_EQ(expected_index, loader.batches_per_epoch());
    return seen;
  }

  static void check_batch(const Loader& loader, const Batch& batch) {
    const std::uint64_t bytes = kShape.bytes();
    const auto raw = batch.raw();
    for (std::uint32_t s = 0; s < batch.size(); ++s) {
      const std::uint64_t i = batch.sample_indices()[s];
      ASSERT_EQ(batch.labels()[s], testing::label_of(i));
      for (std::uint64_t b = 0; b < bytes; ++b) {
        ASSERT_EQ(raw[s * bytes + b], testing::pixel(i, b)) << "sample " << i << " byte " << b;
      }
    }
    const auto& stats = *loader.dataset().channel_stats();
    std::vector<float> want(batch.images().size());
    normalize_reference(raw.data(), kShape, batch.size(), stats.mean, stats.stddev, want.data());
    for (std::size_t e = 0; e < want.size(); ++e) {
      ASSERT_NEAR(batch.images()[e], want[e], 1e-6f * std::max(1.0f, std::fabs(want[e])));
    }
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

TEST_F(LoaderTest, DeliversEverySampleExactlyOncePerEpoch) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    Loader loader(options(order));
    EXPECT_EQ(loader.batches_per_epoch(), 16u);  // 15 full batches and one of 40
    for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
      auto seen = run_epoch(loader, epoch);
      ASSERT_EQ(seen.size(), kSamples) << to_string(order);
      EXPECT_EQ(std::set<std::uint64_t>(seen.begin(), seen.end()).size(), kSamples);
    }
  }
}

TEST_F(LoaderTest, OrderDoesNotDependOnThreadsOrReadPath) {
  for (Order order : {Order::random, Order::chunk}) {
    Loader reference(options(order, 1));
    const auto want = run_epoch(reference, 3);
    for (unsigned workers : {2u, 4u}) {
      Loader loader(options(order, workers));
      EXPECT_EQ(run_epoch(loader, 3), want) << workers << " workers";
    }
    LoaderOptions locked = options(order, 2);
    locked.source.use_index = false;
    Loader loader(locked);
    EXPECT_EQ(run_epoch(loader, 3), want) << "direct chunk path";
  }
}

TEST_F(LoaderTest, ShardsPartitionTheDataset) {
  std::multiset<std::uint64_t> all;
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    LoaderOptions o = options(Order::chunk);
    o.sampling.shard = Shard{rank, 3};
    Loader loader(o);
    EXPECT_EQ(loader.samples_per_epoch(), 334u);
    auto seen = run_epoch(loader, 0);
    all.insert(seen.begin(), seen.end());
  }
  EXPECT_EQ(all.size(), 1002u);
  EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()).size(), kSamples);
}

TEST_F(LoaderTest, WorksWithACacheSmallerThanOneChunk) {
  LoaderOptions o = options(Order::random);
  o.storage.cache_bytes = 1000;
  Loader loader(o);
  EXPECT_EQ(run_epoch(loader, 0).size(), kSamples);
  const LoaderStats s = loader.stats();
  EXPECT_GT(s.chunk_reads, 21u);  // far more than the 21 chunks: every miss re-reads
  EXPECT_LE(s.cache_peak_bytes, 2 * 48 * kShape.bytes());
}

TEST_F(LoaderTest, ChunkOrderReadsEachChunkOncePerEpoch) {
  Loader loader(options(Order::chunk));
  run_epoch(loader, 0);
  EXPECT_EQ(loader.stats().chunk_reads, 21u);  // ceil(1000 / 48)
}

TEST_F(LoaderTest, DropLastBatch) {
  LoaderOptions o = options(Order::sequential);
  o.sampling.drop_last = true;
  Loader loader(o);
  EXPECT_EQ(loader.batches_per_epoch(), 15u);
  EXPECT_EQ(run_epoch(loader, 0).size(), 960u);
}

TEST_F(LoaderTest, StartingAnotherEpochMidwayCancelsTheFirst) {
  Loader loader(options(Order::random));
  loader.start_epoch(0);
  Batch kept = loader.next();
  ASSERT_TRUE(kept);
  EXPECT_TRUE(loader.next());
  auto seen = run_epoch(loader, 1);
  EXPECT_EQ(std::set<std::uint64_t>(seen.begin(), seen.end()).size(), kSamples);
  EXPECT_EQ(kept.epoch(), 0u);  // still valid
}

TEST_F(LoaderTest, DestroyingMidEpochReturnsAndBatchesStayValid) {
  Batch kept;
  {
    Loader loader(options(Order::chunk));
    loader.start_epoch(0);
    kept = loader.next();
    Batch second = loader.next();
    ASSERT_TRUE(second);
  }
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept.raw()[0], testing::pixel(kept.sample_indices()[0], 0));
  kept.release();
  EXPECT_FALSE(kept);
}

TEST_F(LoaderTest, ConsumerHoldingEverySlotIsToldInsteadOfHanging) {
  Loader loader(options(Order::sequential));  // prefetch 3: 4 slots
  loader.start_epoch(0);
  std::vector<Batch> held;
  for (int i = 0; i < 4; ++i) held.push_back(loader.next());
  EXPECT_THROW(loader.next(), UsageError);
  held.pop_back();
  EXPECT_TRUE(loader.next());
}

TEST_F(LoaderTest, FlipAugmentMirrorsTheSamplesItDraws) {
  LoaderOptions o = options(Order::sequential);
  o.image.augment = Augment::flip;
  Loader loader(o);
  std::uint64_t flipped = 0;
  for (Batch& batch : loader.epoch(0)) {
    for (std::uint32_t s = 0; s < batch.size(); ++s) {
      const std::uint64_t i = batch.sample_indices()[s];
      const bool flip = formats::random_flip(o.sampling.seed, 0, i);
      flipped += flip;
      const std::uint8_t* got = batch.raw().data() + s * kShape.bytes();
      for (std::uint32_t y = 0; y < kShape.height; ++y) {
        for (std::uint32_t x = 0; x < kShape.width; ++x) {
          const std::uint32_t sx = flip ? kShape.width - 1 - x : x;
          for (std::uint32_t c = 0; c < 3; ++c) {
            ASSERT_EQ(got[(y * kShape.width + x) * 3 + c],
                      testing::pixel(i, (y * kShape.width + sx) * 3 + c));
          }
        }
      }
    }
  }
  EXPECT_GT(flipped, 400u);
  EXPECT_LT(flipped, 600u);
  o.image.augment = Augment::crop_flip;
  EXPECT_THROW(Loader{o}, UsageError);  // cropping resizes: jpeg layout only
}

TEST_F(LoaderTest, WithoutKeepRawSamplesGoFromTheirChunksStraightIntoTheSameOutput) {
  for (const DType dtype : {DType::float32, DType::uint8}) {
    SCOPED_TRACE(dtype == DType::uint8 ? "uint8" : "float32");
    LoaderOptions kept = options(Order::chunk);
    kept.output.dtype = dtype;
    LoaderOptions direct = kept;
    direct.output.keep_raw = false;
    Loader a(kept), b(direct);
    std::uint64_t batches = 0;
    for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
      auto ea = a.epoch(epoch), eb = b.epoch(epoch);
      for (auto ia = ea.begin(), ib = eb.begin(); ia != ea.end(); ++ia, ++ib, ++batches) {
        ASSERT_NE(ib, eb.end());
        ASSERT_TRUE(std::ranges::equal(ia->sample_indices(), ib->sample_indices()));
        ASSERT_TRUE(std::ranges::equal(ia->labels(), ib->labels()));
        ASSERT_FALSE(ia->raw().empty());
        EXPECT_TRUE(ib->raw().empty());  // no uint8 copy was made
        const std::size_t bytes = ia->size() * kShape.bytes() * (dtype == DType::uint8 ? 1 : 4);
        ASSERT_EQ(std::memcmp(ia->host_images(), ib->host_images(), bytes), 0)
            << "batch " << ia->index() << " of epoch " << epoch;
      }
    }
    EXPECT_EQ(batches, 2 * a.batches_per_epoch());
    // The conversion is the normalize stage's work wherever it runs.
    EXPECT_GT(b.stats()[Stage::normalize].busy_ns, 0);
    EXPECT_EQ(b.stats()[Stage::normalize].items, a.stats()[Stage::normalize].items);
  }
  // A flip needs the pixels in the slot: they are kept whatever keep_raw says.
  LoaderOptions flipped = options(Order::chunk);
  flipped.image.augment = Augment::flip;
  flipped.output.keep_raw = false;
  Loader loader(flipped);
  for (Batch& batch : loader.epoch(0)) ASSERT_FALSE(batch.raw().empty());
}

TEST_F(LoaderTest, CountsStageWork) {
  Loader loader(options(Order::chunk));
  run_epoch(loader, 0);
  const LoaderStats s = loader.stats();
  EXPECT_EQ(s.batches, 16u);
  EXPECT_EQ(s.samples, kSamples);
  EXPECT_EQ(s[Stage::assemble].items, 16u);
  EXPECT_EQ(s[Stage::normalize].items, 16u);
  EXPECT_GT(s[Stage::normalize].busy_ns, 0);
  EXPECT_GT(s[Stage::read].busy_ns, 0);
  EXPECT_EQ(s.workers, 2u);
  EXPECT_GT(s.slot_bytes, 4u * 64 * kShape.bytes() * 5 - 1);
}

TEST_F(LoaderTest, NamesTheStalledStageAsTheBottleneck) {
  // 20 ms on every batch against microseconds of real work per batch: the stalled stage
  // outweighs every other by orders of magnitude, even on a loaded machine.
  constexpr std::uint32_t kStallMs = 20;
  for (Stage stalled : {Stage::read, Stage::assemble, Stage::normalize}) {
    SCOPED_TRACE(stage_name(stalled));
    LoaderOptions o = options(Order::chunk);
    const testing::StallOverride stall(StallInjection{stalled, kStallMs, 1});
    Loader loader(o);
    run_epoch(loader, 0);
    const LoaderStats s = loader.stats();
    ASSERT_EQ(s.batches, 16u);
    EXPECT_GE(s[stalled].busy_ns, std::int64_t{16} * kStallMs * 1'000'000);
    ASSERT_TRUE(s.bottleneck().has_value());
    EXPECT_STREQ(stage_name(*s.bottleneck()), stage_name(stalled));
    for (Stage other :
         {Stage::read, Stage::decode, Stage::assemble, Stage::h2d, Stage::normalize}) {
      if (other == stalled) continue;
      EXPECT_LT(s.busy_fraction(other) * 4, s.busy_fraction(stalled)) << stage_name(other);
    }
  }
}

TEST_F(LoaderTest, ReportsTheQueueDepthTheConsumerFound) {
  Loader loader(options(Order::sequential));
  loader.start_epoch(0);
  // Give the workers time to run ahead, so some request finds batches already waiting.
  bool found_ready = false;
  for (std::uint64_t i = 0; i < loader.batches_per_epoch() && !found_ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Batch batch = loader.next();
    ASSERT_TRUE(batch);
    const LoaderStats s = loader.stats();
    EXPECT_LE(s.ready_batches, s.max_ready_batches);
    found_ready = s.ready_batches >= 1;
  }
  EXPECT_TRUE(found_ready);
  while (loader.next()) {
  }
  EXPECT_EQ(loader.stats().ready_batches, 0u);  // the request that ended the epoch found none
}

}  // namespace
}  // namespace gpufeed::pipeline
