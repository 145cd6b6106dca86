// KinetoTrace on the real PyTorch profiler traces of ../shared/data/kineto, checked against
// hand-counted figures and an independent HolisticTraceAnalysis-style computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/idle_breakdown.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"
#include "gpufeed/profiler/report_json.hpp"
#include "gzip_text.hpp"

namespace gpufeed::profiler {
namespace {

std::string trace_path(const char* name) {
  const char* env = std::getenv("GPUFEED_KINETO_DIR");
  return (std::filesystem::path(env != nullptr ? env : GPUFEED_KINETO_DIR) / name).string();
}

#define REQUIRE_TRACE(path)                                                                    \
  if (!std::filesystem::exists(path))                                                          \
  GTEST_SKIP() << "Kineto test trace " << (path)                                               \
               << " not found (expected in ../shared/data/kineto beside the checkout, or set " \
                  "GPUFEED_KINETO_DIR)"

/// HTA's idle-time breakdown computed straight from the JSON, in nanoseconds, per stream:
/// {host_wait, kernel_wait, other, host_wait gaps, other gaps}.
std::map<std::int64_t, std::array<std::int64_t, 5>> independent_hta(const std::string& path) {
  const nlohmann::json doc = nlohmann::json::parse(testing::read_gz(path));
  std::map<std::int64_t, double> runtime_ts;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> streams;  // ts, end (us)
  std::map<std::pair<std::int64_t, double>, std::int64_t> corr_of;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    const auto& args = e.contains("args") ? e["args"] : nlohmann::json::object();
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (args.contains("correlation")) runtime_ts[args["correlation"]] = e["ts"].get<double>();
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      const double ts = e["ts"].get<double>();
      streams[args["stream"]].push_back({ts, ts + e["dur"].get<double>()});
      corr_of[{args["stream"].get<std::int64_t>(), ts}] = args["correlation"];
    }
  }
  std::map<std::int64_t, std::array<std::int64_t, 5>> out;
  for (auto& [stream, v] : streams) {
    std::stable_sort(v.begin(), v.end());
    std::array<std::int64_t, 5> t{};
    for (std::size_t i = 1; i < v.size(); ++i) {
      const auto gap =
          static_cast<std::int64_t>(std::llround((v[i].first - v[i - 1].second) * 1e3));
      const auto rt = runtime_ts.find(corr_of[{stream, v[i].first}]);
      if (rt != runtime_ts.end() && rt->second > v[i - 1].second) {
        t[0] += gap;
        ++t[3];
      } else if (gap < 30) {
        t[1] += gap;
      } else {
        t[2] += gap;
        ++t[4];
      }
    }
    out[stream] = t;
  }
  return out;
}

void expect_matches_independent(const std::string& path, const std::vector<StreamIdle>& got) {
  const auto want = independent_hta(path);
  ASSERT_EQ(got.size(), want.size());
  for (const StreamIdle& s : got) {
    const auto& w = want.at(s.stream);
    EXPECT_EQ(s.host_wait_ns, w[0]) << "stream " << s.stream;
    EXPECT_EQ(s.kernel_wait_ns, w[1]) << "stream " << s.stream;
    EXPECT_EQ(s.other_ns, w[2]) << "stream " << s.stream;
    EXPECT_EQ(s.host_wait_gaps, static_cast<std::size_t>(w[3])) << "stream " << s.stream;
    EXPECT_EQ(s.other_gaps, static_cast<std::size_t>(w[4])) << "stream " << s.stream;
  }
}

const StreamIdle& stream(const std::vector<StreamIdle>& v, std::uint32_t id) {
  for (const StreamIdle& s : v) {
    if (s.stream == id) return s;
  }
  throw std::runtime_error("no stream " + std::to_string(id));
}

