// workers=auto / prefetch=auto: the tuner's rules on made-up windows, and a real loader that
// tunes itself without touching the sample order.
#include "tuner.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "temp_dir.hpp"
#include "worker_gate.hpp"

namespace gpufeed::detail {
namespace {

constexpr std::int64_t kMs = 1'000'000;

/// A window of 100 ms in which the consumer waited `wait` and each of `workers` workers was
/// busy `busy` of the time.
TunerWindow window(double wait, double busy, unsigned workers, Stage stage = Stage::decode) {
  TunerWindow w;
  w.wall_ns = 100 * kMs;
  w.wait_ns = static_cast<std::int64_t>(wait * 100 * kMs);
  w.loader_busy_ns = static_cast<std::int64_t>(busy * workers * 100 * kMs);
  w.busiest = stage;
  return w;
}

TunerLimits both(unsigned max_workers, unsigned max_prefetch) {
  return {true, true, max_workers, max_prefetch};
}

TEST(Tuner, RaisesBusyWorkersByHalfAgainUpToTheBudgetWithASettlingWindowBetween) {
  Tuner t(both(8, 16), 2, 2);
  std::vector<unsigned> seen;
  for (int i = 0; i < 12 && t.workers() < 8; ++i) {
    if (const auto c = t.observe(window(0.4, 0.9, t.workers()))) {
      EXPECT_EQ(c->knob, Knob::workers);
      EXPECT_EQ(c->stage, Stage::decode);
      EXPECT_NE(c->reason.find("\"decode\""), std::string::npos) << c->reason;
      seen.push_back(c->to);
    }
  }
  EXPECT_EQ(seen, (std::vector<unsigned>{3, 4, 6, 8}));
  EXPECT_EQ(t.workers(), 8u);
  // At the budget with the consumer still waiting: a deeper queue is all that is left.
  EXPECT_FALSE(t.observe(window(0.4, 0.9, 8)));  // settling
  const auto c = t.observe(window(0.4, 0.9, 8));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knob, Knob::prefetch);
  EXPECT_EQ(c->to, 4u);
}

TEST(Tuner, IdleWorkersWithWaitsDeepenTheQueueNotTheThreads) {
  Tuner t(both(8, 6), 2, 2);
  const auto c = t.observe(window(0.2, 0.3, 2));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knob, Knob::prefetch);
  EXPECT_EQ(c->from, 2u);
  EXPECT_EQ(c->to, 4u);
  EXPECT_FALSE(t.observe(window(0.2, 0.3, 2)));       // settling
  EXPECT_EQ(t.observe(window(0.2, 0.3, 2))->to, 6u);  // capped by the memory budget
  EXPECT_FALSE(t.observe(window(0.2, 0.3, 2)));
  EXPECT_FALSE(t.observe(window(0.2, 0.3, 2)));  // nothing left to raise
}

TEST(Tuner, GivesIdleCoresBackAndNeverBelowACountThatMadeTheConsumerWait) {
  Tuner t(both(8, 8), 4, 2);
  EXPECT_EQ(t.observe(window(0.0, 0.1, 4))->to, 3u);  // never waited, workers idle
  EXPECT_FALSE(t.observe(window(0.0, 0.1, 3)));       // settling
  EXPECT_EQ(t.observe(window(0.0, 0.1, 3))->to, 2u);
  EXPECT_FALSE(t.observe(window(0.0, 0.1, 2)));
  // Two were too few: the worker comes back, and the tuner stays at three from now on.
  const auto back = t.observe(window(0.1, 0.9, 2));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to, 3u);
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(t.observe(window(0.0, 0.1, 3)));
  EXPECT_EQ(t.workers(), 3u);
}

TEST(Tuner, ChangesOnlyTheKnobsThatAreAuto) {
  Tuner workers_only({true, false, 8, 1}, 2, 4);
  for (int i = 0; i < 10; ++i) {
    const auto c = workers_only.observe(window(0.4, 0.2, workers_only.workers()));
    EXPECT_FALSE(c) << "idle workers, fixed prefetch: nothing to change";
  }
  Tuner prefetch_only({false, true, 2, 8}, 2, 2);
  const auto c = prefetch_only.observe(window(0.4, 0.95, 2));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knob, Knob::prefetch);
  EXPECT_FALSE(prefetch_only.observe(TunerWindow{}));  // an empty window says nothing
}

