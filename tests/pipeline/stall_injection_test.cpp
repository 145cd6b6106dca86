// The injected stall, a testing aid outside LoaderOptions: what GPUFEED_INJECT_STALL and
// testing::StallOverride make a loader built under them do, and the messages of a bad one.
#include "gpufeed/pipeline/stall_injection.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;
using testing::ScopedEnv;

constexpr formats::SampleShape kShape{4, 4, 3, formats::Layout::nhwc};
constexpr std::uint64_t kBatches = 6;
constexpr std::int64_t kStallNs = 20'000'000;  // read:20@1

class InjectedStall : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, kBatches * 8, kShape, 8); }

  /// The read stage's busy time over one epoch of a loader built now.
  [[nodiscard]] std::int64_t read_busy_ns() const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 8;
    o.resources.workers = 1;
    o.sampling.order = Order::sequential;
    o.sampling.shard = Shard{};
    Loader loader(o);
    for (Batch& b : loader.epoch(0)) (void)b;
    return loader.stats()[Stage::read].busy_ns;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

TEST_F(InjectedStall, TheEnvironmentVariableStallsTheLoadersBuiltUnderIt) {
  const ScopedEnv env(testing::kStallVariable, "read:20@1");
  EXPECT_GE(read_busy_ns(), kStallNs * static_cast<std::int64_t>(kBatches));
}

TEST_F(InjectedStall, AnOverrideWinsOverTheEnvironmentAndEndsWithItsScope) {
  const ScopedEnv env(testing::kStallVariable, "read:1000@1");
  {
    const testing::StallOverride none(std::nullopt);
    EXPECT_LT(read_busy_ns(), kStallNs * static_cast<std::int64_t>(kBatches));
  }
  const ScopedEnv unset(testing::kStallVariable, nullptr);
  EXPECT_FALSE(testing::injected_stall().has_value());
  const testing::StallOverride stall(StallInjection{Stage::read, 20, 1});
  EXPECT_EQ(testing::injected_stall()->str(), "read:20@1");
}

TEST_F(InjectedStall, AMalformedVariableIsAUsageErrorNamingIt) {
  const ScopedEnv env(testing::kStallVariable, "sleep");
  try {
    (void)read_busy_ns();
    FAIL() << "a malformed GPUFEED_INJECT_STALL was taken";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GPUFEED_INJECT_STALL=sleep: expected STAGE:MS"));
  }
}

TEST(StallInjection, Parses) {
  const StallInjection s = StallInjection::parse("read:50@10", "--inject-stall");
  EXPECT_EQ(s.stage, Stage::read);
  EXPECT_EQ(s.ms, 50u);
  EXPECT_EQ(s.every, 10u);
  EXPECT_TRUE(s.hits(20));
  EXPECT_FALSE(s.hits(21));
  EXPECT_EQ(StallInjection::parse("normalize:5", "--inject-stall").every, 1u);
  for (const char* bad : {"read", "read:x", "bogus:5", "read:5@0", "wait:5", "read:5@"}) {
    EXPECT_THROW((void)StallInjection::parse(bad, "--inject-stall"), UsageError) << bad;
  }
}

}  // namespace
}  // namespace gpufeed::pipeline
