#include "gpufeed/pipeline/echo.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/normalize.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"
#include "test_hooks.hpp"

namespace gpufeed::pipeline {
namespace {

using Action = EchoStage::Action;

TEST(EchoOptions, Parses) {
  EXPECT_EQ(EchoOptions::parse("1").factor, 1u);
  EXPECT_FALSE(EchoOptions::parse("1").enabled());
  EXPECT_EQ(EchoOptions::parse("3").factor, 3u);
  EXPECT_TRUE(EchoOptions::parse("auto").adaptive);
  EXPECT_EQ(EchoOptions::parse("auto:2").cap, 2u);
  EXPECT_EQ(EchoOptions::parse("auto:2").to_string(), "auto:2");
  for (const char* bad : {"0", "x", "auto:", "auto:0", "65", "-1", "2.5"}) {
    EXPECT_THROW(EchoOptions::parse(bad), UsageError) << bad;
  }
}

TEST(EchoStage, FixedFactorRepeatsEveryBatchWhetherOrNotInputIsReady) {
  EchoStage e(EchoOptions::parse("3"));
  EXPECT_EQ(e.next_action(false, true), Action::wait);
  EXPECT_EQ(e.next_action(true, true), Action::fresh);
  e.delivered_fresh();
  EXPECT_TRUE(e.holds_current());
  EXPECT_EQ(e.next_action(true, true), Action::echo);  // even with a fresh batch ready
  e.delivered_echo();
  EXPECT_EQ(e.next_action(true, false), Action::echo);  // and after the last fresh batch
  e.delivered_echo();
  EXPECT_FALSE(e.holds_current());
  EXPECT_EQ(e.next_action(true, true), Action::fresh);
  EXPECT_EQ(e.next_action(false, false), Action::end);
  EXPECT_EQ(e.fresh_batches(), 1u);
  EXPECT_EQ(e.echoed_batches(), 2u);
}

TEST(EchoStage, AdaptiveEchoesOnlyWhenNoFreshBatchIsReadyUpToTheCap) {
  EchoStage e(EchoOptions::parse("auto:2"));
  EXPECT_EQ(e.next_action(false, true), Action::wait);  // nothing to echo yet
  e.delivered_fresh();
  EXPECT_EQ(e.next_action(true, true), Action::fresh);  // input keeps up: no echo
  EXPECT_EQ(e.next_action(false, true), Action::echo);
  e.delivered_echo();
  EXPECT_EQ(e.next_action(false, true), Action::echo);
  e.delivered_echo();
  EXPECT_FALSE(e.holds_current());
  EXPECT_EQ(e.next_action(false, true), Action::wait);  // cap reached
  EXPECT_EQ(e.next_action(false, false), Action::end);  // no echoes past the epoch's end
  e.delivered_fresh();
  EXPECT_TRUE(e.holds_current());
}

class EchoLoader : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, 640, shape_, 32); }
  LoaderOptions options(const std::string& echo) const {
    LoaderOptions o = testing::random_order_options(path_, 32, 0);
    o.echo = EchoOptions::parse(echo);
    return o;
  }
  formats::SampleShape shape_{4, 4, 3, formats::Layout::nhwc};
  testing::TempDir dir_;
  std::string path_ = dir_.file("echo.h5");
};

TEST_F(EchoLoader, FixedFactorDeliversEachBatchTwiceInOrder) {
  Loader loader(options("2"));
  std::uint64_t n = 0;
  std::uint64_t last_fresh = ~0ull;
  std::set<std::uint64_t> samples;
  for (Batch& b : loader.epoch(0)) {
    if (n % 2 == 0) {
      EXPECT_FALSE(b.echoed());
      last_fresh = b.index();
      for (auto i : b.sample_indices()) samples.insert(i);
    } else {
      EXPECT_TRUE(b.echoed());
      EXPECT_EQ(b.index(), last_fresh);  // the same batch again
      EXPECT_EQ(b.raw()[0], testing::pixel(b.sample_indices()[0], 0));
    }
    ++n;
  }
  EXPECT_EQ(n, 40u);
  EXPECT_EQ(samples.size(), 640u);
  EXPECT_EQ(loader.stats().fresh_batches, 20u);
  EXPECT_EQ(loader.stats().echoed_batches, 20u);
}

testing::Counter deliveries_begun;
testing::Counter deliveries_allowed;
testing::Counter deliveries_done;

