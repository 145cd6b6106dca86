// GPUFEED_RANGE: one NVTX range and one recorder range per scope.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpufeed/profiler/range.hpp"

namespace gpufeed::profiler {
namespace {

std::vector<std::string> names_in_order(const RecorderSnapshot& snap) {
  std::vector<std::string> out;
  for (const RangeEvent& e : snap.events) out.emplace_back(snap.name_of(e));
  return out;
}

TEST(ScopedRange, NestedRangesAreRecordedWithProperContainment) {
  Recorder::global().set_enabled(true);
  Recorder::global().clear();
  {
    GPUFEED_RANGE("step");
    { GPUFEED_RANGE_ARG("decode", 42); }
    { GPUFEED_RANGE("h2d"); }
  }
  const RecorderSnapshot snap = Recorder::global().snapshot();
  ASSERT_EQ(snap.events.size(), 3u);
  EXPECT_EQ(names_in_order(snap), (std::vector<std::string>{"step", "decode", "h2d"}));
  const RangeEvent& outer = snap.events[0];
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_GE(snap.events[i].begin_ns, outer.begin_ns);
    EXPECT_LE(snap.events[i].end_ns, outer.end_ns);
  }
  EXPECT_LE(snap.events[1].end_ns, snap.events[2].begin_ns);
  EXPECT_EQ(snap.events[1].arg, 42);
  EXPECT_FALSE(outer.has_arg());
}

TEST(ScopedRange, DisabledRecorderKeepsRangesCheap) {
  Recorder::global().clear();
  Recorder::global().set_enabled(false);
  { GPUFEED_RANGE("wait"); }
  Recorder::global().set_enabled(true);
  EXPECT_TRUE(Recorder::global().snapshot().events.empty());
}

TEST(ScopedRange, SameSiteRegistersItsNameOnce) {
  Recorder& recorder = Recorder::global();
  recorder.set_enabled(true);
  recorder.clear();
  std::size_t names_after_first = 0;
  for (int i = 0; i < 3; ++i) {
    { GPUFEED_RANGE("same_site_once"); }
    if (i == 0) names_after_first = recorder.snapshot().names.size();
  }
  const RecorderSnapshot snap = recorder.snapshot();
  ASSERT_EQ(snap.events.size(), 3u);
  // Later passes through the site add nothing to the name table.
  EXPECT_EQ(snap.names.size(), names_after_first);
  EXPECT_EQ(std::count(snap.names.begin(), snap.names.end(), "same_site_once"), 1);
  const NameId id = snap.events[0].name;
  for (const RangeEvent& e : snap.events) EXPECT_EQ(e.name, id);
  EXPECT_EQ(snap.name_of(snap.events[0]), "same_site_once");

  // Another site with the same name shares the id; a new name gets a new one.
  { GPUFEED_RANGE("same_site_once"); }
  EXPECT_EQ(recorder.snapshot().events.back().name, id);
  EXPECT_EQ(recorder.register_name("same_site_once"), id);
  EXPECT_EQ(recorder.snapshot().names.size(), names_after_first);
  const NameId other = recorder.register_name("same_site_once_other");
  EXPECT_NE(other, id);
  const RecorderSnapshot after = recorder.snapshot();
  ASSERT_LT(other, after.names.size());
  EXPECT_EQ(after.names[other], "same_site_once_other");
  EXPECT_EQ(after.names[id], "same_site_once");
}

}  // namespace
}  // namespace gpufeed::profiler
