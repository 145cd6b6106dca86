// GPUFEED_RANGE: one NVTX range and one recorder range per scope.
#include <gtest/gtest.h>

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
  Recorder::global().clear();
  for (int i = 0; i < 3; ++i) {
    GPUFEED_RANGE("normalize");
  }
  const RecorderSnapshot snap = Recorder::global().snapshot();
  ASSERT_EQ(snap.events.size(), 3u);
  EXPECT_EQ(snap.events[0].name, snap.events[2].name);
}

}  // namespace
}  // namespace gpufeed::profiler
