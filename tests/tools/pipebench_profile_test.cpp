// pipebench's diagnosis: the profiler's keys in --json, --trace, --report, --no-profile.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "json_file.hpp"
#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// 512 samples 16x16x3, 32 per chunk.
class PipebenchProfile : public SharedDataset<PipebenchProfile> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    return h5pack_synthetic(dir.file("profile.h5"), "512:16x16x3", 32);
  }

 protected:
  static std::vector<std::string> base() {
    return {"--data", data_, "--batch", "32", "--epochs", "2", "--workers", "2", "--model", "none"};
  }
};

TEST_F(PipebenchProfile, WithoutTrainingStageUtilizationIsNullAndSaysWhy) {
  const std::string out = dir_->file("none.json");
  auto args = base();
  args.insert(args.end(), {"--json", out});
  const auto r = pipebench(args);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "needs a training stage")) << r.out;
  EXPECT_TRUE(contains(r.out, "--model")) << r.out;
  EXPECT_TRUE(contains(r.out, "the consumer waited for input")) << r.out;
  const auto j = read_json(out);
  EXPECT_TRUE(j["device_util"].is_null());
  EXPECT_TRUE(j["idle_by_cause"]["input_wait"].is_number());
  EXPECT_TRUE(j["idle_by_cause"]["host_sync"].is_null());
  EXPECT_TRUE(j["bottleneck_stage"].is_string());
  EXPECT_TRUE(j["recorder"]["enabled"].get<bool>());
  EXPECT_GT(j["recorder"]["events"].get<std::uint64_t>(), 16u) << "read/assemble/wait ranges";
  EXPECT_EQ(j["recorder"]["dropped"], 0);
  ASSERT_TRUE(j["profile"].is_object());
  EXPECT_TRUE(j["profile"].contains("warnings"));
  EXPECT_TRUE(j["cupti"].is_null()) << "CPU device: no CUPTI";
}

TEST_F(PipebenchProfile, TraceAndReportFiles) {
  const std::string trace = dir_->file("run.trace.json");
  const std::string html = dir_->file("run.html");
  auto args = base();
  args.insert(args.end(), {"--trace", trace, "--report", html});
  const auto r = pipebench(args);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto t = read_json(trace);
  ASSERT_TRUE(t["traceEvents"].is_array());
  bool wait = false, read = false;
  for (const auto& e : t["traceEvents"]) {
    wait |= e.value("cat", "") == "wait";
    read |= e.value("cat", "") == "read";
  }
  EXPECT_TRUE(wait && read) << "consumer waits and loader reads are in the trace";
  // Read back as pipebench itself analyzed it: the consumer stands in for the device.
  const auto a = pipebench({"analyze", trace});
  ASSERT_EQ(a.exit_code, 0) << a.describe();
  EXPECT_TRUE(contains(a.out, "gpufeed trace")) << a.out;
  EXPECT_TRUE(contains(a.out, "no training stage")) << a.out;
  const std::string page = read_text(html);
  EXPECT_TRUE(contains(page, "<svg")) << page.substr(0, 400);
  EXPECT_FALSE(contains(page, "<script"));
  for (const auto& entry : fs::directory_iterator(dir_->path())) {
    EXPECT_FALSE(contains(entry.path().filename().string(), ".tmp.")) << entry.path();
  }
}

TEST_F(PipebenchProfile, UnderTorchrunEachRankWritesItsOwnFiles) {
  // RANK / WORLD_SIZE as torchrun sets them: rank 1 of 2 reads its shard and writes
  // run.trace.rank1.json, which records the rank.
  auto args = base();
  args.insert(args.end(),
              {"--trace", dir_->file("job.trace.json"), "--report", dir_->file("job{rank}.html")});
  const auto r = pipebench(args, {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto t = read_json(dir_->file("job.trace.rank1.json"));
  EXPECT_EQ(t["distributedInfo"]["rank"], 1);
  EXPECT_EQ(t["distributedInfo"]["world_size"], 2);
  EXPECT_TRUE(fs::exists(dir_->file("job1.html")));
  EXPECT_FALSE(fs::exists(dir_->file("job.trace.json")));
}

TEST_F(PipebenchProfile, NoProfileTurnsTheRecorderOff) {
  const std::string out = dir_->file("off.json");
  auto args = base();
  args.insert(args.end(), {"--no-profile", "--json", out});
  const auto r = pipebench(args);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "off (--no-profile)")) << r.out;
  const auto j = read_json(out);
  EXPECT_FALSE(j["recorder"]["enabled"].get<bool>());
  EXPECT_EQ(j["recorder"]["events"], 0);
  EXPECT_TRUE(j["profile"].is_null());
  EXPECT_GT(j["samples_per_s"].get<double>(), 0.0);
}

TEST_F(PipebenchProfile, NoProfileWithTraceIsAUsageError) {
  auto args = base();
  args.insert(args.end(), {"--no-profile", "--trace", dir_->file("x.json")});
  const auto r = pipebench(args);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "--no-profile")) << r.err;
}

TEST_F(PipebenchProfile, UnwritableTraceFailsBeforeTheRun) {
  auto args = base();
  args.insert(args.end(), {"--trace", dir_->file("missing/dir/t.json")});
  const auto r = pipebench(args);
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "--trace")) << r.err;
  EXPECT_TRUE(contains(r.err, "does not exist")) << r.err;
  EXPECT_FALSE(contains(r.out, "throughput")) << "failed before running";
}

TEST_F(PipebenchProfile, StallWithoutTrainingStageStillNamesTheStage) {
  const std::string out = dir_->file("stall.json");
  const auto r = pipebench({"--data", data_, "--batch", "32", "--steps", "12", "--workers", "1",
                            "--model", "none", "--inject-stall", "read:20@1", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  EXPECT_EQ(j["bottleneck_stage"], "read");
  EXPECT_GT(j["idle_by_cause"]["input_wait"].get<double>(), 0.5) << "the consumer mostly waits";
}

// End to end with the training stage: a stall in "read" several times a (CPU) step long must
// come out as input-bound, with "read" named and the idle time blamed on input_wait.
TEST(PipebenchProfileTraining, MlpWithReadStallIsInputBoundInRead) {
  const TempDir tmp;
  const std::string out = tmp.file("mlp.json");
  const auto r = run_command(
      {pipebench_bin(), "--synthetic", "2048:32x32x3", "--model", "mlp", "--inject-stall",
       "read:300@1", "--workers", "1", "--batch", "16", "--steps", "14", "--json", out},
      {{"TMPDIR", tmp.path().string()}});
  if (r.exit_code == 2 && (contains(r.err, "LibTorch") || contains(r.err, "not supported"))) {
    GTEST_SKIP() << "this pipebench has no mlp training stage: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  EXPECT_EQ(j["bottleneck_stage"], "read") << r.out;
  EXPECT_EQ(j["verdict"], "highly input-bound") << r.out;
  ASSERT_TRUE(j["device_util"].is_number());
  const auto& idle = j["idle_by_cause"];
  const double total = idle["input_wait"].get<double>() + idle["host_sync"].get<double>() +
                       idle["launch"].get<double>() + idle["other"].get<double>();
  EXPECT_GE(idle["input_wait"].get<double>(), 0.95 * total) << r.out;
  EXPECT_TRUE(contains(r.out, "diagnosis")) << r.out;
  EXPECT_TRUE(contains(r.out, "highly input-bound")) << r.out;
}

}  // namespace
}  // namespace gpufeed::testing
