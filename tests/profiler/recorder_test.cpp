// Contract of the in-process Recorder: per-thread rings, merged sorted snapshots, bounded
// memory with counted drops, run-time enable/disable.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/recorder.hpp"

namespace gpufeed::profiler {
namespace {

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rec().set_enabled(true);
    rec().set_capacity(Recorder::kDefaultCapacity);
    rec().clear();
  }
  void TearDown() override { SetUp(); }
  static Recorder& rec() { return Recorder::global(); }
};

TEST_F(RecorderTest, NamesAreInternedOnce) {
  const NameId a = rec().register_name("decode");
  const NameId b = rec().register_name("read");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, rec().register_name("decode"));
  const RecorderSnapshot snap = rec().snapshot();
  ASSERT_GT(snap.names.size(), std::max(a, b));
  EXPECT_EQ(snap.names[a], "decode");
  EXPECT_EQ(snap.names[b], "read");
}

TEST_F(RecorderTest, SnapshotIsSortedByBeginAndKeepsArgs) {
  const NameId id = rec().register_name("step");
  record_range(id, 300, 400, 3);
  record_range(id, 100, 200, 1);
  record_range(id, 200, 300);
  const RecorderSnapshot snap = rec().snapshot();
  ASSERT_EQ(snap.events.size(), 3u);
  EXPECT_EQ(snap.events[0].begin_ns, 100);
  EXPECT_EQ(snap.events[0].arg, 1);
  EXPECT_FALSE(snap.events[1].has_arg());
  EXPECT_EQ(snap.events[2].end_ns, 400);
  EXPECT_EQ(snap.name_of(snap.events[2]), "step");
  EXPECT_EQ(snap.dropped, 0u);
}

TEST_F(RecorderTest, DisabledRecordsNothing) {
  const NameId id = rec().register_name("wait");
  rec().set_enabled(false);
  EXPECT_FALSE(rec().enabled());
  record_range(id, 1, 2);
  EXPECT_TRUE(rec().snapshot().events.empty());
  rec().set_enabled(true);
  record_range(id, 1, 2);
  EXPECT_EQ(rec().snapshot().events.size(), 1u);
}

TEST_F(RecorderTest, ClearForgetsEvents) {
  const NameId id = rec().register_name("step");
  record_range(id, 1, 2);
  rec().clear();
  EXPECT_TRUE(rec().snapshot().events.empty());
}

TEST_F(RecorderTest, OverflowKeepsNewestAndCountsDrops) {
  rec().set_capacity(100);  // rounded up to 128
  EXPECT_EQ(rec().capacity(), 128u);
  const NameId id = rec().register_name("decode");
  std::thread writer([&] {  // a fresh thread gets a ring of the new capacity
    for (std::int64_t i = 0; i < 1000; ++i) record_range(id, i * 10, i * 10 + 5, i);
  });
  writer.join();
  const RecorderSnapshot snap = rec().snapshot();
  ASSERT_EQ(snap.events.size(), 128u);
  EXPECT_EQ(snap.dropped, 1000u - 128u);
  EXPECT_EQ(snap.events.front().arg, 1000 - 128);
  EXPECT_EQ(snap.events.back().arg, 999);
}

TEST_F(RecorderTest, ThreadsRecordIntoSeparateRingsAndMerge) {
  const NameId id = rec().register_name("decode");
  constexpr int kThreads = 4;
  constexpr int kPerThread = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::int64_t b = now_ns();
        record_range(id, b, b + 1, t);
      }
    });
  }
  for (auto& th : threads) th.join();
  const RecorderSnapshot snap = rec().snapshot();
  ASSERT_EQ(snap.events.size(), static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_TRUE(std::is_sorted(snap.events.begin(), snap.events.end(),
                             [](const auto& a, const auto& b) { return a.begin_ns < b.begin_ns; }));
  std::set<std::uint32_t> tids;
  std::vector<int> per_arg(kThreads, 0);
  for (const RangeEvent& e : snap.events) {
    tids.insert(e.thread);
    ++per_arg[static_cast<std::size_t>(e.arg)];
  }
  EXPECT_EQ(tids.size(), static_cast<std::size_t>(kThreads));
  for (int n : per_arg) EXPECT_EQ(n, kPerThread);
}

TEST_F(RecorderTest, SnapshotWhileRecordingSeesOnlyWholeEvents) {
  rec().set_capacity(64);
  const NameId id = rec().register_name("read");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (std::int64_t i = 0; !stop.load(); ++i) record_range(id, i, i + 7, i);
  });
  for (int k = 0; k < 200; ++k) {
    for (const RangeEvent& e : rec().snapshot().events) {
      ASSERT_EQ(e.end_ns - e.begin_ns, 7);  // a torn slot would mix two events
      ASSERT_EQ(e.arg, e.begin_ns);
    }
  }
  stop = true;
  writer.join();
}

TEST_F(RecorderTest, ExitedThreadsRingsAreReused) {
  const NameId id = rec().register_name("echo");
  for (int round = 0; round < 8; ++round) std::thread([&] { record_range(id, 1, 2); }).join();
  const RecorderSnapshot snap = rec().snapshot();
  EXPECT_EQ(snap.events.size(), 8u);  // events of exited threads stay readable
  const std::size_t rings = snap.threads;
  for (int round = 0; round < 8; ++round) std::thread([&] { record_range(id, 1, 2); }).join();
  EXPECT_EQ(rec().snapshot().threads, rings);  // no new ring per short-lived thread
}

}  // namespace
}  // namespace gpufeed::profiler
