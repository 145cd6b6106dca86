#include "h5pack/compression.hpp"

#include <cctype>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::tools::h5pack {

namespace {

constexpr int kDefaultGzipLevel = 4;

[[noreturn]] void bad_value(const std::string& text) {
  throw UsageError("--compression " + text + " is not known; use none, gzip or gzip:1 .. gzip:9");
}

}  // namespace

std::string Compression::to_string() const {
  return gzip_level == 0 ? std::string("none") : "gzip:" + std::to_string(gzip_level);
}

Compression parse_compression(const std::string& text) {
  if (text == "none") return {};
  if (text == "gzip") return {kDefaultGzipLevel};
  if (text == "lz4") {
    throw UsageError(
        "--compression lz4 needs an HDF5 filter plugin that this build does not load; use gzip "
        "or none");
  }
  const std::string prefix = "gzip:";
  if (text.size() != prefix.size() + 1 || text.compare(0, prefix.size(), prefix) != 0) {
    bad_value(text);
  }
  const char digit = text.back();
  if (std::isdigit(static_cast<unsigned char>(digit)) == 0 || digit == '0') bad_value(text);
  return {digit - '0'};
}

}  // namespace gpufeed::tools::h5pack
