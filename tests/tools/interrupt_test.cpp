// The tools interrupted. h5pack: SIGINT and SIGTERM remove the unfinished output and exit 130 /
// 143, an output written before is left as it was, and the temporaries of a killed run are
// cleaned up by the next conversion to the same output. pipebench: the first SIGINT stops the
// run and reports what it measured, files included; a second one ends it at once, leaving no
// temporary file behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Waits until `path` exists (a writer has started); false after 60 s.
bool wait_for_file(const std::string& path) {
  return wait_until([&] { return fs::exists(path); });
}

/// A process id that no longer runs: a child that exited and was reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

class Interrupted : public ::testing::TestWithParam<int> {};

TEST_P(Interrupted, RemovesTheUnfinishedFileAndKeepsTheEarlierOutput) {
  const int signal = GetParam();
  const TempDir dir;
  const std::string out = dir.file("out.h5");
  ASSERT_EQ(run_command({h5pack_bin(), "convert", "64:8x8x3", out}).exit_code, 0);
  const std::string before = slurp(out);
  // Long enough to be caught while it writes: ~150 MB of noise through gzip level 9.
  RunningCommand convert({h5pack_bin(), "convert", "3000:128x128x3", out, "--compression", "gzip:9",
                          "--workers", "1"});
  const std::string temporary = out + ".tmp." + std::to_string(convert.pid());
  ASSERT_TRUE(wait_for_file(temporary)) << "the conversion never created " << temporary;
  convert.signal(signal);
  const CommandResult r = convert.wait();
  EXPECT_EQ(r.exit_code, 128 + signal) << r.describe();
  EXPECT_THAT(r.err, HasSubstr(signal == SIGINT ? "h5pack: interrupted (SIGINT)"
                                                : "h5pack: terminated (SIGTERM)"));
  EXPECT_THAT(r.err, HasSubstr("h5pack: removed the unfinished " + temporary));
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_EQ(slurp(out), before) << "the earlier output changed";
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "out.h5") << "left behind: " << entry.path();
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupted, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& p) { return p.param == SIGINT ? "SIGINT" : "SIGTERM"; });

TEST(H5packStaleTemporaries, AreRemovedByTheNextConversionToTheSameOutput) {
  const TempDir dir;
  const std::string out = dir.file("out.h5");
  const std::string dead = std::to_string(dead_pid());
  const std::string stale = out + ".tmp." + dead;
  const std::string stale_bytes = out + ".bytes.tmp." + dead;
  const std::string running = out + ".tmp." + std::to_string(::getpid());  // this test runs
  const std::string other_output = dir.file("other.h5.tmp." + dead);
  const std::string not_a_pid = out + ".tmp.backup";
  for (const std::string& path : {stale, stale_bytes, running, other_output, not_a_pid}) {
    std::ofstream(path) << std::string(2'500'000, 'x');
  }
  const CommandResult r = run_command({h5pack_bin(), "convert", "64:8x8x3", out});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("h5pack: note: removed " + stale +
                               " (2.5 MB), left behind by an earlier conversion to " + out +
                               " that was killed"));
  EXPECT_THAT(r.err, HasSubstr("removed " + stale_bytes));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_bytes));
  EXPECT_TRUE(fs::exists(running)) << "a running process's temporary was removed";
  EXPECT_TRUE(fs::exists(other_output));
  EXPECT_TRUE(fs::exists(not_a_pid));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr(running)));
}

TEST(PipebenchInterrupted, ReportsWhatItMeasuredAndWritesItsFiles) {
  const TempDir dir;
  const std::string json = dir.file("run.json"), trace = dir.file("trace.json"),
                    report = dir.file("report.html");
  RunningCommand run({pipebench_bin(), "--synthetic", "2048:16x16x3", "--epochs", "1000000",
                      "--json", json, "--trace", trace, "--report", report, "--progress", "plain",
                      "--progress-every", "0.05"});
  ASSERT_TRUE(wait_for_progress(run)) << "no progress line: " << run.err_so_far();
  run.signal(SIGINT);
  const CommandResult r = run.wait();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("pipebench: interrupted (SIGINT); stopping to report"));
  EXPECT_THAT(r.out, HasSubstr("interrupted by SIGINT: every figure below covers the part"));
  EXPECT_THAT(r.out, HasSubstr("practices"));  // the diagnosis ran
  ASSERT_TRUE(fs::exists(json)) << r.describe();
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["interrupted"], "SIGINT");
  EXPECT_GT(j["batches"].get<std::uint64_t>(), 0u);
  EXPECT_GT(fs::file_size(trace), 0u);
  EXPECT_GT(fs::file_size(report), 0u);
  const std::string dataset =
      (fs::temp_directory_path() / ("pipebench-" + std::to_string(run.pid()) + "-0.h5")).string();
  EXPECT_FALSE(fs::exists(dataset)) << "the synthetic dataset was left behind";
}

TEST(PipebenchInterrupted, ASecondSignalEndsItAtOnceLeavingNoTemporaryFile) {
  const TempDir dir;
  // ~300 MB to generate: the two signals arrive while the synthetic file is being written.
  RunningCommand run({pipebench_bin(), "--synthetic", "6000:128x128x3", "--json",
                      dir.file("run.json"), "--progress", "off"});
  const std::string dataset =
      (fs::temp_directory_path() / ("pipebench-" + std::to_string(run.pid()) + "-0.h5")).string();
  const std::string writing = dataset + ".tmp." + std::to_string(run.pid());
  ASSERT_TRUE(wait_for_file(writing));
  run.signal(SIGINT);
  ASSERT_TRUE(
      wait_until([&] { return run.err_so_far().find("interrupted") != std::string::npos; }));
  run.signal(SIGINT);
  const CommandResult r = run.wait();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("pipebench: removed the unfinished " + writing));
  EXPECT_FALSE(fs::exists(writing));
  EXPECT_FALSE(fs::exists(dataset));
  EXPECT_FALSE(fs::exists(dir.file("run.json")));
}

}  // namespace
}  // namespace gpufeed::testing
