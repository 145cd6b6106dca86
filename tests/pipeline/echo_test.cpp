#include "gpufeed/pipeline/echo.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "dataset_fixture.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "temp_dir.hpp"

namespace gpufeed {
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

TEST(StallInjection, Parses) {
  const StallInjection s = StallInjection::parse("read:50@10");
  EXPECT_EQ(s.stage, Stage::read);
  EXPECT_EQ(s.ms, 50u);
  EXPECT_EQ(s.every, 10u);
  EXPECT_TRUE(s.hits(20));
  EXPECT_FALSE(s.hits(21));
  EXPECT_EQ(StallInjection::parse("normalize:5").every, 1u);
  for (const char* bad : {"read", "read:x", "bogus:5", "read:5@0", "wait:5", "read:5@"}) {
    EXPECT_THROW(StallInjection::parse(bad), UsageError) << bad;
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
    LoaderOptions o;
    o.path = path_;
    o.batch_size = 32;
    o.workers = 2;
    o.prefetch = 2;
    o.order = Order::random;
    o.shard = Shard{};
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

TEST_F(EchoLoader, AdaptiveEchoFillsInForASlowProducer) {
  // Reading stalls 30 ms on every batch while the consumer asks at once: each fresh batch is
  // followed by echoes up to the cap while the next one is still being read.
  LoaderOptions o = options("auto:3");
  o.workers = 1;
  o.prefetch = 1;
  o.inject_stall = StallInjection::parse("read:30@1");
  Loader loader(o);
  std::uint64_t fresh = 0, echoed = 0;
  for (Batch& b : loader.epoch(0)) (b.echoed() ? echoed : fresh) += 1;
  EXPECT_EQ(fresh, 20u);  // every fresh batch exactly once
  EXPECT_EQ(loader.stats().fresh_batches, 20u);
  EXPECT_EQ(loader.stats().echoed_batches, echoed);
  // Up to the cap after every fresh batch but the last; how many depends on scheduling (a
  // descheduled consumer may find the next batch ready), but a 30 ms stall leaves many gaps.
  EXPECT_GT(echoed, 10u);
  EXPECT_LE(echoed, 3u * 19u);
}

TEST_F(EchoLoader, AdaptiveEchoCostsNothingWhenInputKeepsUp) {
  Loader loader(options("auto"));
  loader.start_epoch(0);
  std::uint64_t fresh = 0, echoed = 0;
  for (;;) {
    // Give the workers time to refill before each request: a fresh batch is always ready.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
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

}  // namespace
}  // namespace gpufeed
