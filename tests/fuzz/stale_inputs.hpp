#pragma once
// The fuzz targets that hand their input to code reading a path write it to a file or folder
// named PREFIX<pid>; a process that crashed leaves its own behind, which the next one removes.
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

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

}  // namespace gpufeed::fuzz
