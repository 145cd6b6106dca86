#include "gpufeed/pipeline/sampler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "gpufeed/pipeline/errors.hpp"

namespace gpufeed {
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

TEST(Sampler, RejectsBadArguments) {
  EXPECT_THROW(Sampler(10, 1, with(Order::random, 0, {4, 4})), UsageError);
  SamplerOptions o = with(Order::random, 0, {0, 20});
  o.drop_tail = true;
  EXPECT_THROW(Sampler(10, 1, o), UsageError);
  EXPECT_THROW(parse_order("shuffled"), UsageError);
  EXPECT_EQ(parse_order("chunk"), Order::chunk);
}

}  // namespace
}  // namespace gpufeed
