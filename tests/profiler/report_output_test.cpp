// JSON report and terminal summary: the keys tools and users rely on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpufeed/profiler/error.hpp"
#include "gpufeed/profiler/html_report.hpp"
#include "gpufeed/profiler/report_json.hpp"
#include "gpufeed/profiler/summary.hpp"
#include "synthetic_timeline.hpp"
#include "temp_dir.hpp"

namespace gpufeed::profiler {
namespace {

GapReport stalled_report() {
  testing::LoopSpec spec;
  spec.stall_every = 3;
  spec.stall_stage = "decode";
  GapReport r = analyze(testing::training_loop(spec));
  testing::add_advice(r);
  return r;
}

TEST(ReportJson, HasTheDocumentedKeysAndValues) {
  const GapReport r = stalled_report();
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_DOUBLE_EQ(j.at("device_util").get<double>(), r.device_util);
  for (const char* cause : {"input_wait", "host_sync", "launch", "other"}) {
    EXPECT_TRUE(j.at("idle_by_cause").contains(cause)) << cause;
  }
  EXPECT_DOUBLE_EQ(j["idle_by_cause"]["input_wait"].get<double>(),
                   r.idle_share(GapCause::input_wait));
  EXPECT_EQ(j.at("bottleneck_stage"), "decode");
  EXPECT_EQ(j.at("verdict"), "highly input-bound");
  EXPECT_EQ(j.at("gaps").at("count").get<std::size_t>(), r.gaps.size());
  EXPECT_LE(j["gaps"]["longest"].size(), 10u);
  ASSERT_TRUE(j.at("recommendations").is_array());
  ASSERT_FALSE(j["recommendations"].empty());
  EXPECT_EQ(j["recommendations"][0].at("kind"), r.recommendations[0].kind);
  EXPECT_TRUE(j["recommendations"][0].contains("predicted_effect"));
  EXPECT_TRUE(j.at("stages").contains("decode"));
  EXPECT_GT(j["stages"]["decode"]["share_during_wait"].get<double>(), 0.5);
  EXPECT_EQ(j.at("window").at("ns").get<std::int64_t>(), r.window_ns());
  // Echo predictions by factor: rising with the factor for an input-bound run.
  const nlohmann::json& echo = j.at("echo_predicted_util");
  for (int factor = 2; factor <= 5; ++factor) {
    const std::string key = std::to_string(factor);
    EXPECT_DOUBLE_EQ(echo.at(key).get<double>(), predicted_util_with_echo(r, factor)) << key;
  }
  EXPECT_GT(echo["2"].get<double>(), r.device_util);
}

TEST(ReportJson, UnknownBottleneckIsNull) {
  const nlohmann::json j = nlohmann::json::parse(report_json(analyze(Timeline{})));
  EXPECT_TRUE(j.at("bottleneck_stage").is_null());
  EXPECT_FALSE(j.at("warnings").empty());
}

TEST(ReportJson, WriteFailureNamesThePath) {
  try {
    write_report_json(stalled_report(), "/nonexistent-dir/report.json");
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/report.json"), std::string::npos);
  }
  gpufeed::testing::TempDir dir;
  const auto path = dir.path() / "r.json";
  write_report_json(stalled_report(), path.string());
  std::ifstream in(path);
  const nlohmann::json back = nlohmann::json::parse(in);
  EXPECT_TRUE(back.contains("device_util"));
}

TEST(Summary, NamesVerdictBottleneckAndAdvice) {
  const std::string s = format_summary(stalled_report());
  EXPECT_NE(s.find("highly input-bound"), std::string::npos) << s;
  EXPECT_NE(s.find("bottleneck stage    decode"), std::string::npos) << s;
  EXPECT_NE(s.find("echo=2"), std::string::npos) << s;
  EXPECT_EQ(s.find("--"), std::string::npos) << s;  // the library speaks fields, never flags
  const std::string flags =
      format_summary(stalled_report(), [](const Setting& x) { return "--" + x.value_text(); });
  EXPECT_NE(flags.find("--2"), std::string::npos) << flags;
  EXPECT_EQ(s.back(), '\n');
}

TEST(Summary, NamesNoBottleneckWhenNotInputBound) {
  GapReport r = stalled_report();
  r.verdict = Verdict::not_input_bound;
  r.recommendations.clear();
  const std::string s = format_summary(r);
  EXPECT_EQ(s.find("bottleneck stage"), std::string::npos) << s;
  EXPECT_NE(s.find("recommendations     no change"), std::string::npos) << s;
  const std::string html = HtmlReport::render(Timeline{}, r);
  EXPECT_EQ(html.find("bottleneck stage"), std::string::npos);
  EXPECT_NE(html.find("No change recommended"), std::string::npos);
  r.verdict = Verdict::moderately_input_bound;
  EXPECT_NE(format_summary(r).find("bottleneck stage    decode"), std::string::npos);
}

}  // namespace
}  // namespace gpufeed::profiler
