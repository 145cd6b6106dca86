// The slot plan: how many batch slots a loader allocates for its options and samples, the
// prefetch depths prefetch=auto moves between, and the limits it refuses.
#include "slot_plan.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::pipeline::detail {
namespace {

constexpr std::uint64_t kSample = 64 * 64 * 3;
/// One batch slot of 32 samples as the memory budget counts it: uint8 pixels and float32 output.
constexpr std::uint64_t kSlot = 32 * kSample * 5;

LoaderOptions options(AutoCount prefetch) {
  LoaderOptions o;
  o.sampling.batch_size = 32;
  o.resources.prefetch = prefetch;
  return o;
}

LoaderOptions tuned(std::uint64_t memory_bytes) {
  LoaderOptions o = options(AutoCount::automatic());
  o.resources.memory_bytes = memory_bytes;
  return o;
}

TEST(SlotPlan, FixedPrefetchIsTheQueuePlusTheConsumersSlot) {
  const SlotPlan p = plan_slots(options(4), kSample, false, false, true);
  EXPECT_FALSE(p.tuned_prefetch);
  EXPECT_EQ(p.batch_size, 32u);
  EXPECT_EQ(p.extra_slots, 1u);
  EXPECT_EQ(p.max_prefetch, 4u);
  EXPECT_EQ(p.start_prefetch, 4u);
  EXPECT_EQ(p.batch_slots, 5u);
  EXPECT_EQ(p.echo_slots, 0u);
  EXPECT_EQ(p.slot_bytes, kSlot);
  EXPECT_EQ(p.raw_bytes, kSample);
  EXPECT_EQ(p.echo_raw_bytes, kSample);
  EXPECT_EQ(p.output_bytes, kSample * sizeof(float));
}

TEST(SlotPlan, AutoPrefetchIsWhatTheMemoryBudgetHolds) {
  const SlotPlan p = plan_slots(tuned(6 * kSlot), kSample, false, false, true);
  EXPECT_TRUE(p.tuned_prefetch);
  EXPECT_EQ(p.batch_slots, 6u);  // every slot the budget holds
  EXPECT_EQ(p.max_prefetch, 5u);
  EXPECT_EQ(p.start_prefetch, 2u);
  EXPECT_LE(p.batch_slots * p.slot_bytes, 6 * kSlot);
  // A budget between two slot counts rounds down.
  EXPECT_EQ(plan_slots(tuned(7 * kSlot - 1), kSample, false, false, true).max_prefetch, 5u);
}

TEST(SlotPlan, AutoPrefetchIsOneToSixteenBatches) {
  EXPECT_EQ(plan_slots(tuned(1000 * kSlot), kSample, false, false, true).max_prefetch, 16u);
  // 0: a budget of 1 GiB, which holds more than 16 of these slots.
  EXPECT_EQ(plan_slots(tuned(0), kSample, false, false, true).max_prefetch, 16u);
  // Less than one slot: still one batch ahead, and it starts there.
  const SlotPlan small = plan_slots(tuned(kSlot / 2), kSample, false, false, true);
  EXPECT_EQ(small.max_prefetch, 1u);
  EXPECT_EQ(small.start_prefetch, 1u);
  EXPECT_EQ(small.batch_slots, 2u);
  EXPECT_EQ(plan_slots(tuned(2 * kSlot), kSample, false, false, true).max_prefetch, 1u);
}

TEST(SlotPlan, EchoKeepsOneMoreSlotAndReaugmentedEchoesTheirOwn) {
  LoaderOptions o = tuned(6 * kSlot);
  o.echo.factor = 2;
  const SlotPlan p = plan_slots(o, kSample, false, false, true);
  EXPECT_EQ(p.extra_slots, 2u);
  EXPECT_EQ(p.max_prefetch, 4u);  // the budget's six slots, less the consumer's and the echo's
  EXPECT_EQ(p.batch_slots, 6u);
  EXPECT_EQ(p.echo_slots, 0u);
  EXPECT_EQ(plan_slots(o, kSample, false, true, true).echo_slots, 1u);

  LoaderOptions fixed = options(3);
  fixed.echo.adaptive = true;
  EXPECT_EQ(plan_slots(fixed, kSample, false, false, true).batch_slots, 5u);
}

TEST(SlotPlan, StagedOutputHoldsNoHostOutputAndEchoSlotsNoPixels) {
  const SlotPlan p = plan_slots(options(4), kSample, true, true, true);
  EXPECT_EQ(p.raw_bytes, kSample);
  EXPECT_EQ(p.echo_raw_bytes, 0u);
  EXPECT_EQ(p.output_bytes, 0u);
  EXPECT_EQ(p.slot_bytes, kSlot);  // the budget counts the same bytes on every device
}

TEST(SlotPlan, PrefetchOutOfRangeIsRefusedByTheFieldTable) {
  for (const unsigned prefetch : {0u, 257u}) {
    try {
      check_options(options(prefetch));
      ADD_FAILURE() << "prefetch " << prefetch << " was accepted";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.field(), "prefetch");
      EXPECT_EQ(e.message_template(),
                "{prefetch}=" + std::to_string(prefetch) + ": use 1 to 256, or auto");
    }
  }
  EXPECT_NO_THROW(check_options(options(256)));
  EXPECT_EQ(plan_slots(options(256), kSample, false, false, true).batch_slots, 257u);
}

TEST(SlotPlan, RefusesPoolsOverSixtyFourGiB) {
  LoaderOptions o = options(3);
  o.sampling.batch_size = 1u << 20;
  const std::uint64_t sample = 4096;  // 20 GiB a slot, 80 GiB for four
  try {
    plan_slots(o, sample, false, false, true);
    FAIL() << "80 GiB of slots were accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "batch_size");
    EXPECT_EQ(e.message_template(),
              "{batch_size}=1048576 with {prefetch}=3 needs 81920 MiB of "
              "batch slots (limit 65536 MiB); lower {batch_size} or "
              "{prefetch}");
  }
  o.resources.prefetch = 2;  // 60 GiB
  EXPECT_EQ(plan_slots(o, sample, false, false, true).batch_slots, 3u);
}

}  // namespace
}  // namespace gpufeed::pipeline::detail
