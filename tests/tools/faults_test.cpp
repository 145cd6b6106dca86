// The tools on a failing disk (tests/fault preloaded into them): h5pack meeting a full disk, a
// file-size limit or an I/O error while it writes, an input cut while it reads it; pipebench
// meeting a read error mid-run or a full disk. Each ends with exit code 1 and one line that says
// what happened and what to do, leaves no temporary file, and an output that existed before
// stays as it was.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/npy.hpp"
#include "run_command.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

/// The environment that preloads the fault library into a tool with `rule` (GPUFEED_FAULT_*
/// variables without the prefix); the count of faults it injected goes to `report`.
std::map<std::string, std::string> faulty(const std::map<std::string, std::string>& rule,
                                          const std::string& report) {
  std::map<std::string, std::string> env{{"LD_PRELOAD", GPUFEED_FAULT_LIBRARY},
                                         {"GPUFEED_FAULT_REPORT", report}};
  for (const auto& [name, value] : rule) env["GPUFEED_FAULT_" + name] = value;
  return env;
}

/// Faults the preloaded library injected ("" when it never loaded).
std::string faults_in(const std::string& report) {
  std::string text = slurp(report);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

/// Runs args[0] (no shell) with RLIMIT_FSIZE at `limit` bytes, stdin from /dev/null, SIGXFSZ
/// ignored or at its default action (which kills the process).
CommandResult run_with_file_size_limit(const std::vector<std::string>& args, rlim_t limit,
                                       bool ignore_sigxfsz) {
  const TempDir capture;
  const std::string out_path = capture.file("stdout"), err_path = capture.file("stderr");
  std::vector<std::string> strings = args;
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // async-signal-safe calls only, up to exec
    const struct rlimit cap = {limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &cap);
    struct sigaction action {};
    action.sa_handler = ignore_sigxfsz ? SIG_IGN : SIG_DFL;
    ::sigaction(SIGXFSZ, &action, nullptr);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  CommandResult r;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

/// One conversion to `out` (raw gzip, raw uncompressed or jpeg), the same every time.
std::vector<std::string> convert_args(const std::string& out, const std::string& store) {
  std::vector<std::string> args = {h5pack_bin(), "convert", "600:32x32x3", out, "--workers", "2"};
  if (store == "gzip") args.insert(args.end(), {"--compression", "gzip:1", "--chunk", "16"});
  if (store == "none") args.insert(args.end(), {"--chunk", "16"});
  if (store == "jpeg") args.insert(args.end(), {"--store", "jpeg"});
  return args;
}

/// A folder holding out.h5 from an earlier conversion; the checks a failed run must pass.
class H5packFaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const CommandResult first = run_command(convert_args(out_, GetParam()));
    ASSERT_EQ(first.exit_code, 0) << first.describe();
    before_ = slurp(out_);
  }

  /// Exit code 1, one line naming the output, the earlier out.h5 as it was, nothing else left.
  void expect_clean_failure(const CommandResult& r, const std::string& reason,
                            const std::string& advice) const {
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    const std::string line = r.err_lines()[0];
    EXPECT_THAT(line, ::testing::ContainsRegex("^h5pack: error: cannot (create|write) "));
    EXPECT_THAT(line, HasSubstr(out_));
    EXPECT_THAT(line, HasSubstr(reason));
    EXPECT_THAT(line, HasSubstr(advice));
    EXPECT_EQ(names_in(dir_.path()), std::vector<std::string>{"out.h5"});
    EXPECT_EQ(slurp(out_), before_) << "the earlier output changed";
  }

  TempDir dir_;
  TempDir scratch_;  // the fault library's report, outside the output's folder
  std::string out_ = dir_.file("out.h5");
  std::string report_ = scratch_.file("faults");
  std::string before_;
};

TEST_P(H5packFaults, AFullDiskIsOneLineThatSaysSoAndLeavesNoPartialOutput) {
  const std::uint64_t size = before_.size();
  // At the first write, within the data, and at the very end (metadata written on close; HDF5
  // leaves a few unwritten bytes in the file's last blocks, so a little before its size).
  for (const std::uint64_t limit :
       {std::uint64_t{0}, size / 2, size - std::max<std::uint64_t>(200, size / 500)}) {
    const CommandResult r =
        run_command(convert_args(out_, GetParam()), faulty({{"PATH", "out.h5"},
                                                            {"OPS", "write,sync"},
                                                            {"ERRNO", "ENOSPC"},
                                                            {"AFTER_BYTES", std::to_string(limit)}},
                                                           report_));
    EXPECT_NE(faults_in(report_), "0") << "no fault was injected at " << limit;
    expect_clean_failure(r, "No space left on device", "the disk is full: free space on it");
  }
}

