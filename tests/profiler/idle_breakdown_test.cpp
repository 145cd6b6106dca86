// Nanosecond-resolution Kineto timestamps: read exactly, and rounded as HolisticTraceAnalysis
// rounds them when it computes idle time (its float64 microseconds, a quarter of a microsecond
// apart at epoch timestamps).
#include <gtest/gtest.h>

#include "gpufeed/profiler/idle_breakdown.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"

namespace gpufeed::profiler {
namespace {

// Microseconds since the epoch in 2024, as the PyTorch profiler writes them.
constexpr std::int64_t kEpochUs = 1'712'195'495'505'583;

TEST(KinetoTimestamps, EpochMicrosecondsReadToTheNanosecond) {
  // 583.000 is whole; .650 parses to the double ...772.75, the nearest a double holds there.
  const KinetoTrace k = KinetoTrace::parse(R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7,
     "ts": 1712195495505583.000, "dur": 4.928, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7,
     "ts": 1712195495505772.650, "dur": 2.752, "args": {"stream": 7}}]})json");
  ASSERT_EQ(k.timeline.device.size(), 2u);
  // ts * 1000 in double would give ...583'104 (the double grid there is 256 ns wide).
  EXPECT_EQ(k.timeline.device[0].begin_ns, kEpochUs * 1000);
  EXPECT_EQ(k.timeline.device[0].end_ns, kEpochUs * 1000 + 4'928);
  EXPECT_EQ(k.timeline.device[1].begin_ns, (kEpochUs + 189) * 1000 + 750);
  EXPECT_EQ(k.timeline.device[1].end_ns, (kEpochUs + 189) * 1000 + 750 + 2'752);
}

/// Two kernels on stream 7, launched before the stream went idle, `gap_ns` apart.
Timeline back_to_back(std::int64_t origin_ns, std::int64_t first_ns, std::int64_t gap_ns) {
  Timeline t;
  t.host.push_back({"launch", origin_ns - 100'000, origin_ns - 99'000, 1, kNoArg, 1, ""});
  t.host.push_back({"launch", origin_ns - 90'000, origin_ns - 89'000, 1, kNoArg, 2, ""});
  DeviceActivity a;
  a.stream = 7;
  a.correlation = 1;
  a.begin_ns = origin_ns;
  a.end_ns = origin_ns + first_ns;
  DeviceActivity b = a;
  b.correlation = 2;
  b.begin_ns = a.end_ns + gap_ns;
  b.end_ns = b.begin_ns + 10'000;
  t.device = {a, b};
  return t;
}

TEST(HtaIdleBreakdown, EndsAreSummedInFloat64AsHtaSumsThem) {
  // HTA: ts 1712195495505583.0 + dur 4.928 is ...588.0 in float64, floored to 588; the next
  // kernel starts at ...588.0, so no gap. The exact end, ...587.928, floors to 587.
  const auto epoch = idle_time_breakdown(back_to_back(kEpochUs * 1000, 4'928, 72));
  ASSERT_EQ(epoch.size(), 1u);
  EXPECT_EQ(epoch[0].kernel_wait_ns, 0);
  EXPECT_EQ(epoch[0].kernel_wait_gaps, 1u);
  // Near zero a double resolves far below a nanosecond: the end floors as the exact one does.
  const auto early = idle_time_breakdown(back_to_back(1'000'000'000, 4'928, 72));
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].kernel_wait_ns, 1'000);
}

TEST(HtaIdleBreakdown, TemporalBreakdownUsesTheSameEnds) {
  const TemporalBreakdown t = temporal_breakdown(back_to_back(kEpochUs * 1000, 4'928, 72));
  EXPECT_EQ(t.span_ns, 15'000);
  EXPECT_EQ(t.idle_ns, 0);
}

}  // namespace
}  // namespace gpufeed::profiler
