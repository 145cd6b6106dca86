// workers=auto / prefetch=auto: the tuner's rules on made-up windows, and a real loader that
// tunes itself without touching the sample order.
#include "tuner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"
#include "worker_gate.hpp"

namespace gpufeed::pipeline::detail {
namespace {

constexpr std::int64_t kMs = 1'000'000;

/// A window of 100 ms in which the consumer waited `wait`, each of `workers` workers was busy
/// `busy` of the time, and `batches` batches were delivered.
TunerWindow window(double wait, double busy, unsigned workers, std::uint64_t batches = 10,
                   Stage stage = Stage::decode) {
  TunerWindow w;
  w.wall_ns = 100 * kMs;
  w.wait_ns = static_cast<std::int64_t>(wait * 100 * kMs);
  w.loader_busy_ns = static_cast<std::int64_t>(busy * workers * 100 * kMs);
  w.busiest = stage;
  w.batches = batches;
  return w;
}

TunerLimits both(unsigned max_workers, unsigned max_prefetch) {
  return {true, true, max_workers, max_prefetch};
}

/// The worker counts the tuner moves to over windows in which the consumer waits `wait` and
/// every raise pays (the throughput grows with the workers), until it reaches `budget`.
std::vector<unsigned> worker_raises(Tuner& t, double wait, unsigned budget) {
  std::vector<unsigned> seen;
  for (int i = 0; i < 12 && t.workers() < budget; ++i) {
    if (const auto c = t.observe(window(wait, 0.9, t.workers(), 10 * t.workers()))) {
      EXPECT_EQ(c->knob, Knob::workers);
      EXPECT_EQ(c->stage, Stage::decode);
      EXPECT_NE(c->reason.find("\"decode\""), std::string::npos) << c->reason;
      seen.push_back(c->to);
    }
  }
  return seen;
}

TEST(Tuner, RaisesBusyWorkersByHalfAgainUpToTheBudgetWithASettlingWindowBetween) {
  Tuner t(both(8, 16), 2, 2);
  EXPECT_EQ(worker_raises(t, 0.4, 8), (std::vector<unsigned>{3, 4, 6, 8}));
  EXPECT_EQ(t.workers(), 8u);
  // At the budget with the consumer still waiting: a deeper queue is all that is left.
  EXPECT_FALSE(t.observe(window(0.4, 0.9, 8, 80)));  // settling
  const auto c = t.observe(window(0.4, 0.9, 8, 80));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knob, Knob::prefetch);
  EXPECT_EQ(c->to, 4u);
}

TEST(Tuner, AStarvedConsumerDoublesTheWorkers) {
  // 16 cores decoding JPEGs for a fast GPU: from 2 workers by half again would take 6 raises;
  // a consumer that waits most of the window gets twice the workers at each.
  Tuner t(both(16, 16), 2, 2);
  EXPECT_EQ(worker_raises(t, 0.9, 16), (std::vector<unsigned>{4, 8, 16}));
}

TEST(Tuner, IdleWorkersWithWaitsDeepenTheQueueNotTheThreads) {
  Tuner t(both(8, 6), 2, 2);
  const auto deeper = [&] { return window(0.2, 0.3, 2, 10 * t.prefetch()); };
  const auto c = t.observe(deeper());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knob, Knob::prefetch);
  EXPECT_EQ(c->from, 2u);
  EXPECT_EQ(c->to, 4u);
  EXPECT_FALSE(t.observe(deeper()));       // settling
  EXPECT_EQ(t.observe(deeper())->to, 6u);  // capped by the memory budget
  EXPECT_FALSE(t.observe(deeper()));
  EXPECT_FALSE(t.observe(deeper()));  // nothing left to raise
}