TEST_P(H5packFaults, AnIoErrorWhenTheOutputIsFlushedToDiskIsReported) {
  const CommandResult r =
      run_command(convert_args(out_, GetParam()),
                  faulty({{"PATH", "out.h5"}, {"OPS", "sync"}, {"ERRNO", "EIO"}}, report_));
  EXPECT_EQ(faults_in(report_), "1");
  expect_clean_failure(r, "Input/output error", "check the disk");
}

TEST_P(H5packFaults, AFileSizeLimitIsOneLineThatSaysSoAndLeavesNoPartialOutput) {
  const rlim_t limit = before_.size() / 2;
  for (const bool ignored : {true, false}) {
    const CommandResult r =
        run_with_file_size_limit(convert_args(out_, GetParam()), limit, ignored);
    expect_clean_failure(r, "File too large", "a file-size limit such as ulimit -f");
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, H5packFaults, ::testing::Values("gzip", "none", "jpeg"));

TEST(H5packInputFaults, AnInputCutWhileMappedIsOneLineNamingIt) {
  const TempDir dir, scratch;
  const std::string npy = dir.file("images.npy");
  const std::string out = dir.file("out.h5");
  std::vector<std::uint8_t> pixels(4096 * 16 * 16 * 3);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
  formats::write_npy(npy, "|u1", {4096, 16, 16, 3}, pixels);
  ASSERT_EQ(run_command({h5pack_bin(), "convert", "8:4x4x3", out}).exit_code, 0);
  const std::string before = slurp(out);
  // The input is mapped before the output is created; the first write to the output cuts it,
  // so the next samples read from the mapping are gone (SIGBUS).
  const std::string report = scratch.file("faults");
  const CommandResult r =
      run_command({h5pack_bin(), "convert", npy, out, "--chunk", "16", "--workers", "1"},
                  faulty({{"PATH", "out.h5"},
                          {"OPS", "write"},
                          {"MODE", "truncate"},
                          {"TRUNCATE_PATH", npy},
                          {"TRUNCATE_SIZE", "128"},
                          {"TIMES", "1"}},
                         report));
  EXPECT_EQ(faults_in(report), "1");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const std::vector<std::string> lines = r.err_lines();
  ASSERT_EQ(lines.size(), 2u) << r.describe();  // the note about labels, then the error
  EXPECT_THAT(lines[0], HasSubstr("note: no --labels given"));
  EXPECT_EQ(lines[1], "h5pack: error: cannot read " + npy +
                          ": the file was truncated, or its disk failed, while it was being "
                          "read (SIGBUS); check the file and run again");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"images.npy", "out.h5"}));
  EXPECT_EQ(slurp(out), before);
}

/// A folder of two classes with two JPEGs each; b/broken.jpg is one of them.
void write_image_folder(const fs::path& root) {
  formats::JpegEncoder encoder(90);
  for (const char* name : {"a", "b"}) {
    fs::create_directories(root / name);
    for (int i = 0; i < 2; ++i) {
      formats::Image image(24, 16, 3);
      for (std::size_t k = 0; k < image.pixels.size(); ++k) {
        image.pixels[k] = static_cast<std::uint8_t>(k * 3 + static_cast<std::size_t>(i) * 50);
      }
      const std::vector<std::uint8_t> bytes = encoder.encode(image.view());
      const std::string file = std::string(name) == "b" && i == 1 ? "broken.jpg" : "ok.jpg";
      std::ofstream(root / name / (std::to_string(i) + file), std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
    }
  }
}

TEST(H5packInputFaults, AnImageThatCannotBeReadIsOneLineNamingItOrIsSkipped) {
  const TempDir dir, scratch;
  const fs::path images = dir.path() / "images";
  write_image_folder(images);
  const std::string broken = (images / "b" / "1broken.jpg").string();
  const std::string out = dir.file("out.h5");
  const std::string report = scratch.file("faults");
  const std::map<std::string, std::string> modes[] = {
      {{"PATH", "broken.jpg"}, {"ERRNO", "EIO"}},  // the disk fails the read
      {{"PATH", "broken.jpg"}, {"MODE", "eof"}},   // the file was cut after it was opened
  };
  const std::string reasons[] = {"cannot read " + broken + ": Input/output error",
                                 "cannot read " + broken + ": it ended after 0 of its "};
  for (int m = 0; m < 2; ++m) {
    const CommandResult r =
        run_command({h5pack_bin(), "convert", images.string(), out}, faulty(modes[m], report));
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_THAT(r.err_lines()[0], StartsWith("h5pack: error: " + reasons[m]));
    EXPECT_THAT(r.err_lines()[0], HasSubstr("--skip-bad"));
    EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"images"});

    const CommandResult skipped = run_command(
        {h5pack_bin(), "convert", images.string(), out, "--skip-bad"}, faulty(modes[m], report));
    EXPECT_EQ(skipped.exit_code, 0) << skipped.describe();
    EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"images", "out.h5"}));
    fs::remove(out);
  }
}

