// pipebench analyze: Kineto traces, pipebench's own traces, and damaged input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../profiler/synthetic_timeline.hpp"
#include "gpufeed/profiler/chrome_trace.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "json_file.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

CommandResult analyze(const std::vector<std::string>& args) {
  std::vector<std::string> argv{pipebench_bin(), "analyze"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string kineto_path(const std::string& name) {
  return std::string(GPUFEED_KINETO_DIR) + "/" + name;
}

#define REQUIRE_KINETO(path) \
  if (!fs::exists(path))     \
  GTEST_SKIP() << "no Kineto trace at " << (path) << " (../shared/data/kineto is not present)"

/// A training loop with input stalls and syncs, plus a kernel per step launched from the host.
profiler::Timeline loop_with_kernels() {
  profiler::testing::LoopSpec spec;
  spec.steps = 40;
  spec.stall_every = 4;
  spec.sync_every = 7;
  profiler::Timeline t = profiler::testing::training_loop(spec);
  std::uint64_t corr = 1;
  const std::size_t n = t.host.size();
  for (std::size_t i = 0; i < n; ++i) {
    const profiler::HostRange step = t.host[i];
    if (step.name != "step") continue;
    t.host.push_back({"launch", step.begin_ns, step.begin_ns + 20'000, step.thread,
                      profiler::kNoArg, corr, "cudaLaunchKernel"});
    t.device.push_back({profiler::ActivityKind::kernel, 0, 7, step.begin_ns + 100'000,
                        step.end_ns - 100'000, 0, corr++, false, "gemm"});
  }
  t.normalize();
  return t;
}

TEST(PipebenchAnalyze, OwnTraceGivesTheSameReport) {
  const TempDir tmp;
  const profiler::Timeline t = loop_with_kernels();
  const profiler::GapReport want = profiler::analyze(t);
  const std::string trace = tmp.file("own.json");
  profiler::ChromeTrace::write_file(trace, t, &want);
  const std::string out = tmp.file("own.report.json");
  const auto r = analyze({trace, "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "gpufeed trace")) << r.out;
  EXPECT_TRUE(contains(r.out, "verdict")) << r.out;
  EXPECT_TRUE(contains(r.out, "idle time per stream")) << r.out;
  const json j = read_json(out);
  EXPECT_EQ(j["trace"]["format"], "gpufeed");
  EXPECT_NEAR(j["device_util"].get<double>(), want.device_util, 1e-9);
  for (const profiler::GapCause c : {profiler::GapCause::input_wait, profiler::GapCause::host_sync,
                                     profiler::GapCause::launch, profiler::GapCause::other}) {
    EXPECT_NEAR(j["idle_by_cause"][profiler::gap_cause_name(c)].get<double>(), want.idle_share(c),
                1e-9)
        << profiler::gap_cause_name(c);
  }
  EXPECT_EQ(j["bottleneck_stage"], want.bottleneck_stage);
  ASSERT_EQ(j["idle_breakdown"].size(), 1u);
  EXPECT_EQ(j["idle_breakdown"][0]["stream"], 7);
  EXPECT_EQ(j["idle_breakdown"][0]["activities"], 40);
}

TEST(PipebenchAnalyze, TruncatedOwnTraceGivesAPartialReport) {
  const TempDir tmp;
  const profiler::Timeline t = loop_with_kernels();
  std::ostringstream text;
  profiler::ChromeTrace::write(text, t);
  const std::string full = text.str();
  const std::string trace = tmp.file("cut.json");
  write_text(trace, full.substr(0, full.size() * 6 / 10));
  const auto r = analyze({trace});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "warning: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "truncated")) << r.out;
}

TEST(PipebenchAnalyze, UnreadableInputIsOneLineAndExitOne) {
  const TempDir tmp;
  const std::string garbage = tmp.file("garbage.json");
  write_text(garbage, "this is not a trace");
  const std::string empty_object = tmp.file("empty.json");
  write_text(empty_object, "{}");
  for (const std::string& path :
       {garbage, empty_object, tmp.file("missing.json"), tmp.path().string()}) {
    const auto r = analyze({path});
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, path)) << r.err;
  }
}

TEST(PipebenchAnalyze, KinetoTraceWithoutDeviceEventsOrWithUnknownKinds) {
  const TempDir tmp;
  const std::string trace = tmp.file("cpu_only.json");
  json events = json::array();
  for (int i = 0; i < 30; ++i) {
    const double t0 = i * 12000.0;
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "enumerate(DataLoader)#x"},
                      {"ts", t0},
                      {"dur", 2000.0},
                      {"pid", 1},
                      {"tid", 1}});
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "ProfilerStep#" + std::to_string(i)},
                      {"ts", t0 + 2000.0},
                      {"dur", 10000.0},
                      {"pid", 1},
                      {"tid", 1}});
    events.push_back({{"ph", "X"},
                      {"cat", "mystery"},
                      {"name", "x"},
                      {"ts", t0},
                      {"dur", 1.0},
                      {"pid", 1},
                      {"tid", 1}});
  }
  write_text(trace, json{{"traceEvents", events}}.dump());
  const std::string out = tmp.file("cpu_only.report.json");
  const auto r = analyze({trace, "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "no device events")) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown kind 'mystery'")) << r.out;
  const json j = read_json(out);
  EXPECT_NEAR(j["idle_by_cause"]["input_wait"].get<double>(), 2.0 / 12.0, 0.01);
}

