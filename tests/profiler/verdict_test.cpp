// Verdict thresholds, and the note on a mostly idle device that is not waiting for input.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/summary.hpp"
#include "gpufeed/profiler/verdict.hpp"
#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

using testing::report_with;

TEST(Verdict, ThresholdsAreInclusive) {
  EXPECT_EQ(input_bound_verdict(0.20), Verdict::highly_input_bound);
  EXPECT_EQ(input_bound_verdict(0.1999), Verdict::moderately_input_bound);
  EXPECT_EQ(input_bound_verdict(0.05), Verdict::moderately_input_bound);
  EXPECT_EQ(input_bound_verdict(0.0499), Verdict::not_input_bound);
  EXPECT_EQ(input_bound_verdict(0.0), Verdict::not_input_bound);
  EXPECT_EQ(input_bound_verdict(0.3, {0.5, 0.25}), Verdict::moderately_input_bound);
  EXPECT_STREQ(verdict_text(Verdict::highly_input_bound), "highly input-bound");
  EXPECT_EQ(parse_verdict("moderately input-bound"), Verdict::moderately_input_bound);
  EXPECT_FALSE(parse_verdict("slow"));
}

TEST(IdleElsewhere, AMostlyIdleDeviceIsExplainedUnlessInputIsTheCause) {
  GapReport r = report_with(10, 1, 89);
  r.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0.89;
  ASSERT_EQ(r.verdict, Verdict::not_input_bound);
  const std::string text = idle_elsewhere(r);
  EXPECT_NE(text.find("the device idles 90% of the window, but not waiting for input: other 89%"),
            std::string::npos)
      << text;
  r.idle_ns[GapCause::host_sync] = 89;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::host_sync)] = 0.89;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0;
  EXPECT_NE(idle_elsewhere(r).find("host_sync 89%, host synchronizations"), std::string::npos)
      << idle_elsewhere(r);
  EXPECT_EQ(idle_elsewhere(report_with(30, 60, 10)), "");  // input-bound: the verdict says it
  EXPECT_EQ(idle_elsewhere(report_with(80, 1, 19)), "");   // busy enough
  GapReport quiet = report_with(10, 1, 89);
  quiet.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0.89;
  const std::string summary = format_summary(quiet, field_spelling);
  EXPECT_NE(summary.find("idle elsewhere      the device idles 90%"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("recommendations     no change"), std::string::npos) << summary;
}

}  // namespace
}  // namespace gpufeed::profiler
