#include "traces/gzip_file.hpp"

#include <libdeflate.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "gpufeed/base/little_endian.hpp"
#include "gpufeed/profiler/error.hpp"

namespace gpufeed::profiler::detail {

namespace {

constexpr std::size_t kMaxOutput = std::size_t{16} << 30;  // refuse to inflate past 16 GiB

bool is_gzip(const std::string& data, std::size_t at = 0) {
  return data.size() >= at + 2 && static_cast<unsigned char>(data[at]) == 0x1f &&
         static_cast<unsigned char>(data[at + 1]) == 0x8b;
}

/// ISIZE, the last four bytes of a gzip member: the uncompressed size modulo 2^32.
std::size_t trailer_size(const std::string& data) {
  if (data.size() < 18) return 0;
  return load_le32(reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4));
}

}  // namespace

std::string gunzip(const std::string& data, const std::string& what) {
  const std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d) throw TraceError(what + ": out of memory for the gzip decompressor");
  // Trust ISIZE only when deflate could produce it (at most ~1032:1): a damaged or truncated
  // file ends in arbitrary bytes.
  const std::size_t isize = trailer_size(data);
  const std::size_t guess = isize <= data.size() * 1032 ? isize : 0;
  std::string out(std::max(guess, data.size() * 4) + 1, '\0');
  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  while (in_pos < data.size() && is_gzip(data, in_pos)) {  // one gzip member per pass
    std::size_t in_used = 0;
    std::size_t written = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(
        d.get(), data.data() + in_pos, data.size() - in_pos, out.data() + out_pos,
        out.size() - out_pos, &in_used, &written);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      if (out.size() >= kMaxOutput) throw TraceError(what + ": decompresses to more than 16 GiB");
      out.resize(out.size() * 2);
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS) {
      throw TraceError(what + ": corrupt or truncated gzip data at byte " + std::to_string(in_pos) +
                       " (re-copy or re-record the trace)");
    }
    in_pos += in_used;
    out_pos += written;
  }
  out.resize(out_pos);
  return out;
}

std::string read_maybe_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError("cannot open trace " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw TraceError("cannot read trace " + path + ": " + std::strerror(errno));
  std::string data = std::move(buf).str();
  return is_gzip(data) ? gunzip(data, "trace " + path) : data;
}

}  // namespace gpufeed::profiler::detail
