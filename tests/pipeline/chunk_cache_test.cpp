#include "gpufeed/pipeline/chunk_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpufeed::pipeline {
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

/// A view of bytes [at, at + size) of `owner`, a buffer of `owner_bytes`.
ChunkCache::ViewFn view_of(const std::shared_ptr<std::uint8_t[]>& owner, std::size_t owner_bytes,
                           std::size_t at, std::size_t size) {
  return [=] { return storage::SharedBytes{owner, {owner.get() + at, size}, owner_bytes}; };
}

ChunkCache::LoadFn no_load() {
  return [](std::span<std::uint8_t>) { ADD_FAILURE() << "a view was offered: nothing to load"; };
}

TEST(ChunkCache, ViewsAreKeptWithoutACopyAndChargedTheirBufferOnce) {
  ChunkCache cache(1000);
  const std::shared_ptr<std::uint8_t[]> get(new std::uint8_t[300]);
  for (std::size_t i = 0; i < 300; ++i) get[i] = static_cast<std::uint8_t>(i);
  auto a = cache.get(1, 100, no_load(), nullptr, view_of(get, 300, 0, 100));
  auto b = cache.get(2, 100, no_load(), nullptr, view_of(get, 300, 100, 100));
  EXPECT_EQ(a->data(), get.get());
  EXPECT_EQ(b->data(), get.get() + 100);
  EXPECT_EQ(b->span()[5], 105);
  const auto s = cache.stats();
  EXPECT_EQ(s.views, 2u);
  EXPECT_EQ(s.bytes, 300u) << "the buffer both views keep alive, once";
}

TEST(ChunkCache, AViewsBufferLeavesTheBudgetWithItsLastView) {
  ChunkCache cache(350);
  std::shared_ptr<std::uint8_t[]> get(new std::uint8_t[300]);
  cache.get(1, 100, no_load(), nullptr, view_of(get, 300, 0, 100));
  cache.get(2, 100, no_load(), nullptr, view_of(get, 300, 100, 100));
  const std::weak_ptr<std::uint8_t[]> alive = get;
  get.reset();
  cache.get(3, 100, fill(3));  // 400 > 350: both views go (the first freed nothing)
  const auto s = cache.stats();
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.bytes, 100u);
  EXPECT_TRUE(alive.expired()) << "the GET's buffer is freed with its last view";
}

TEST(ChunkCache, AViewOfAnotherSizeIsLoadedInstead) {
  ChunkCache cache(1000);
  const std::shared_ptr<std::uint8_t[]> get(new std::uint8_t[50]);
  std::atomic<int> loads{0};
  auto a = cache.get(1, 100, fill(4, &loads), nullptr, view_of(get, 50, 0, 50));
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(a->span().size(), 100u);
  EXPECT_EQ(a->span()[99], 4);
  EXPECT_EQ(cache.stats().views, 0u);
  // No view at all (a local file, a chunk not planned): loaded as before.
  cache.get(2, 100, fill(5, &loads), nullptr, [] { return storage::SharedBytes{}; });
  EXPECT_EQ(loads.load(), 2);
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

TEST(ChunkCache, AnEvictedChunksBufferIsReusedOnceNoHandleHoldsIt) {
  ChunkCache cache(100);
  const std::uint8_t* first = cache.get(1, 100, fill(1))->span().data();
  cache.get(2, 100, fill(2));  // evicts 1, whose buffer nobody holds
  auto third = cache.get(3, 100, fill(3));
  EXPECT_EQ(third->span().data(), first);
  EXPECT_EQ(third->span()[99], 3);
  EXPECT_EQ(cache.stats().recycled, 1u);
  EXPECT_EQ(cache.stats().bytes, 100u);
}

TEST(ChunkCache, AHeldChunksBufferIsNotReused) {
  ChunkCache cache(100);
  auto held = cache.get(1, 100, fill(5));
  cache.get(2, 100, fill(6));  // evicts 1, still held
  auto third = cache.get(3, 100, fill(7));
  EXPECT_NE(third->span().data(), held->span().data());
  EXPECT_EQ(cache.stats().recycled, 0u);
  EXPECT_EQ(held->span()[0], 5);
  held.reset();  // now its buffer may become a spare
  cache.get(4, 100, fill(8));
  EXPECT_EQ(cache.stats().recycled, 1u);
}

TEST(ChunkCache, ASpareMuchLargerThanTheChunkIsNotUsed) {
  ChunkCache cache(100);
  cache.get(1, 100, fill(1));
  cache.get(2, 10, fill(2));  // evicts 1: a 100-byte spare
  auto half = cache.get(3, 50, fill(3));
  EXPECT_EQ(cache.stats().recycled, 0u);
  EXPECT_EQ(half->size, 50u);
  EXPECT_EQ(half->capacity, 50u);
  auto most = cache.get(4, 95, fill(4));  // within an eighth of the spare: reused
  EXPECT_EQ(cache.stats().recycled, 1u);
  EXPECT_EQ(most->size, 95u);
  EXPECT_EQ(most->capacity, 100u);
  EXPECT_EQ(most->span().size(), 95u);
}

TEST(ChunkCache, AHandleMayOutliveItsCache) {
  ChunkHandle kept;
  {
    ChunkCache cache(100);
    kept = cache.get(1, 100, fill(9));
    cache.get(2, 100, fill(2));
  }
  EXPECT_EQ(kept->span()[42], 9);
  kept.reset();  // the buffer goes to the spares, which outlived the cache
}

}  // namespace
}  // namespace gpufeed::pipeline