TEST(KinetoTrace, AlexnetCountsAndHtaIdleBreakdown) {
  const std::string path = trace_path("alexnet_train_step.trace.json.gz");
  REQUIRE_TRACE(path);
  const KinetoTrace k = KinetoTrace::read(path);
  EXPECT_FALSE(k.truncated);
  EXPECT_EQ(k.counts.events, 1408u);
  EXPECT_EQ(k.counts.kernels, 79u);
  EXPECT_EQ(k.counts.memcpys, 16u);
  EXPECT_EQ(k.counts.memsets, 3u);
  EXPECT_EQ(k.counts.syncs, 41u);
  EXPECT_EQ(k.counts.runtime_calls, 361u);
  EXPECT_EQ(k.counts.flows, 500u);
  EXPECT_EQ(k.counts.malformed, 0u);
  EXPECT_TRUE(k.counts.unknown_kinds.empty());
  const std::vector<StreamIdle> idle = idle_time_breakdown(k.timeline);
  ASSERT_EQ(idle.size(), 2u);
  const StreamIdle& s7 = stream(idle, 7);
  EXPECT_EQ(s7.activities, 91u);
  EXPECT_EQ(s7.host_wait_ns, 12'855'007'000);
  EXPECT_EQ(s7.host_wait_gaps, 34u);
  EXPECT_EQ(s7.other_ns, 104'000);
  EXPECT_EQ(s7.other_gaps, 56u);
  EXPECT_EQ(s7.kernel_wait_ns, 0);
  const StreamIdle& s20 = stream(idle, 20);
  EXPECT_EQ(s20.activities, 7u);
  EXPECT_EQ(s20.host_wait_ns, 12'011'718'000);
  EXPECT_EQ(s20.other_ns, 3'000);
  expect_matches_independent(path, idle);
}

TEST(KinetoTrace, SampledRankCountsAndHtaIdleBreakdown) {
  const std::string path = trace_path("sampled_rank0.trace.json.gz");
  REQUIRE_TRACE(path);
  const KinetoTrace k = KinetoTrace::read(path);
  EXPECT_EQ(k.counts.events, 4855u);
  EXPECT_EQ(k.counts.kernels, 1154u);
  EXPECT_EQ(k.counts.memcpys, 40u);
  EXPECT_EQ(k.counts.memsets, 10u);
  EXPECT_EQ(k.counts.annotations, 73u);
  const std::vector<StreamIdle> idle = idle_time_breakdown(k.timeline);
  ASSERT_EQ(idle.size(), 5u);
  const StreamIdle& s7 = stream(idle, 7);
  EXPECT_EQ(s7.activities, 1052u);
  EXPECT_EQ(s7.host_wait_ns, 397'917'000);
  EXPECT_EQ(s7.host_wait_gaps, 175u);
  EXPECT_EQ(s7.other_ns, 602'100'000);
  EXPECT_EQ(s7.other_gaps, 876u);
  EXPECT_EQ(stream(idle, 84).host_wait_ns, 794'901'000);
  EXPECT_EQ(stream(idle, 203).activities, 2u);
  expect_matches_independent(path, idle);
}

TEST(KinetoTrace, GapReportOnARealTraceIsConsistent) {
  const std::string path = trace_path("sampled_rank0.trace.json.gz");
  REQUIRE_TRACE(path);
  const KinetoTrace k = KinetoTrace::read(path);
  const GapReport r = analyze(k.timeline);
  EXPECT_EQ(r.device_timeline, "device activity");
  // Busy time equals an independent union of the device intervals clipped to the window.
  std::vector<std::pair<std::int64_t, std::int64_t>> v;
  for (const DeviceActivity& a : k.timeline.device) {
    const std::int64_t b = std::max(a.begin_ns, r.window_begin_ns);
    const std::int64_t e = std::min(a.end_ns, r.window_end_ns);
    if (a.is_work() && b < e) v.push_back({b, e});
  }
  std::sort(v.begin(), v.end());
  std::int64_t busy = 0, reach = INT64_MIN;
  for (const auto& [b, e] : v) {
    busy += std::max<std::int64_t>(0, e - std::max(b, reach));
    reach = std::max(reach, e);
  }
  EXPECT_EQ(r.busy_ns, busy);
  EXPECT_EQ(r.busy_ns + r.idle_ns.total(), r.window_ns());
  EXPECT_GT(r.gaps.size(), 100u);
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_NEAR(j["device_util"].get<double>(),
              static_cast<double>(busy) / static_cast<double>(r.window_ns()), 1e-12);
}

}  // namespace
}  // namespace gpufeed::profiler
