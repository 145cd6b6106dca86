// CuptiCollector must never take the host program down: without a GPU (or with a failing CUPTI)
// it reports itself unavailable once and every call stays harmless.
#include <gtest/gtest.h>

#include <string>

#include "gpufeed/profiler/clock_alignment.hpp"
#include "gpufeed/profiler/cupti_collector.hpp"

namespace gpufeed::profiler {
namespace {

std::size_t count_lines(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST(CuptiCollector, WithoutDeviceStartFailsOnceQuietlyAfterwards) {
  CuptiCollector& c = CuptiCollector::instance();
  ::testing::internal::CaptureStderr();
  const bool started = c.start();
  const bool again = c.start();
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (started) {
    c.stop();
    GTEST_SKIP() << "a CUDA device is present; the unavailable path is not reachable here";
  }
  EXPECT_FALSE(again);
  EXPECT_FALSE(c.available());
  EXPECT_FALSE(c.active());
  EXPECT_FALSE(c.unavailable_reason().empty());
  EXPECT_EQ(count_lines(err, "gpufeed profiler: CUPTI unavailable"), 1u) << err;
  EXPECT_EQ(count_lines(err, "\n"), 1u) << err;
}

TEST(CuptiCollector, CallsAreHarmlessWhenNotStarted) {
  CuptiCollector& c = CuptiCollector::instance();
  c.stop();
  c.stop();
  Timeline t;
  t.host.push_back({"step", 10, 20, 1, kNoArg, 0, {}});
  c.append_to(t);
  if (!c.available()) {
    EXPECT_TRUE(t.device.empty());
    ASSERT_EQ(t.host.size(), 1u);
    EXPECT_EQ(c.stats().records, 0u);
  }
}

TEST(ClockAlignment, InterpolatesDriftBetweenStartAndStop) {
  ClockAlignment a({1'000, 500, 0});
  EXPECT_EQ(a.to_host(1'000), 1'500);
  a.set_stop({11'000, 600, 0});  // the host clock gained 100 ns over 10 us of the other clock
  EXPECT_EQ(a.to_host(1'000), 1'500);
  EXPECT_EQ(a.to_host(6'000), 6'550);
  EXPECT_EQ(a.to_host(11'000), 11'600);
}

TEST(ClockAlignment, MeasureKeepsTightestBracketAndReportsFailure) {
  ClockPair p;
  std::int64_t fake = 0;
  ASSERT_TRUE(measure_clock_pair(
      [&](std::int64_t& t) {
        t = now_ns() - 1'000'000;  // the other clock runs 1 ms behind
        return ++fake > 0;
      },
      p));
  EXPECT_NEAR(static_cast<double>(p.offset_ns), 1e6, 1e5);
  EXPECT_GE(p.uncertainty_ns, 0);
  ClockPair untouched{7, 7, 7};
  EXPECT_FALSE(measure_clock_pair([](std::int64_t&) { return false; }, untouched));
  EXPECT_EQ(untouched.offset_ns, 7);
}

}  // namespace
}  // namespace gpufeed::profiler
