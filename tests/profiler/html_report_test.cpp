// The HTML report is one self-contained file: SVG figures, numbers, recommendations.
#include <gtest/gtest.h>

#include <string>

#include "gpufeed/profiler/html_report.hpp"
#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(HtmlReport, ContainsFiguresNumbersAndRecommendations) {
  testing::LoopSpec spec;
  spec.stall_every = 3;
  const Timeline t = testing::training_loop(spec);
  const GapReport r = analyze(t);
  ASSERT_FALSE(r.recommendations.empty());
  const std::string html = HtmlReport::render(t, r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<svg"), 2u);  // timeline and utilization plot
  EXPECT_EQ(count(html, "</svg>"), 2u);
  EXPECT_NE(html.find("class=\"recommendations\""), std::string::npos);
  for (const Recommendation& rec : r.recommendations) {
    EXPECT_NE(html.find(rec.action()), std::string::npos) << rec.action();
  }
  EXPECT_NE(html.find("highly input-bound"), std::string::npos);
  EXPECT_NE(html.find("#e4572e"), std::string::npos);  // input_wait gaps are drawn
  EXPECT_GT(count(html, "<rect"), 50u);
}

TEST(HtmlReport, LanesAreNamedByRoleAndTheLegendListsOnlyWhatOccurred) {
  testing::LoopSpec spec;
  spec.stall_every = 3;
  Timeline t = testing::training_loop(spec);
  const std::int64_t end = t.host.back().end_ns;
  t.host.push_back({"h2d", 0, end, 99, kNoArg, 0, {}});  // a thread that only copies
  t.normalize();
  const std::string html = HtmlReport::render(t, analyze(t));
  for (const char* lane : {">consumer<", ">worker 1<", ">worker 2<", ">copy<"}) {
    EXPECT_NE(html.find(lane), std::string::npos) << lane;
  }
  EXPECT_EQ(html.find(">thread "), std::string::npos);
  // Host ranges that occurred are in the legend; no device ran, and no echo or sync happened.
  const std::string legend = html.substr(html.rfind("<p class=\"legend\">"));
  for (const char* kind : {">step<", ">wait<", ">read<", ">decode<", ">h2d<"}) {
    EXPECT_NE(legend.find(kind), std::string::npos) << kind;
  }
  for (const char* kind : {">kernel<", ">memcpy_h2d<", ">echo<", ">sync<", ">normalize<"}) {
    EXPECT_EQ(legend.find(kind), std::string::npos) << kind;
  }
}

TEST(HtmlReport, IsSelfContainedAndEscapesNames) {
  Timeline t;
  t.host.push_back({"step", 0, 10, 1, kNoArg, 0, {}});
  t.device.push_back({ActivityKind::kernel, 0, 7, 0, 10, 0, 0, false, "<script>alert(1)</script>"});
  AnalysisOptions o;
  o.warmup_steps = 0;
  HtmlReport::Options options;
  options.title = "run <1> & co";
  const std::string html = HtmlReport::render(t, analyze(t, o), options);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("run &lt;1&gt; &amp; co"), std::string::npos);
  // No network: nothing to fetch, and the only URL is the SVG namespace.
  for (const char* fetch : {"src=", "href=", "url(", "@import", "<link", "<iframe"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
}

}  // namespace
}  // namespace gpufeed::profiler
