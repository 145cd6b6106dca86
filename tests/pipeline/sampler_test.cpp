#include "gpufeed/pipeline/sampler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {
namespace {

std::vector<std::uint64_t> iota_vec(std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

SamplerOptions with(Order order, std::uint64_t seed = 7, Shard shard = {}) {
  SamplerOptions o;
  o.order = order;
  o.seed = seed;
  o.shard = shard;
  o.chunk_window = 4;
  return o;
}

TEST(Sampler, EveryOrderIsAPermutationOfTheDataset) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    Sampler s(1003, 10, with(order));
    auto got = s.epoch_order(3);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, iota_vec(1003)) << to_string(order);
  }
}

TEST(Sampler, SequentialIsTheIdentity) {
  EXPECT_EQ(Sampler(50, 8, with(Order::sequential)).epoch_order(5), iota_vec(50));
}

TEST(Sampler, OrderIsAPureFunctionOfSeedAndEpoch) {
  for (Order order : {Order::random, Order::chunk}) {
    Sampler a(500, 16, with(order, 42));
    Sampler b(500, 16, with(order, 42));
    EXPECT_EQ(a.epoch_order(1), b.epoch_order(1));
    EXPECT_NE(a.epoch_order(1), a.epoch_order(2));
    EXPECT_NE(a.epoch_order(1), Sampler(500, 16, with(order, 43)).epoch_order(1));
    EXPECT_NE(a.epoch_order(1), iota_vec(500));
  }
}

TEST(Sampler, RandomOrderIsFixedAcrossPlatforms) {
  // The generator is fully specified (SplitMix64 + Fisher-Yates), so this never changes.
  const auto order = Sampler(10, 1, with(Order::random, 1)).epoch_order(0);
  const auto again = Sampler(10, 1, with(Order::random, 1)).epoch_order(0);
  EXPECT_EQ(order, again);
  EXPECT_NE(order, iota_vec(10));
}

TEST(Sampler, ChunkOrderDrawsEachWindowFromFewChunks) {
  const std::uint64_t k = 10, window = 4;
  Sampler s(1000, k, with(Order::chunk));
  const auto order = s.epoch_order(0);
  // Every run of window*k samples comes from exactly `window` chunks, each complete.
  for (std::size_t w = 0; w < order.size(); w += window * k) {
    std::set<std::uint64_t> chunks;
    for (std::size_t i = w; i < w + window * k; ++i) chunks.insert(order[i] / k);
    EXPECT_EQ(chunks.size(), window);
  }
  // ... and the samples inside a window are shuffled, not chunk after chunk: unshuffled,
  // 90% of neighbours would share a chunk; shuffled over 4 chunks, about 25%.
  std::size_t same = 0;
  for (std::size_t i = 1; i < order.size(); ++i) same += order[i] / k == order[i - 1] / k;
  EXPECT_LT(static_cast<double>(same) / static_cast<double>(order.size()), 0.5);
}

TEST(Sampler, ShardsAreDisjointCompleteAndEqualInSize) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    const std::uint64_t n = 103, world = 4;
    std::multiset<std::uint64_t> all;
    for (std::uint32_t r = 0; r < world; ++r) {
      Sampler s(n, 8, with(order, 5, {r, static_cast<std::uint32_t>(world)}));
      const auto mine = s.epoch_order(2);
      EXPECT_EQ(mine.size(), 26u);  // ceil(103 / 4)
      all.insert(mine.begin(), mine.end());
    }
    EXPECT_EQ(all.size(), 104u);  // padded by one wrapped sample
    EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()).size(), n);
  }
}

TEST(Sampler, DropTailGivesDisjointShards) {
  SamplerOptions o = with(Order::random, 5, {1, 4});
  o.drop_tail = true;
  EXPECT_EQ(Sampler(103, 8, o).samples_per_rank(), 25u);
  std::set<std::uint64_t> all;
  for (std::uint32_t r = 0; r < 4; ++r) {
    o.shard = {r, 4};
    for (auto i : Sampler(103, 8, o).epoch_order(0)) EXPECT_TRUE(all.insert(i).second);
  }
  EXPECT_EQ(all.size(), 100u);
}

TEST(Sampler, TinyDatasetWrapsForLargeWorlds) {
  const auto mine = Sampler(3, 1, with(Order::sequential, 0, {6, 8})).epoch_order(0);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0], 0u);  // global order 0 1 2 0 1 2 0 1: rank 6 gets the wrapped 0
}

TEST(Sampler, ShardFromEnvironment) {
  ::setenv("RANK", "2", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  const Shard s = Shard::from_environment();
  EXPECT_EQ(s.rank, 2u);
  EXPECT_EQ(s.world_size, 4u);
  ::setenv("RANK", "4", 1);
  EXPECT_THROW(Shard::from_environment(), UsageError);
  ::setenv("RANK", "x", 1);
  EXPECT_THROW(Shard::from_environment(), UsageError);
  ::unsetenv("WORLD_SIZE");
  ::setenv("RANK", "1", 1);
  EXPECT_THROW(Shard::from_environment(), UsageError);
  ::unsetenv("RANK");
  EXPECT_EQ(Shard::from_environment().world_size, 1u);
}

/// Rank `rank` of `world`'s order for `epoch` after `closed` segments, skipping `skip`.
std::vector<std::uint64_t> share(Order order, std::uint64_t n, std::uint32_t rank,
                                 std::uint32_t world, std::span<const EpochSegment> closed = {},
                                 std::uint64_t skip = 0) {
  return Sampler(n, 8, with(order, 5, {rank, world})).epoch_order(3, closed, skip);
}

TEST(Sampler, TheGlobalOrderDoesNotDependOnTheWorldSize) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    const auto one = Sampler(103, 8, with(order, 5, {0, 1})).global_order(3);
    const auto four = Sampler(103, 8, with(order, 5, {2, 4})).global_order(3);
    EXPECT_EQ(one, four) << to_string(order);
    EXPECT_EQ(share(order, 103, 0, 1), one);
  }
}

