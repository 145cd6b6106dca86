// The one table of stage names: every stage has one name, and names parse back to their stage.
#include "gpufeed/base/stages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

namespace gpufeed {
namespace {

TEST(Stages, EveryStageHasAUniqueNameThatParsesBack) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kStageCount; ++i) {
    const auto stage = static_cast<Stage>(i);
    const char* name = stage_name(stage);
    ASSERT_NE(name, nullptr);
    EXPECT_FALSE(std::string_view(name).empty());
    EXPECT_TRUE(names.insert(name).second) << "duplicate stage name " << name;
    EXPECT_EQ(parse_stage(name), stage) << name;
    EXPECT_EQ(kStages[i].stage, stage);
  }
  EXPECT_EQ(names.size(), kStageCount);
}

TEST(Stages, NamesAreTheOnesReportsAndOptionsUse) {
  std::string all;
  for (const StageInfo& s : kStages) all += std::string(all.empty() ? "" : " ") + s.name;
  EXPECT_EQ(all, "read decode assemble h2d normalize echo transform wait step");
}

TEST(Stages, UnknownNamesDoNotParse) {
  EXPECT_FALSE(parse_stage(""));
  EXPECT_FALSE(parse_stage("Read"));  // case matters
  EXPECT_FALSE(parse_stage("read "));
  EXPECT_FALSE(parse_stage("h2"));
  EXPECT_FALSE(parse_stage("gpu"));
}

TEST(Stages, LoaderStagesAreTheNonConsumerStagesInTableOrder) {
  std::vector<Stage> expected;
  for (const StageInfo& s : kStages) {
    if (s.loader) expected.push_back(s.stage);
  }
  EXPECT_TRUE(
      std::equal(kLoaderStages.begin(), kLoaderStages.end(), expected.begin(), expected.end()));
  EXPECT_FALSE(kStages[static_cast<std::size_t>(Stage::wait)].loader);
  EXPECT_FALSE(kStages[static_cast<std::size_t>(Stage::step)].loader);
}

}  // namespace
}  // namespace gpufeed