void gate_delivery() {
  // deliver() is serial: the k-th call waits until the test allowed k + 1 deliveries.
  const std::uint64_t k = deliveries_begun.value();
  deliveries_begun.add();
  deliveries_allowed.wait_for(k + 1);
}

void count_delivery() {
  deliveries_done.add();
}

TEST_F(EchoLoader, AdaptiveEchoFillsInForASlowProducer) {
  // The next fresh batch reaches the ready queue only after the consumer has taken every echo
  // the cap allows of the one before: each request in between finds nothing fresh ready.
  testing::ScopedHook gate(detail::test_hooks.delivering, gate_delivery);
  deliveries_begun.reset();
  deliveries_allowed.reset();
  Loader loader(options("auto:3"));
  deliveries_allowed.add();
  std::uint64_t fresh = 0, echoed = 0;
  std::uint32_t echoes_of_current = 0;
  for (Batch& b : loader.epoch(0)) {
    if (!b.echoed()) {
      ++fresh;
      echoes_of_current = 0;
      continue;
    }
    ++echoed;
    if (++echoes_of_current == 3) deliveries_allowed.add();
  }
  EXPECT_EQ(fresh, 20u);  // every fresh batch exactly once
  EXPECT_EQ(echoed, 3u * 19u) << "the cap after every fresh batch but the last";
  EXPECT_EQ(loader.stats().fresh_batches, 20u);
  EXPECT_EQ(loader.stats().echoed_batches, echoed);
}

TEST_F(EchoLoader, AdaptiveEchoCostsNothingWhenInputKeepsUp) {
  // Each request waits until the next fresh batch is in the ready queue: no echo is needed.
  testing::ScopedHook count(detail::test_hooks.delivered, count_delivery);
  deliveries_done.reset();
  Loader loader(options("auto"));
  loader.start_epoch(0);
  std::uint64_t fresh = 0, echoed = 0;
  for (;;) {
    if (fresh < loader.batches_per_epoch()) {
      ASSERT_TRUE(deliveries_done.wait_for(fresh + 1));
    }
    Batch b = loader.next();
    if (!b) break;
    (b.echoed() ? echoed : fresh) += 1;
  }
  EXPECT_EQ(fresh, 20u);
  EXPECT_EQ(echoed, 0u);
}

TEST_F(EchoLoader, HeldBatchIsNotOverwritten) {
  Loader loader(options("2"));
  loader.start_epoch(0);
  Batch held = loader.next();
  const std::vector<std::uint8_t> before(held.raw().begin(), held.raw().end());
  const std::vector<float> images(held.images().begin(), held.images().end());
  for (Batch b = loader.next(); b; b = loader.next()) {
  }
  EXPECT_TRUE(std::equal(before.begin(), before.end(), held.raw().begin()));
  EXPECT_TRUE(std::equal(images.begin(), images.end(), held.images().begin()));
}

/// A sample's stored pixels (NHWC), mirrored left-right when `flip`.
std::vector<std::uint8_t> expected_pixels(std::uint64_t sample, const formats::SampleShape& s,
                                          bool flip) {
  std::vector<std::uint8_t> out(s.bytes());
  for (std::uint32_t y = 0; y < s.height; ++y) {
    for (std::uint32_t x = 0; x < s.width; ++x) {
      const std::uint32_t from = flip ? s.width - 1 - x : x;
      for (std::uint32_t c = 0; c < s.channels; ++c) {
        out[(y * s.width + x) * s.channels + c] =
            testing::pixel(sample, (y * s.width + from) * s.channels + c);
      }
    }
  }
  return out;
}

/// Checks that `b` shows repeat `repeat` of its samples (seed 5, epoch 1): the fresh flip, then
/// this repeat's mirror of it, normalized. Counts the echoed samples mirrored and kept.
void check_repeat(const Loader& loader, const Batch& b, std::uint32_t repeat,
                  std::uint64_t& mirrored, std::uint64_t& kept) {
  const formats::SampleShape shape = loader.sample_shape();
  const std::uint64_t bytes = shape.bytes();
  for (std::uint32_t i = 0; i < b.size(); ++i) {
    const std::uint64_t sample = b.sample_indices()[i];
    const bool fresh = formats::random_flip(5, 1, sample);
    const bool echo = echo_flip(5, 1, sample, repeat);
    (echo ? mirrored : kept) += repeat > 0 ? 1 : 0;
    const auto pixels = expected_pixels(sample, shape, fresh != echo);
    ASSERT_TRUE(std::equal(pixels.begin(), pixels.end(), b.raw().begin() + i * bytes))
        << "sample " << sample << " repeat " << repeat;
  }
  // The float output is the normalization of exactly these pixels.
  std::vector<float> want(b.images().size());
  const auto& stats = *loader.dataset().channel_stats();
  normalize_reference(b.raw().data(), shape, b.size(), stats.mean, stats.stddev, want.data());
  for (std::size_t e = 0; e < want.size(); ++e) ASSERT_FLOAT_EQ(b.images()[e], want[e]);
}

