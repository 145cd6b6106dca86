// pipebench with a training stage: --model and its flags, the summary line and the JSON.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

/// small.h5 (256 samples of 32x32x3, 32 per chunk) and, beside it, tiny.h5 (64 of 8x8x3).
class PipebenchModel : public SharedDataset<PipebenchModel> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    small_ = h5pack_synthetic(dir.file("small.h5"), "256:32x32x3", 32);
    tiny_ = h5pack_synthetic(dir.file("tiny.h5"), "64:8x8x3", 16);
    return small_;
  }

 protected:
  static inline std::string small_;
  static inline std::string tiny_;
};

TEST_F(PipebenchModel, TrainsAndReportsTheModel) {
  const std::string out = dir_->file("mlp.json");
  const auto r = pipebench({"--data", small_, "--model", "mlp", "--optimizer", "adamw", "--batch",
                            "64", "--epochs", "2", "--sync-every", "2", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("model       mlp, adamw lr 0.001, train, amp none, 8 steps"),
            std::string::npos)
      << r.out;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  const auto& t = j["training"];
  EXPECT_EQ(t["model"], "mlp");
  EXPECT_EQ(t["optimizer"], "adamw");
  EXPECT_EQ(t["mode"], "train");
  EXPECT_EQ(t["steps"], 8);
  EXPECT_EQ(t["dtype"], "float32");
  EXPECT_EQ(t["num_classes"], 10) << "h5pack's synthetic data has ten classes";
  EXPECT_EQ(t["input"], nlohmann::json({3, 32, 32}));
  EXPECT_GT(t["last_loss"].get<double>(), 0.0);
  EXPECT_GT(t["step_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["stages"]["step"]["items"], 8) << "the step stage is measured";
}

TEST_F(PipebenchModel, EvalAndBfloat16) {
  const std::string out = dir_->file("cnn.json");
  const auto r = pipebench({"--data", small_, "--model", "cnn", "--eval", "--amp", "bfloat16",
                            "--channels-last", "--deterministic", "--steps", "2", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::ifstream in(out);
  const auto t = nlohmann::json::parse(in)["training"];
  EXPECT_EQ(t["mode"], "eval");
  EXPECT_EQ(t["dtype"], "bfloat16");
  EXPECT_EQ(t["channels_last"], true);
  EXPECT_EQ(t["deterministic"], true);
}

TEST_F(PipebenchModel, WithoutAModelThereIsNoTrainingObject) {
  const std::string out = dir_->file("none.json");
  const auto r = pipebench({"--data", small_, "--steps", "2", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::ifstream in(out);
  EXPECT_TRUE(nlohmann::json::parse(in)["training"].is_null());
  EXPECT_EQ(r.out.find("\nmodel       "), std::string::npos) << r.out;
}

TEST_F(PipebenchModel, MisfitsAndBadValuesAreOneLineUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--data", tiny_, "--batch", "16", "--model", "resnet18"},
       "--model resnet18 needs samples of at least 32x32"},
      {{"--data", small_, "--model", "vgg"}, "--model"},
      {{"--data", small_, "--model", "cnn", "--optimizer", "lbfgs"}, "--optimizer"},
      {{"--data", small_, "--model", "cnn", "--amp", "float16"}, "--amp float16"},
      {{"--data", small_, "--model", "cnn", "--amp", "int8"}, "--amp"},
      {{"--data", small_, "--model", "mlp", "--labels", ""}, "needs labels"},
      {{"--data", small_, "--model", "cnn", "--deterministic", "--cudnn-benchmark"},
       "--cudnn-benchmark"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = pipebench(args);
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.describe();
    EXPECT_EQ(lines[0].rfind("pipebench: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(needle), std::string::npos) << needle << " in: " << lines[0];
  }
}

}  // namespace
}  // namespace gpufeed::testing
