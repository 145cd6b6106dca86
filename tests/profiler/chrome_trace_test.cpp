// Chrome trace output: valid JSON with the events Perfetto needs.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpufeed/profiler/chrome_trace.hpp"
#include "gpufeed/profiler/trace_input.hpp"
#include "synthetic_timeline.hpp"

namespace gpufeed::profiler {
namespace {

Timeline gpu_timeline() {
  Timeline t;
  t.host.push_back({"step", 0, 100'000, 1, 0, 0, {}});
  t.host.push_back({"launch", 1'000, 3'000, 1, kNoArg, 11, "cudaLaunchKernel"});
  t.host.push_back({"launch", 4'000, 6'000, 1, kNoArg, 12, "cudaMemcpyAsync"});
  t.host.push_back({"decode", 0, 50'000, 7, 3, 0, {}});
  t.host.push_back({"sync", 90'000, 99'000, 1, kNoArg, 0, "cudaStreamSynchronize"});
  t.device.push_back({ActivityKind::kernel, 0, 7, 5'000, 40'000, 0, 11, false, "gemm \"big\""});
  t.device.push_back({ActivityKind::memcpy_h2d, 0, 9, 7'000, 9'000, 4096, 12, true, "Memcpy HtoD"});
  t.normalize();
  return t;
}

nlohmann::json trace_of(const Timeline& t, const GapReport* r) {
  std::ostringstream out;
  ChromeTrace::write(out, t, r);
  return nlohmann::json::parse(out.str());  // throws (fails the test) on invalid JSON
}

TEST(ChromeTrace, HostRangesDeviceStreamsFlowsAndMetadata) {
  const Timeline t = gpu_timeline();
  AnalysisOptions o;
  o.warmup_steps = 0;
  const GapReport r = analyze(t, o);
  const nlohmann::json j = trace_of(t, &r);
  ASSERT_TRUE(j.at("traceEvents").is_array());
  std::multiset<std::string> phases;
  std::map<std::string, nlohmann::json> by_name;
  std::set<std::string> names_meta;
  for (const auto& e : j["traceEvents"]) {
    phases.insert(e.at("ph").get<std::string>());
    if (e["ph"] == "X") by_name[e.at("name").get<std::string>()] = e;
    if (e["ph"] == "M") names_meta.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(phases.count("X"), 5u + 2u + r.gaps.size());
  EXPECT_EQ(phases.count("s"), 2u);
  EXPECT_EQ(phases.count("f"), 2u);
  const auto& kernel = by_name.at("gemm \"big\"");
  EXPECT_EQ(kernel["pid"], 100);
  EXPECT_EQ(kernel["tid"], 7);
  EXPECT_DOUBLE_EQ(kernel["ts"].get<double>(), 5.0);  // us from the earliest event
  EXPECT_DOUBLE_EQ(kernel["dur"].get<double>(), 35.0);
  EXPECT_EQ(by_name.at("decode")["args"]["arg"], 3);
  EXPECT_EQ(by_name.at("cudaLaunchKernel")["pid"], 1);
  // Lanes by role: the stream that only copied, the consumer, the loader's worker.
  for (const char* m : {"host", "device 0", "stream 7", "copy stream 9", "consumer", "worker 1",
                        "idle gaps (by cause)"}) {
    EXPECT_TRUE(names_meta.contains(m)) << m;
  }
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "f") continue;
    EXPECT_EQ(e.at("bp"), "e");
    EXPECT_EQ(e["pid"], 100);
  }
}

TEST(ChromeTrace, CpuOnlyTimelineAndEmptyTimelineStayValid) {
  testing::LoopSpec spec;
  spec.steps = 12;
  const Timeline t = testing::training_loop(spec);
  const GapReport r = analyze(t);
  const nlohmann::json j = trace_of(t, &r);
  std::size_t x = 0;
  for (const auto& e : j["traceEvents"]) x += e["ph"] == "X" ? 1 : 0;
  EXPECT_EQ(x, t.host.size() + r.gaps.size());
  const nlohmann::json empty = trace_of(Timeline{}, nullptr);
  EXPECT_TRUE(empty.at("traceEvents").is_array());
}

TEST(GpufeedTrace, TheRankRoundTrips) {
  Timeline t;
  t.rank = 3;
  t.world_size = 8;
  t.host.push_back({"step", 1000, 2000, 1, 0, 0, {}});
  std::ostringstream text;
  ChromeTrace::write(text, t, nullptr);
  const TraceInput whole = parse_gpufeed_trace(text.str(), "t.json");
  EXPECT_EQ(whole.timeline.rank, 3);
  EXPECT_EQ(whole.timeline.world_size, 8);
  std::string cut = text.str();
  cut.resize(cut.size() - 5);  // a damaged file keeps its header line
  const TraceInput damaged = parse_gpufeed_trace(cut, "t.json");
  EXPECT_TRUE(damaged.truncated);
  EXPECT_EQ(damaged.timeline.rank, 3);
  EXPECT_EQ(damaged.timeline.world_size, 8);
}

}  // namespace
}  // namespace gpufeed::profiler