TEST_F(EchoLoader, ReaugmentedEchoesDrawANewFlipPerRepeat) {
  LoaderOptions o = options("3");
  o.image.augment = Augment::flip;
  o.sampling.seed = 5;
  Loader loader(o);
  std::uint32_t repeat = 0;
  std::uint64_t mirrored = 0, kept = 0;
  for (Batch& b : loader.epoch(1)) {
    repeat = b.echoed() ? repeat + 1 : 0;
    check_repeat(loader, b, repeat, mirrored, kept);
  }
  const LoaderStats s = loader.stats();
  EXPECT_EQ(s.echoed_batches, 40u);
  EXPECT_EQ(s.reaugmented_batches, 40u);
  // 1280 echoed samples, each mirrored with probability 1/2.
  EXPECT_GT(mirrored, 500u);
  EXPECT_GT(kept, 500u);
}

TEST_F(EchoLoader, EchoesAreReaugmentedWhileTheConsumerHoldsThePreviousDelivery) {
  // A Python loop holds the previous batch's tensors while it asks for the next one: the echo
  // goes to the echo slot, every echo still shows its own flip, and nothing held changes.
  LoaderOptions o = options("3");
  o.image.augment = Augment::flip;
  o.sampling.seed = 5;
  Loader loader(o);
  loader.start_epoch(1);
  std::uint32_t repeat = 0;
  std::uint64_t mirrored = 0, kept = 0;
  Batch previous;
  std::vector<float> previous_images;
  for (Batch b = loader.next(); b; b = loader.next()) {
    EXPECT_TRUE(!previous || std::equal(previous_images.begin(), previous_images.end(),
                                        previous.images().begin()))
        << "a held batch changed";
    repeat = b.echoed() ? repeat + 1 : 0;
    check_repeat(loader, b, repeat, mirrored, kept);
    previous = std::move(b);  // released only after the next request
    previous_images.assign(previous.images().begin(), previous.images().end());
  }
  EXPECT_EQ(loader.stats().reaugmented_batches, 40u);
  EXPECT_GT(mirrored, 500u);
  EXPECT_GT(kept, 500u);
}

TEST_F(EchoLoader, EchoesRepeatTheBatchUnchangedWhenEveryDeliveryOfItIsHeld) {
  LoaderOptions o = options("3");
  o.image.augment = Augment::flip;
  Loader loader(o);
  loader.start_epoch(0);
  Batch fresh = loader.next();
  const std::vector<float> images(fresh.images().begin(), fresh.images().end());
  Batch first = loader.next();  // `fresh` is held: the echo slot shows repeat 1
  ASSERT_TRUE(first.echoed());
  const std::vector<float> first_images(first.images().begin(), first.images().end());
  Batch second = loader.next();  // both held: nothing may be overwritten
  ASSERT_TRUE(second.echoed());
  EXPECT_TRUE(std::equal(images.begin(), images.end(), fresh.images().begin()));
  EXPECT_TRUE(std::equal(first_images.begin(), first_images.end(), first.images().begin()));
  EXPECT_TRUE(std::equal(images.begin(), images.end(), second.images().begin()));
  EXPECT_EQ(loader.stats().reaugmented_batches, 1u);
}

TEST_F(EchoLoader, ReaugmentingCanBeTurnedOff) {
  LoaderOptions o = options("2");
  o.image.augment = Augment::flip;
  o.echo.reaugment = false;
  Loader loader(o);
  std::vector<std::uint8_t> last;
  for (Batch& b : loader.epoch(0)) {
    if (b.echoed()) {
      EXPECT_TRUE(std::equal(last.begin(), last.end(), b.raw().begin()));
    }
    last.assign(b.raw().begin(), b.raw().end());
  }
  EXPECT_EQ(loader.stats().reaugmented_batches, 0u);
}

}  // namespace
}  // namespace gpufeed::pipeline
