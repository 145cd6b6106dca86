#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/flags.hpp"
#include "json_file.hpp"
#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;

/// A small dataset shared by the tests of this file: 512 samples 16x16x3, 32 per chunk.
class PipebenchTest : public SharedDataset<PipebenchTest> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    return h5pack_synthetic(dir.file("small.h5"), "512:16x16x3", 32);
  }
};

TEST_F(PipebenchTest, JsonHasTheRequiredKeys) {
  const std::string out = dir_->file("bench.json");
  const auto r = pipebench({"--data", data_, "--batch", "64", "--epochs", "2", "--workers", "2",
                            "--order", "random", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  for (const char* key :
       {"samples_per_s", "device_util", "idle_by_cause", "bottleneck_stage", "stages", "echo",
        "device", "dataset", "settings", "wall_s", "peak_rss_bytes", "cache"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"input_wait", "host_sync", "launch", "other"}) {
    EXPECT_TRUE(j["idle_by_cause"].contains(key)) << key;
  }
  EXPECT_GT(j["samples_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["device_util"].is_null());
  EXPECT_GE(j["idle_by_cause"]["input_wait"].get<double>(), 0.0);
  EXPECT_GT(j["stages"]["read"]["items"].get<std::uint64_t>(), 0u);
  EXPECT_GE(j["stages"]["read"]["busy_frac"].get<double>(), 0.0);
  EXPECT_EQ(j["echo"]["fresh_batches"], 16) << "512 / 64 batches, 2 epochs";
  EXPECT_EQ(j["echo"]["echoed_batches"], 0);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["samples"], 1024);
  EXPECT_EQ(j["dataset"]["samples"], 512);
  EXPECT_EQ(j["dataset"]["chunk"], 32);
  EXPECT_EQ(j["dataset"]["shape"], nlohmann::json({16, 16, 3}));
  EXPECT_EQ(j["settings"]["order"], "random");
  EXPECT_TRUE(j["bottleneck_stage"].is_string());
  EXPECT_NE(r.out.find("slowest stage: "), std::string::npos) << r.out;
  for (const auto& entry : fs::directory_iterator(dir_->path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(PipebenchTest, StepsStopAfterThatManyBatches) {
  const std::string out = dir_->file("steps.json");
  const auto r = pipebench({"run", "--data", data_, "--batch", "100", "--steps", "7", "--order",
                            "sequential", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  EXPECT_EQ(j["batches"], 7) << "6 batches per epoch, so the run goes into epoch 2";
  EXPECT_EQ(j["echo"]["fresh_batches"], 7);
}

TEST_F(PipebenchTest, NoIndexUsesTheDirectChunkPath) {
  const std::string out = dir_->file("noindex.json");
  const auto r = pipebench({"--data", data_, "--batch", "64", "--epochs", "1", "--no-index",
                            "--cache-mb", "0", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(read_json(out)["dataset"]["read_path"], "direct_chunk");
}

TEST_F(PipebenchTest, JsonHasPracticeChecksAndMemory) {
  const std::string out = dir_->file("practices.json");
  const auto r =
      pipebench({"--data", data_, "--batch", "64", "--epochs", "1", "--seed", "5", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  ASSERT_EQ(j["practices"].size(), 8u);
  std::vector<std::string> names;
  for (const auto& c : j["practices"]) {
    names.push_back(c["name"]);
    EXPECT_TRUE(c["status"] == "ok" || c["status"] == "warn" || c["status"] == "info" ||
                c["status"] == "n/a")
        << c;
    EXPECT_FALSE(c["finding"].get<std::string>().empty()) << c;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pinned_memory", "host_sync", "device_tensors",
                                             "transfer_dtype", "workers", "determinism", "shuffle",
                                             "training_loop"}));
  EXPECT_EQ(j["practices"][0]["status"], "n/a") << "the cpu device copies nothing";
  EXPECT_NE(j["practices"][5]["finding"].get<std::string>().find("--seed 5"), std::string::npos);
  for (const char* key : {"slot_bytes", "pinned_bytes", "device_bytes", "cache_peak_bytes",
                          "peak_rss_bytes", "allocator_peak_bytes"}) {
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  }
  EXPECT_GT(j["memory"]["peak_rss_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_NE(r.out.find("practices\n"), std::string::npos) << r.out;
}

TEST_F(PipebenchTest, PlainProgressLinesOffATerminal) {
  auto r = pipebench({"--data", data_, "--batch", "64", "--epochs", "2", "--progress", "plain"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  // One line at the end of each epoch (the interval is longer than the run).
  EXPECT_NE(r.out.find("progress    step 8/16  epoch 0  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("progress    step 16/16  epoch 1  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("queue "), std::string::npos) << r.out;
  r = pipebench({"--data", data_, "--batch", "64", "--epochs", "2", "--progress", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find("progress    "), std::string::npos) << r.out;
}

TEST_F(PipebenchTest, SweepRunsEverySettingAndWritesCsvAndJson) {
  const std::string csv = dir_->file("sweep.csv");
  const std::string json = dir_->file("sweep.json");
  const auto r =
      // 16 batches stalled 40 ms each: about 0.64 s with one worker, half with two, so that
      // the overlap outweighs what a busy machine adds to a one-epoch run.
      pipebench({"sweep", "--data", data_, "--batch", "32", "--epochs", "1", "--workers", "1,2",
                 "--prefetch", "1,3", "--inject-stall", "read:40@1", "--csv", csv, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(json);
  ASSERT_EQ(j["settings"].size(), 4u);
  EXPECT_EQ(j["settings"][0]["workers"], 1);
  EXPECT_EQ(j["settings"][0]["prefetch"], 1);
  EXPECT_EQ(j["settings"][3]["workers"], 2);
  EXPECT_EQ(j["settings"][3]["prefetch"], 3);
  for (const auto& s : j["settings"]) {
    EXPECT_GT(s["samples_per_s"].get<double>(), 0.0) << s;
    EXPECT_GT(s["peak_rss_bytes"].get<std::uint64_t>(), 0u) << s;
    EXPECT_TRUE(s["error"].is_null()) << s;
    // Every read stalls 40 ms: the consumer waits on "read" in every setting.
    EXPECT_EQ(s["bottleneck_stage"], "read") << s;
  }
  ASSERT_TRUE(j["best"].is_number());
  EXPECT_GE(j["settings"][j["best"].get<std::size_t>()]["workers"], 2)
      << "two workers overlap two stalled reads";
  EXPECT_TRUE(j["recommendation"]["status"].is_string());
  std::ifstream in(csv);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 5) << "a header and one line per setting";
  EXPECT_NE(r.out.find("best        workers 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("advice      "), std::string::npos) << r.out;
}

TEST(Pipebench, EveryFlagOfTheFieldTableIsAFlagOfPipebench) {
  const auto r = pipebench({"run", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (const tools::FieldFlag& f : tools::kFieldFlags) {
    EXPECT_NE(r.out.find(std::string(f.flag) + " "), std::string::npos)
        << f.field << ": " << f.flag << " is not in pipebench --help";
  }
}

TEST(Pipebench, NoArgumentsRunsTheEmbeddedDefaultAndCleansUp) {
  const TempDir tmp;
  const auto r = pipebench({}, {{"TMPDIR", tmp.path().string()}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("slowest stage: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("synthetic 8192:64x64x3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64 per chunk"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 epochs"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "the temporary dataset is removed";
}

TEST(Pipebench, SyntheticOption) {
  const TempDir tmp;
  const std::string out = tmp.file("s.json");
  const auto r =
      pipebench({"--synthetic", "300:8x8x1", "--batch", "32", "--epochs", "1", "--json", out},
                {{"TMPDIR", tmp.path().string()}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto j = read_json(out);
  EXPECT_EQ(j["samples"], 300);
  EXPECT_EQ(j["dataset"]["synthetic"], "300:8x8x1");
  EXPECT_EQ(fs::directory_iterator(tmp.path())->path().filename(), "s.json");
}

}  // namespace
}  // namespace gpufeed::testing
