#include "gpufeed/pipeline/chunk_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpufeed {
namespace {

ChunkCache::LoadFn fill(std::uint8_t value, std::atomic<int>* loads = nullptr) {
  return [=](std::span<std::uint8_t> out) {
    if (loads) loads->fetch_add(1);
    for (auto& b : out) b = value;
  };
}

TEST(ChunkCache, HitsAfterTheFirstLoad) {
  ChunkCache cache(1000);
  std::atomic<int> loads{0};
  bool hit = true;
  auto a = cache.get(1, 100, fill(7, &loads), &hit);
  EXPECT_FALSE(hit);
  auto b = cache.get(1, 100, fill(9, &loads), &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(b->span()[99], 7);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(ChunkCache, EvictsLeastRecentlyUsedWithinTheBudget) {
  ChunkCache cache(250);
  cache.get(1, 100, fill(1));
  cache.get(2, 100, fill(2));
  cache.get(1, 100, fill(1));  // 1 is now the most recent
  cache.get(3, 100, fill(3));  // over budget: evicts 2
  const auto s = cache.stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.bytes, 200u);
  EXPECT_LE(s.peak_bytes, 300u);
  bool hit = false;
  cache.get(1, 100, fill(1), &hit);
  EXPECT_TRUE(hit);
  cache.get(2, 100, fill(2), &hit);
  EXPECT_FALSE(hit);
}

TEST(ChunkCache, EvictedChunkStaysValidWhileHeld) {
  ChunkCache cache(100);
  auto held = cache.get(1, 100, fill(5));
  cache.get(2, 100, fill(6));
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(held->span()[0], 5);
}

TEST(ChunkCache, ConcurrentRequestsForOneChunkLoadItOnce) {
  ChunkCache cache(1 << 20);
  std::atomic<int> loads{0};
  auto slow = [&](std::span<std::uint8_t> out) {
    loads.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto& b : out) b = 3;
  };
  std::vector<std::thread> threads;
  std::atomic<int> sum{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { sum += cache.get(42, 64, slow)->span()[63]; });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(sum.load(), 12);
}

TEST(ChunkCache, FailedLoadLeavesNothingAndIsRetried) {
  ChunkCache cache(1000);
  EXPECT_THROW(cache.get(1, 10, [](std::span<std::uint8_t>) { throw std::runtime_error("bad"); }),
               std::runtime_error);
  EXPECT_EQ(cache.stats().bytes, 0u);
  bool hit = true;
  EXPECT_EQ(cache.get(1, 10, fill(4), &hit)->span()[0], 4);
  EXPECT_FALSE(hit);
}

}  // namespace
}  // namespace gpufeed
