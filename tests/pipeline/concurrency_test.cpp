// Interleavings that once went wrong, made to happen on purpose with the pipeline's test hooks
// (detail::TestHooks) instead of hoping a loaded machine produces them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "temp_dir.hpp"
#include "test_hooks.hpp"

namespace gpufeed::pipeline {
namespace {

using namespace std::chrono_literals;
using detail::test_hooks;
using testing::Counter;
using testing::ScopedHook;

constexpr formats::SampleShape kShape{4, 4, 3, formats::Layout::nhwc};

class Concurrency : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, 96, kShape, 8); }

  [[nodiscard]] LoaderOptions options() const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 8;
    o.resources.workers = 2;
    o.resources.prefetch = 1;  // two slots
    o.sampling.order = Order::sequential;
    o.sampling.shard = Shard{};
    return o;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

Counter slot_taken_entered;
std::atomic<bool> pause_next_slot_taken{false};

void pause_once_after_slot_taken() {
  if (!pause_next_slot_taken.exchange(false)) return;
  slot_taken_entered.add();
  std::this_thread::sleep_for(1500ms);  // longer than next()'s starvation grace period
}

TEST_F(Concurrency, ASlotBetweenThePoolAndTheGraphIsNotStarvation) {
  // Another thread releases a batch; its feed() has taken the freed slot from the pool but not
  // yet counted it in flight when the consumer looks. The slot is neither free nor in flight:
  // next() must wait for the feed to finish, not report that the consumer holds every slot.
  Loader loader(options());
  loader.start_epoch(0);
  Batch first = loader.next();
  Batch second = loader.next();
  ScopedHook hook(test_hooks.slot_taken, pause_once_after_slot_taken);
  slot_taken_entered.reset();
  pause_next_slot_taken = true;
  auto releaser = std::async(std::launch::async, [b = std::move(first)]() mutable { b.release(); });
  ASSERT_TRUE(slot_taken_entered.wait_for(1));
  Batch third;
  EXPECT_NO_THROW(third = loader.next());
  EXPECT_TRUE(third);
  releaser.get();
  EXPECT_EQ(third.index(), 2u);
}

Counter delivered_count;
Counter released_in_hook;
std::atomic<bool> reaugment_saw_delivery{false};
Batch* batch_to_release = nullptr;

void count_delivery() {
  delivered_count.add();
}

void release_and_wait_for_a_delivery() {
  // While the consumer re-augments an echo, a batch is released (a slot frees, the graph reads
  // the next batch) and must be delivered meanwhile: the ready queue's lock is not held.
  const std::uint64_t before = delivered_count.value();
  if (batch_to_release != nullptr) std::exchange(batch_to_release, nullptr)->release();
  released_in_hook.add();
  reaugment_saw_delivery = delivered_count.wait_for(before + 1, 10s);
}

TEST_F(Concurrency, WorkersDeliverWhileTheConsumerReaugmentsAnEcho) {
  LoaderOptions o = options();
  o.echo = EchoOptions::parse("2");
  o.image.augment = Augment::flip;
  o.resources.prefetch = 2;  // three slots
  Loader loader(o);
  ScopedHook delivered(test_hooks.delivered, count_delivery);
  delivered_count.reset();
  released_in_hook.reset();
  loader.start_epoch(0);
  Batch zero = loader.next();  // fresh 0, held until the re-augment below
  loader.next().release();     // its echo, in the echo slot
  Batch one = loader.next();   // fresh 1, held: its echo goes to the echo slot
  Batch two;
  ASSERT_TRUE(delivered_count.wait_for(3)) << "the third slot's batch was never delivered";
  batch_to_release = &zero;
  reaugment_saw_delivery = false;
  {
    ScopedHook reaugmenting(test_hooks.reaugmenting, release_and_wait_for_a_delivery);
    two = loader.next();
  }
  ASSERT_EQ(released_in_hook.value(), 1u) << "the echo was not re-augmented";
  EXPECT_TRUE(two.echoed());
  EXPECT_TRUE(reaugment_saw_delivery) << "deliveries waited for the re-augment";
  // The epoch goes on to its end, every batch fresh once and echoed once.
  zero.release();
  one.release();
  two.release();
  std::uint64_t n = 4;
  for (Batch b = loader.next(); b; b = loader.next()) ++n;
  EXPECT_EQ(n, 2 * loader.batches_per_epoch());
}

Counter reaugment_entered;
Counter reaugment_may_finish;

void hold_the_reaugment() {
  reaugment_entered.add();
  reaugment_may_finish.wait_for(1);
}

TEST_F(Concurrency, AnEpochStartedElsewhereWaitsForAReaugmentInProgress) {
  // start_epoch() on another thread stops the running epoch while next() re-augments its echo
  // without the queue's lock: the stop must wait until next() no longer writes the slot.
  LoaderOptions o = options();
  o.echo = EchoOptions::parse("2");
  o.image.augment = Augment::flip;
  Loader loader(o);
  reaugment_entered.reset();
  reaugment_may_finish.reset();
  ScopedHook hook(test_hooks.reaugmenting, hold_the_reaugment);
  loader.start_epoch(0);
  loader.next().release();  // fresh 0; its echo is re-augmented in place
  auto echo = std::async(std::launch::async, [&] { return loader.next(); });
  ASSERT_TRUE(reaugment_entered.wait_for(1));
  auto stopped = std::async(std::launch::async, [&] { loader.start_epoch(1); });
  EXPECT_EQ(stopped.wait_for(200ms), std::future_status::timeout)
      << "the epoch stopped while next() was still writing a slot";
  reaugment_may_finish.add();
  stopped.get();
  Batch b = echo.get();
  EXPECT_TRUE(b.echoed());
  EXPECT_EQ(b.epoch(), 0u);
  b.release();
  Batch next = loader.next();
  ASSERT_TRUE(next) << "the next epoch works";
  EXPECT_EQ(next.epoch(), 1u);
}

}  // namespace
}  // namespace gpufeed::pipeline
