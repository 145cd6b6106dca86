#pragma once
// Test-side gzip helpers on zlib, independent of the library's libdeflate reader.
#include <zlib.h>

#include <stdexcept>
#include <string>

namespace gpufeed::profiler::testing {

inline std::string read_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

/// Appends `text` to `path` as one more gzip member ("ab" starts a new member).
inline void append_gz_member(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "ab");
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

}  // namespace gpufeed::profiler::testing
