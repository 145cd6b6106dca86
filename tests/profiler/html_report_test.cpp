// The HTML report is one self-contained file: SVG figures, numbers, recommendations.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gpufeed/profiler/html_report.hpp"
#include "occurrences.hpp"
#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

TEST(HtmlReport, ContainsFiguresNumbersAndRecommendations) {
  testing::LoopSpec spec;
  spec.stall_every = 3;
  const Timeline t = testing::training_loop(spec);
  GapReport r = analyze(t);
  testing::add_advice(r);
  const std::string html = HtmlReport::render(t, r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(gpufeed::testing::occurrences(html, "<svg"), 2u);  // timeline and utilization plot
  EXPECT_EQ(gpufeed::testing::occurrences(html, "</svg>"), 2u);
  EXPECT_NE(html.find("class=\"recommendations\""), std::string::npos);
  for (const Recommendation& rec : r.recommendations) {
    EXPECT_NE(html.find(rec.action()), std::string::npos) << rec.action();
  }
  EXPECT_NE(html.find("highly input-bound"), std::string::npos);
  EXPECT_NE(html.find("#e4572e"), std::string::npos);  // input_wait gaps are drawn
  EXPECT_GT(gpufeed::testing::occurrences(html, "<rect"), 50u);
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

TEST(HtmlReport, ADataLoadersWorkerFetchesAreStagesOnTheirOwnLanes) {
  // A consumer waiting 30 of every 40 ms, fed by two DataLoader worker processes (their fetches
  // added as threads 501 and 502): each fetch is 18 ms of the dataset's items, then 2 of
  // collate.
  constexpr std::int64_t kMs = 1'000'000;
  Timeline t;
  for (std::int64_t i = 0; i < 40; ++i) {
    const std::int64_t at = i * 40 * kMs;
    t.host.push_back({"wait", at, at + 30 * kMs, 1, i, 0, {}});
    t.host.push_back({"step", at + 30 * kMs, at + 40 * kMs, 1, i, 0, {}});
    for (std::uint64_t worker : {501, 502}) {
      const std::int64_t from = at + (worker == 501 ? 0 : 20 * kMs);
      t.host.push_back({"dataset", from, from + 18 * kMs, worker, kNoArg, 0, {}});
      t.host.push_back({"collate", from + 18 * kMs, from + 20 * kMs, worker, kNoArg, 0, {}});
    }
  }
  t.normalize();
  PipelineFacts facts;
  facts.loader_settings = false;
  facts.pool_workers = 2;
  const GapReport r = analyze(t, {}, facts);
  std::map<std::string, StageShare> stages;
  for (const StageShare& st : r.stages) stages[st.name] = st;
  ASSERT_TRUE(stages.contains("dataset") && stages.contains("collate"));
  EXPECT_NEAR(stages["dataset"].busy_frac, 18.0 / 40, 0.02);  // each worker's share
  EXPECT_NEAR(stages["collate"].busy_frac, 2.0 / 40, 0.02);
  EXPECT_GT(stages["dataset"].share_during_wait, stages["collate"].share_during_wait);
  const std::string html = HtmlReport::render(t, r);
  for (const char* text :
       {">DataLoader worker 1<", ">DataLoader worker 2<", ">consumer<", ">dataset<", ">collate<"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(html.find("No pipeline stage ranges recorded"), std::string::npos);
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
  EXPECT_EQ(gpufeed::testing::occurrences(html, "http"),
            gpufeed::testing::occurrences(html, "http://www.w3.org/2000/svg"));
}

}  // namespace
}  // namespace gpufeed::profiler
