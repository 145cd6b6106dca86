#pragma once
// Decoded samples of unknown count (bad files may be skipped) wait in an unlinked file beside
// the output until the raw-layout writer, which needs the count up front, packs them.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/pack.hpp"

namespace gpufeed::tools::h5pack {

class RawStaging {
 public:
  /// Creates and unlinks `<output>.raw.tmp.<pid>`: nothing remains of it after the process.
  RawStaging(const std::string& output, std::uint64_t sample_bytes);
  ~RawStaging();
  RawStaging(const RawStaging&) = delete;
  RawStaging& operator=(const RawStaging&) = delete;

  /// Appends one sample of exactly sample_bytes. One thread at a time.
  void append(std::span<const std::uint8_t> sample);
  /// Writes what is buffered; call before source() is used.
  void flush();
  [[nodiscard]] std::uint64_t samples() const { return samples_; }
  /// Reads samples back with pread: thread-safe. Valid while this object lives.
  [[nodiscard]] formats::SampleSource source() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t sample_bytes_;
  std::uint64_t samples_ = 0;
  std::uint64_t written_ = 0;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace gpufeed::tools::h5pack
