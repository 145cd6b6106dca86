#pragma once
// Runs a program and captures its exit code, stdout and stderr (for testing the tools).
#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpufeed::testing {

struct CommandResult {
  int exit_code = -1;  ///< the exit status, or 128 + signal number when killed by a signal
  std::string out;
  std::string err;
  /// stderr split at line breaks (a trailing newline does not start another line).
  [[nodiscard]] std::vector<std::string> err_lines() const;
  /// Everything, for failure messages.
  [[nodiscard]] std::string describe() const;
};

class TempDir;

/// A program started with args (no shell), stdin from /dev/null, stdout and stderr captured, with
/// extra environment variables; for tests that signal it while it runs.
class RunningCommand {
 public:
  explicit RunningCommand(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env = {});
  ~RunningCommand();  // kills and reaps it when wait() was not called
  RunningCommand(const RunningCommand&) = delete;
  RunningCommand& operator=(const RunningCommand&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  /// What it has written to stdout and stderr so far.
  [[nodiscard]] std::string out_so_far() const;
  [[nodiscard]] std::string err_so_far() const;
  /// Sends `signal` to it.
  void signal(int signal) const;
  /// Waits for it to end.
  CommandResult wait();

 private:
  std::unique_ptr<TempDir> capture_;
  pid_t pid_ = -1;
};

/// Waits until `ready()` holds, polling every 2 ms; false after 60 s.
template <typename Ready>
bool wait_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

/// Waits until pipebench's stdout shows a progress line (it is reading); false after 60 s.
inline bool wait_for_progress(const RunningCommand& run) {
  return wait_until([&] { return run.out_so_far().find("progress ") != std::string::npos; });
}

/// Runs args[0] with args (no shell), stdin from /dev/null, with extra environment variables.
CommandResult run_command(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env = {});

inline std::string h5pack_bin() {
  return H5PACK_BIN;
}
inline std::string pipebench_bin() {
  return PIPEBENCH_BIN;
}

/// h5pack and pipebench with `args`, as run_command() runs them.
inline CommandResult h5pack(std::vector<std::string> args,
                            const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), h5pack_bin());
  return run_command(args, env);
}
/// What h5pack with `args` wrote to stdout; a failure, with all it wrote, unless it exits 0.
inline std::string h5pack_out(std::vector<std::string> args) {
  const CommandResult r = h5pack(std::move(args));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.out;
}
inline CommandResult pipebench(std::vector<std::string> args,
                               const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), pipebench_bin());
  return run_command(args, env);
}

/// Packs h5pack's synthetic samples `spec` ("N:HxWxC") into `path`, `chunk` samples a chunk, and
/// returns `path`; a test failure when h5pack fails.
inline std::string h5pack_synthetic(const std::string& path, const std::string& spec,
                                    std::uint64_t chunk) {
  const CommandResult r = h5pack({"convert", spec, path, "--chunk", std::to_string(chunk)});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return path;
}

}  // namespace gpufeed::testing
