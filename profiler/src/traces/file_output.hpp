#pragma once
// Writing a whole text file, with an error that names the path.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "gpufeed/profiler/error.hpp"

namespace gpufeed::profiler::detail {

inline void write_text_file(const std::string& path, std::string_view text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.flush();
  if (!out) {
    throw ReportError(std::string("cannot write ") + what + " " + path + ": " +
                      std::strerror(errno) + " (check the directory exists and is writable)");
  }
}

}  // namespace gpufeed::profiler::detail
