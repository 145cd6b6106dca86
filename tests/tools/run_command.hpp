#pragma once
// Runs a program and captures its exit code, stdout and stderr (for testing the tools).
#include <map>
#include <string>
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

/// Runs args[0] with args (no shell), stdin from /dev/null, with extra environment variables.
CommandResult run_command(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env = {});

inline std::string h5pack_bin() {
  return H5PACK_BIN;
}
inline std::string pipebench_bin() {
  return PIPEBENCH_BIN;
}

}  // namespace gpufeed::testing
