#pragma once
// Input files that cannot become samples, why, and the account of those skipped (--skip-bad).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_work.hpp"

namespace gpufeed::tools::h5pack {

using formats::BadFile;
using formats::BadKind;
using formats::kBadKinds;

/// Thrown for the first bad file when bad files are not skipped.
class BadFileError : public formats::FormatError {
 public:
  explicit BadFileError(const BadFile& bad);
};

/// Counts skipped files by kind and keeps the first few lines for the summary.
class SkipLog {
 public:
  static constexpr std::size_t kListed = 20;

  void add(const std::string& path, const BadFile& bad);
  [[nodiscard]] std::uint64_t total() const { return total_; }
  [[nodiscard]] std::uint64_t count(BadKind kind) const {
    return counts_[static_cast<std::size_t>(kind)];
  }
  /// "skipped 3 bad files: 1 unreadable, 2 empty" and the files, to stdout; nothing if none.
  void print() const;

 private:
  std::array<std::uint64_t, kBadKinds> counts_{};
  std::uint64_t total_ = 0;
  std::vector<std::string> listed_;
};

}  // namespace gpufeed::tools::h5pack