TEST(PipebenchAnalyze, AlexnetTraceMatchesTheHtaBreakdown) {
  const std::string path = kineto_path("alexnet_train_step.trace.json.gz");
  REQUIRE_KINETO(path);
  const TempDir tmp;
  const std::string out = tmp.file("alexnet.json");
  const auto r = analyze({path, "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "79 kernels")) << r.out;
  const json j = read_json(out);
  EXPECT_EQ(j["trace"]["format"], "kineto");
  EXPECT_EQ(j["trace"]["events"], 1408);
  std::map<int, json> streams;
  for (const json& s : j["idle_breakdown"]) streams[s["stream"].get<int>()] = s;
  ASSERT_EQ(streams.size(), 2u);
  // HolisticTraceAnalysis 0.5.0's figures for this trace (see kineto_trace_test.cpp).
  EXPECT_EQ(streams[7]["host_wait_ns"], 12'855'007'000);
  EXPECT_EQ(streams[7]["host_wait_gaps"], 34);
  EXPECT_EQ(streams[7]["kernel_wait_ns"], 104'000);
  EXPECT_EQ(streams[7]["other_ns"], 0);
  EXPECT_EQ(streams[20]["host_wait_ns"], 12'011'718'000);
  EXPECT_EQ(j["temporal_breakdown"]["idle_ns"], 12'929'684'000);
  EXPECT_EQ(j["temporal_breakdown"]["compute_ns"], 10'637'000);
  EXPECT_TRUE(contains(r.out, "idle 99.49%, compute 0.08%, non-compute 0.43%")) << r.out;
  EXPECT_TRUE(j["device_util"].is_number());
}

TEST(PipebenchAnalyze, TruncatedKinetoTraceGivesAPartialReport) {
  const std::string path = kineto_path("sampled_rank0.trace.json.gz");
  REQUIRE_KINETO(path);
  const auto unzip = run_command({"/usr/bin/env", "gzip", "-dc", path});
  if (unzip.exit_code != 0) GTEST_SKIP() << "no gzip: " << unzip.describe();
  const TempDir tmp;
  const std::string cut = tmp.file("cut.json");
  write_text(cut, unzip.out.substr(0, unzip.out.size() / 2));
  const std::string out = tmp.file("cut.report.json");
  const auto r = analyze({cut, "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "truncated")) << r.out;
  const json j = read_json(out);
  EXPECT_TRUE(j["trace"]["truncated"].get<bool>());
  EXPECT_GT(j["trace"]["device_activities"].get<int>(), 100);
}

}  // namespace
}  // namespace gpufeed::testing