TEST(Sampler, SkippingIsTheRestOfTheShare) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    const auto whole = share(order, 103, 1, 4);
    const auto rest = share(order, 103, 1, 4, {}, 10);
    EXPECT_EQ(rest, std::vector<std::uint64_t>(whole.begin() + 10, whole.end()));
    EXPECT_TRUE(share(order, 103, 1, 4, {}, 1000).empty());
  }
}

TEST(Sampler, ElasticResumeDealsEveryRemainingSampleOnce) {
  // Two ranks consumed 20 samples each; the job goes on with 1, 3 and 7 ranks (103 - 40 = 63
  // remaining samples divide evenly among 1, 3 and 7): consumed + remaining is the dataset,
  // each sample exactly once.
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    const EpochSegment two{2, 20};
    std::multiset<std::uint64_t> consumed;
    for (std::uint32_t r = 0; r < 2; ++r) {
      const auto mine = share(order, 103, r, 2);
      consumed.insert(mine.begin(), mine.begin() + 20);
    }
    for (std::uint32_t world : {1u, 3u, 7u}) {
      std::multiset<std::uint64_t> all = consumed;
      for (std::uint32_t r = 0; r < world; ++r) {
        const auto mine = share(order, 103, r, world, {&two, 1});
        EXPECT_EQ(mine.size(), 63u / world) << to_string(order) << " world " << world;
        all.insert(mine.begin(), mine.end());
      }
      EXPECT_EQ(std::vector<std::uint64_t>(all.begin(), all.end()), iota_vec(103))
          << to_string(order) << " world " << world;
    }
  }
}

TEST(Sampler, RemainingSamplesKeepTheGlobalOrder) {
  // Random and sequential: the rest of the global order from the first unconsumed position.
  // Chunk: each old rank's unread tail, one after the other (the chunks stay together).
  const EpochSegment two{2, 20};
  const auto global = Sampler(103, 8, with(Order::random, 5)).global_order(3);
  EXPECT_EQ(share(Order::random, 103, 0, 1, {&two, 1}),
            std::vector<std::uint64_t>(global.begin() + 40, global.end()));
  const auto chunk_global = Sampler(103, 8, with(Order::chunk, 5)).global_order(3);
  std::vector<std::uint64_t> tails(chunk_global.begin() + 20, chunk_global.begin() + 52);
  tails.insert(tails.end(), chunk_global.begin() + 72, chunk_global.end());
  EXPECT_EQ(share(Order::chunk, 103, 0, 1, {&two, 1}), tails);
}

TEST(Sampler, ChainedResumesAndPadding) {
  // 2 ranks x 10, then 3 ranks x 7, then 2 ranks: 103 - 20 - 21 = 62 left, 31 each.
  const EpochSegment history[] = {{2, 10}, {3, 7}};
  for (Order order : {Order::random, Order::chunk}) {
    std::multiset<std::uint64_t> all;
    for (std::uint32_t r = 0; r < 2; ++r) {
      const auto first = share(order, 103, r, 2);
      all.insert(first.begin(), first.begin() + 10);
      const auto last = share(order, 103, r, 2, history);
      EXPECT_EQ(last.size(), 31u);
      all.insert(last.begin(), last.end());
    }
    for (std::uint32_t r = 0; r < 3; ++r) {
      const auto mid = share(order, 103, r, 3, {history, 1});
      all.insert(mid.begin(), mid.begin() + 7);
    }
    EXPECT_EQ(std::vector<std::uint64_t>(all.begin(), all.end()), iota_vec(103));
  }
  // 63 left for 2 ranks: 32 each, one sample delivered twice (DistributedSampler's padding).
  const EpochSegment two{2, 20};
  std::multiset<std::uint64_t> padded;
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto mine = share(Order::random, 103, r, 2, {&two, 1});
    EXPECT_EQ(mine.size(), 32u);
    padded.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(padded.size(), 64u);
  EXPECT_EQ(std::set<std::uint64_t>(padded.begin(), padded.end()).size(), 63u);
}

TEST(Sampler, RejectsBadArguments) {
  EXPECT_THROW(Sampler(10, 1, with(Order::random, 0, {4, 4})), UsageError);
  SamplerOptions o = with(Order::random, 0, {0, 20});
  o.drop_tail = true;
  EXPECT_THROW(Sampler(10, 1, o), UsageError);
  EXPECT_THROW(parse_order("shuffled"), UsageError);
  EXPECT_EQ(parse_order("chunk"), Order::chunk);
}

}  // namespace
}  // namespace gpufeed::pipeline