// ---- pipebench ----

class PipebenchFaults : public SharedDataset<PipebenchFaults> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    return h5pack_synthetic(dir.file("small.h5"), "512:16x16x3", 16);
  }

 protected:
  TempDir scratch_;
  std::string report_ = scratch_.file("faults");
};

TEST_F(PipebenchFaults, AReadErrorMidRunIsOneLineNamingTheFileAndChunk) {
  const TempDir out;
  const std::string json = out.file("run.json");
  const CommandResult r =
      run_command({pipebench_bin(), "--data", data_, "--epochs", "3", "--batch", "32", "--workers",
                   "2", "--cache-mb", "0", "--progress", "off", "--json", json},
                  faulty({{"PATH", "small.h5"}, {"ERRNO", "EIO"}, {"AFTER_CALLS", "40"}}, report_));
  EXPECT_NE(faults_in(report_), "0");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  const std::string line = r.err_lines()[0];
  EXPECT_THAT(line, StartsWith("pipebench: error: cannot read chunk "));
  EXPECT_THAT(line, HasSubstr(data_));
  EXPECT_THAT(line, HasSubstr("Input/output error; the device reported an I/O error"));
  EXPECT_THAT(line, ::testing::MatchesRegex(".*\\(read stage, batch [0-9]+ of epoch [0-9]+\\)"));
  EXPECT_TRUE(names_in(out.path()).empty()) << "left behind: " << names_in(out.path())[0];
}

TEST_F(PipebenchFaults, ACacheBudgetOfZeroWorks) {
  const CommandResult r = run_command({pipebench_bin(), "--data", data_, "--epochs", "1", "--batch",
                                       "32", "--cache-mb", "0", "--progress", "off"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
}

TEST_F(PipebenchFaults, AFullDiskForTheSyntheticDatasetLeavesNoTemporaryFile) {
  const TempDir tmp;
  std::map<std::string, std::string> env = faulty(
      {{"PATH", "pipebench-"}, {"OPS", "write"}, {"ERRNO", "ENOSPC"}, {"AFTER_BYTES", "100000"}},
      report_);
  env["TMPDIR"] = tmp.path().string();
  const CommandResult r = run_command(
      {pipebench_bin(), "--synthetic", "2000:32x32x3", "--epochs", "1", "--progress", "off"}, env);
  EXPECT_NE(faults_in(report_), "0");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_THAT(r.err_lines()[0], StartsWith("pipebench: error: cannot write "));
  EXPECT_THAT(r.err_lines()[0], HasSubstr("No space left on device; the disk is full"));
  EXPECT_TRUE(names_in(tmp.path()).empty()) << "left behind: " << names_in(tmp.path())[0];
}

TEST_F(PipebenchFaults, AFullDiskForTheJsonSaysSoAndKeepsTheEarlierFile) {
  const TempDir out;
  const std::string json = out.file("run.json");
  std::ofstream(json) << "{\"earlier\": true}\n";
  const CommandResult r =
      run_command({pipebench_bin(), "--data", data_, "--epochs", "1", "--batch", "64", "--progress",
                   "off", "--json", json},
                  faulty({{"PATH", "run.json"}, {"OPS", "write"}, {"ERRNO", "ENOSPC"}}, report_));
  EXPECT_NE(faults_in(report_), "0");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_GE(r.err_lines().size(), 1u) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("cannot write " + json +
                               ": No space left on device; the disk is "
                               "full"));
  EXPECT_EQ(slurp(json), "{\"earlier\": true}\n");
  EXPECT_EQ(names_in(out.path()), std::vector<std::string>{"run.json"});
}

}  // namespace
}  // namespace gpufeed::testing
