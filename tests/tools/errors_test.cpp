// Every failure is one line on stderr, "<program>: error: ...", with exit code 2 for usage
// errors and 1 for run-time failures.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

void expect_one_line_error(const CommandResult& r, int exit_code, const std::string& program,
                           const std::string& needle) {
  EXPECT_EQ(r.exit_code, exit_code) << r.describe();
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << r.describe();
  EXPECT_EQ(lines[0].rfind(program + ": error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(needle), std::string::npos) << "'" << needle << "' in: " << lines[0];
  EXPECT_EQ(r.err.back(), '\n');
}

class ToolErrors : public SharedDataset<ToolErrors> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    return h5pack_synthetic(dir.file("tiny.h5"), "100:8x8x3", 10);
  }
};

TEST_F(ToolErrors, PipebenchUsageErrors) {
  expect_one_line_error(pipebench({"--bogus"}), 2, "pipebench", "--bogus");
  expect_one_line_error(pipebench({"--data", data_, "--order", "bogus"}), 2, "pipebench",
                        "--order");
  expect_one_line_error(pipebench({"--data", data_, "--batch", "0"}), 2, "pipebench", "--batch");
  expect_one_line_error(pipebench({"--data", data_, "--batch", "10", "--model", "resnet18"}), 2,
                        "pipebench", "--model resnet18 needs samples of at least 32x32");
  expect_one_line_error(pipebench({"--data", data_, "--echo", "0"}), 2, "pipebench", "--echo=0");
  expect_one_line_error(pipebench({"--data", data_, "--augment", "rotate"}), 2, "pipebench",
                        "rotate");
  expect_one_line_error(pipebench({"--data", data_, "--augment", "crop-flip"}), 2, "pipebench",
                        "jpeg-layout");
  expect_one_line_error(pipebench({"--data", data_, "--size", "12x"}), 2, "pipebench", "--size");
  expect_one_line_error(pipebench({"--data", data_, "--inject-stall", "wait:5"}), 2, "pipebench",
                        "--inject-stall");
  expect_one_line_error(pipebench({"--data", data_, "--dtype", "int8"}), 2, "pipebench", "int8");
  expect_one_line_error(pipebench({"--data", data_, "--synthetic", "10:8x8x3"}), 2, "pipebench",
                        "--synthetic");
  expect_one_line_error(pipebench({"--data", data_, "--epochs", "2", "--steps", "3"}), 2,
                        "pipebench", "--steps");
  expect_one_line_error(pipebench({"--synthetic", "10:8x8"}), 2, "pipebench", "10:8x8");
  expect_one_line_error(pipebench({"--data", data_, "--device", "tpu"}), 2, "pipebench", "tpu");
  expect_one_line_error(pipebench({"sweep", "--data", data_, "--workers", "1,x"}), 2, "pipebench",
                        "--workers 1,x");
  expect_one_line_error(pipebench({"sweep", "--data", data_, "--echo", "1,auto:0"}), 2, "pipebench",
                        "--echo");
  expect_one_line_error(
      pipebench({"sweep", "--data", data_, "--csv", dir_->file("no/such/dir/s.csv")}), 1,
      "pipebench", "--csv");
  expect_one_line_error(pipebench({"--data", data_, "--progress", "loud"}), 2, "pipebench",
                        "--progress");
  expect_one_line_error(pipebench({"analyze"}), 2, "pipebench", "trace");
  expect_one_line_error(pipebench({"analyze", dir_->file("missing.json")}), 1, "pipebench",
                        "missing.json");
}

TEST_F(ToolErrors, PipebenchBatchLargerThanTheDataset) {
  expect_one_line_error(pipebench({"--data", data_, "--batch", "1000"}), 2, "pipebench", "batch");
}

TEST_F(ToolErrors, PipebenchMissingFile) {
  const std::string missing = dir_->file("missing.h5");
  expect_one_line_error(pipebench({"--data", missing}), 1, "pipebench", missing);
}

TEST_F(ToolErrors, PipebenchTextFileIsNotHdf5) {
  const std::string text = dir_->file("notes.txt");
  std::ofstream(text) << "these are not images\n";
  expect_one_line_error(pipebench({"--data", text}), 1, "pipebench", text);
}

TEST_F(ToolErrors, PipebenchMissingImagesDataset) {
  const auto r = pipebench({"--data", data_, "--images", "/nope"});
  expect_one_line_error(r, 1, "pipebench", "/nope");
}

TEST_F(ToolErrors, PipebenchJsonIntoAMissingDirectory) {
  const std::string out = dir_->file("no/such/dir/out.json");
  expect_one_line_error(
      pipebench({"--data", data_, "--batch", "50", "--epochs", "1", "--json", out}), 1, "pipebench",
      out);
}

TEST_F(ToolErrors, H5packErrors) {
  expect_one_line_error(h5pack({}), 2, "h5pack", "subcommand");
  expect_one_line_error(h5pack({"info"}), 2, "h5pack", "FILE");
  expect_one_line_error(h5pack({"info", dir_->file("missing.h5")}), 1, "h5pack",
                        dir_->file("missing.h5"));
  expect_one_line_error(h5pack({"verify", data_, "--images", "/nope"}), 1, "h5pack", "/nope");
  expect_one_line_error(h5pack({"convert", "10:8x8x3", dir_->file("a.h5"), "--compression", "lz4"}),
                        2, "h5pack", "filter plugin");
  expect_one_line_error(
      h5pack({"convert", "10:8x8x3", dir_->file("a.h5"), "--compression", "gzip:12"}), 2, "h5pack",
      "--compression");
  expect_one_line_error(h5pack({"convert", "images.bin", dir_->file("a.h5")}), 2, "h5pack",
                        "images.bin");
  expect_one_line_error(h5pack({"convert", dir_->file("none.npy"), dir_->file("a.h5")}), 1,
                        "h5pack", "none.npy");
  expect_one_line_error(h5pack({"convert", "10:8x8x3", dir_->file("a.h5"), "--store", "jpeg",
                                "--compression", "gzip"}),
                        2, "h5pack", "--compression");
  EXPECT_FALSE(std::filesystem::exists(dir_->file("a.h5")));
}

}  // namespace
}  // namespace gpufeed::testing
