// Scratch objects leased from their owner's pool: reused, as many as are used at once, trimmed
// on return, and gone with the pool.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gpufeed/formats/scratch_pool.hpp"

namespace gpufeed::formats::detail {
namespace {

std::atomic<int> g_live{0};

struct Counted {
  Counted() { ++g_live; }
  ~Counted() { --g_live; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  int uses = 0;
};

TEST(ScratchPool, ReusesWhatWasGivenBackAndMakesOnlyWhatIsLeasedAtOnce) {
  ScratchPool<Counted> pool;
  const Counted* first = nullptr;
  {
    const auto lease = pool.lease();
    first = &*lease;
    ++lease->uses;
  }
  {
    const auto again = pool.lease();
    EXPECT_EQ(&*again, first);
    EXPECT_EQ(again->uses, 1);
    const auto second = pool.lease();  // the first is out: a new one
    EXPECT_NE(&*second, first);
  }
  EXPECT_EQ(pool.made(), 2u);
}

TEST(ScratchPool, ObjectsDieWithThePool) {
  const int before = g_live.load();
  {
    ScratchPool<Counted> pool;
    const auto a = pool.lease();
    { const auto b = pool.lease(); }
    EXPECT_EQ(g_live.load(), before + 2);
  }
  EXPECT_EQ(g_live.load(), before);
}

TEST(ScratchPool, BuffersGrownPastTheLimitAreFreedOnReturn) {
  ScratchPool<std::vector<std::uint8_t>> pool(
      [](std::vector<std::uint8_t>& b) { trim_buffer(b, 1000); });
  {
    const auto lease = pool.lease();
    lease->resize(5000);  // a huge sample
  }
  {
    const auto lease = pool.lease();
    EXPECT_EQ(lease->capacity(), 0u);
    lease->resize(800);
  }
  const auto lease = pool.lease();
  EXPECT_GE(lease->capacity(), 800u);  // within the limit: kept for the next one
}

TEST(ScratchPool, ThreadsLeasingConcurrentlyNeedAtMostOneEach) {
  ScratchPool<Counted> pool;
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 2000; ++i) ++pool.lease()->uses;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(pool.made(), 1u);
  EXPECT_LE(pool.made(), static_cast<std::size_t>(kThreads));
  int uses = 0;
  std::vector<ScratchPool<Counted>::Lease> all;
  for (std::size_t i = 0; i < pool.made(); ++i) all.push_back(pool.lease());
  for (const auto& lease : all) uses += lease->uses;
  EXPECT_EQ(uses, kThreads * 2000);
  EXPECT_EQ(pool.made(), all.size()) << "every object was back in the pool";
}

}  // namespace
}  // namespace gpufeed::formats::detail
