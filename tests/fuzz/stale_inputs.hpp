#pragma once
// The fuzz targets that hand their input to code reading a path write it to a file or folder
// named PREFIX<pid>; a process that crashed leaves its own behind, which the next one removes.
// And which of an input's samples they read.
#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace gpufeed::fuzz {

/// Removes the entries of `dir` named `prefix`<pid> whose process no longer exists.
inline void remove_stale_inputs(const std::filesystem::path& dir, const char* prefix) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(prefix), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
}

/// The first, a middle and the last of `count` (chunks or samples): what a target reads of an
/// input that opened, so that reading stays fast whatever count the input claims.
inline std::vector<std::uint64_t> picks(std::uint64_t count) {
  std::vector<std::uint64_t> picked{0};
  if (count > 2) picked.push_back(count / 2);
  if (count > 1) picked.push_back(count - 1);
  return picked;
}

}  // namespace gpufeed::fuzz