TEST(Tuner, UndoesARaiseThatDeliversNoFasterAndDoesNotTryItAgain) {
  Tuner t(both(8, 16), 2, 2);
  // Busy workers and waits, but the throughput stays at 20 batches a window whatever changes.
  const auto flat = [&] { return window(0.4, 0.9, t.workers(), 20); };
  ASSERT_EQ(t.observe(flat())->to, 3u);
  EXPECT_FALSE(t.observe(flat()));  // settling
  const auto undo = t.observe(flat());
  ASSERT_TRUE(undo);
  EXPECT_EQ(undo->knob, Knob::workers);
  EXPECT_EQ(undo->from, 3u);
  EXPECT_EQ(undo->to, 2u);
  EXPECT_NE(undo->reason.find("no faster"), std::string::npos) << undo->reason;
  EXPECT_FALSE(t.observe(flat()));  // settling
  // Workers are capped at two now; the queue is tried next, and undone the same way.
  const auto queue = t.observe(flat());
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->knob, Knob::prefetch);
  EXPECT_EQ(queue->to, 4u);
  EXPECT_FALSE(t.observe(flat()));
  EXPECT_EQ(t.observe(flat())->to, 2u);
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(t.observe(flat())) << "window " << i;
  EXPECT_EQ(t.workers(), 2u);
  EXPECT_EQ(t.prefetch(), 2u);
}

TEST(Tuner, ARaiseThatPaysLetsTheOtherKnobBeTriedAgain) {
  Tuner t(both(8, 16), 2, 2);
  // Threads help only once more batches are in flight: 20 batches a window per queue slot.
  const auto by_queue = [&] { return window(0.4, 0.9, t.workers(), 10 * t.prefetch()); };
  ASSERT_EQ(t.observe(by_queue())->to, 3u);  // workers 2 -> 3
  EXPECT_FALSE(t.observe(by_queue()));
  ASSERT_EQ(t.observe(by_queue())->to, 2u);  // no faster: back to 2, capped there
  EXPECT_FALSE(t.observe(by_queue()));
  const auto deeper = t.observe(by_queue());
  ASSERT_TRUE(deeper);
  EXPECT_EQ(deeper->knob, Knob::prefetch);  // prefetch 2 -> 4
  EXPECT_FALSE(t.observe(by_queue()));
  // The deeper queue paid: workers may be raised again.
  const auto more = t.observe(by_queue());
  ASSERT_TRUE(more);
  EXPECT_EQ(more->knob, Knob::workers);
  EXPECT_EQ(more->to, 3u);
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

TEST(WorkerGate, NeverParksTheThreadsTheArenaActuallyHas) {
  // oneTBB gives this arena one worker thread, not the four it may have: parking three of four
  // must not take that one away.
  oneapi::tbb::global_control one_worker(oneapi::tbb::global_control::max_allowed_parallelism, 2);
  oneapi::tbb::task_arena arena(4, 0);
  arena.initialize();
  WorkerGate gate(arena, 4, 1);
  std::atomic<int> done{0};
  for (int i = 0; i < 8; ++i) arena.enqueue([&] { done.fetch_add(1); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (done.load() < 8 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(done.load(), 8) << "the arena's only thread was parked";
}

class AutoLoader : public ::testing::Test {
 protected:
  static constexpr formats::SampleShape kShape{16, 16, 3, formats::Layout::nhwc};

  void SetUp() override { testing::write_dataset(path_, 2048, kShape, 32, 4); }

  LoaderOptions options(AutoCount workers, AutoCount prefetch) const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 32;
    o.resources.workers = workers;
    o.resources.prefetch = prefetch;
    o.sampling.order = Order::random;
    o.sampling.seed = 5;
    o.sampling.shard = Shard{};
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
  LoaderOptions tuned = options(AutoCount::automatic(), AutoCount::automatic());
  tuned.resources.cpu_budget = 4;
  const testing::StallOverride stall(StallInjection{Stage::read, 5, 1});  // threads help
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
  LoaderOptions o = options(1, AutoCount::automatic());
  o.resources.memory_bytes = 6ull * 32 * kShape.bytes() * 5;  // six slots' worth
  Loader loader(o);
  EXPECT_EQ(loader.stats().prefetch, 2u);
  // Pixel buffers within the budget; labels and indices come on top.
  EXPECT_LE(loader.stats().slot_bytes, o.resources.memory_bytes * 101 / 100);
  EXPECT_EQ(order_of(loader, 0).size(), 2048u);
}

TEST_F(AutoLoader, BadBudgetsNameTheirField) {
  LoaderOptions o = options(AutoCount::automatic(), 2);
  o.resources.cpu_budget = 5000;
  const auto e = testing::loader_option_error(o);
  ASSERT_TRUE(e) << "cpu_budget 5000 was accepted";
  EXPECT_EQ(e->field(), "cpu_budget");
}

}  // namespace
}  // namespace gpufeed::pipeline::detail