TEST(WorkerGate, ParksAndReleasesThreadsAndLeavesNoneBehind) {
  oneapi::tbb::task_arena arena(4, 0);
  arena.initialize();
  {
    WorkerGate gate(arena, 4, 1);
    EXPECT_EQ(gate.active(), 1u);
    gate.set_active(3);
    EXPECT_EQ(gate.active(), 3u);
    gate.set_active(0);  // clamped: one thread always works
    EXPECT_EQ(gate.active(), 1u);
    gate.set_active(99);
    EXPECT_EQ(gate.active(), 4u);
    gate.set_active(2);
  }  // returns only once every park task has left the arena
  int ran = 0;
  arena.execute([&] { ran = 1; });
  EXPECT_EQ(ran, 1);
}

class AutoLoader : public ::testing::Test {
 protected:
  static constexpr formats::SampleShape kShape{16, 16, 3, formats::Layout::nhwc};

  void SetUp() override { testing::write_dataset(path_, 2048, kShape, 32, 4); }

  LoaderOptions options(unsigned workers, unsigned prefetch) const {
    LoaderOptions o;
    o.path = path_;
    o.batch_size = 32;
    o.workers = workers;
    o.prefetch = prefetch;
    o.order = Order::random;
    o.seed = 5;
    o.shard = Shard{};
    return o;
  }

  static std::vector<std::uint64_t> order_of(Loader& loader, std::uint64_t epoch) {
    std::vector<std::uint64_t> seen;
    for (Batch& b : loader.epoch(epoch)) {
      for (auto i : b.sample_indices()) seen.push_back(i);
    }
    return seen;
  }

  gpufeed::testing::TempDir dir_;
  std::string path_ = dir_.file("auto.h5");
};

TEST_F(AutoLoader, TunesAStalledReadStageAndKeepsTheSampleOrder) {
  LoaderOptions tuned = options(LoaderOptions::kAuto, LoaderOptions::kAuto);
  tuned.cpu_budget = 4;
  tuned.inject_stall = StallInjection{Stage::read, 5, 1};  // 5 ms per batch: threads help
  Loader a(tuned);
  Loader b(options(1, 2));
  EXPECT_EQ(a.stats().workers, 2u);  // starts small
  EXPECT_EQ(a.stats().prefetch, 2u);
  for (std::uint64_t epoch = 0; epoch < 2; ++epoch)
    EXPECT_EQ(order_of(a, epoch), order_of(b, epoch));
  const LoaderStats s = a.stats();
  ASSERT_FALSE(s.tuning.empty()) << "a consumer that waits on a sleeping stage was not tuned";
  EXPECT_EQ(s.tuning.front().knob, Knob::workers);
  EXPECT_EQ(s.tuning.front().from, 2u);
  EXPECT_GT(s.tuning.front().to, 2u);
  EXPECT_EQ(s.workers, s.tuning.back().knob == Knob::workers ? s.tuning.back().to : s.workers);
  EXPECT_LE(s.workers, 4u);
  for (std::size_t i = 1; i < s.tuning.size(); ++i) {
    EXPECT_GE(s.tuning[i].time_ns, s.tuning[i - 1].time_ns);
  }
}

TEST_F(AutoLoader, AutoPrefetchAllocatesWithinTheMemoryBudget) {
  LoaderOptions o = options(1, LoaderOptions::kAuto);
  o.memory_budget = 6ull * 32 * kShape.bytes() * 5;  // six slots' worth
  Loader loader(o);
  EXPECT_EQ(loader.stats().prefetch, 2u);
  // Pixel buffers within the budget; labels and indices come on top.
  EXPECT_LE(loader.stats().slot_bytes, o.memory_budget * 101 / 100);
  EXPECT_EQ(order_of(loader, 0).size(), 2048u);
}

TEST_F(AutoLoader, BadBudgetsNameTheirField) {
  LoaderOptions o = options(LoaderOptions::kAuto, 2);
  o.cpu_budget = 5000;
  try {
    Loader loader(o);
    FAIL() << "cpu_budget 5000 was accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "cpu_budget");
  }
}

}  // namespace
}  // namespace gpufeed::detail
