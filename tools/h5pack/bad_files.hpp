#pragma once
// Input files that cannot become samples, why, and the account of those skipped (--skip-bad).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::tools::h5pack {

enum class BadKind { unreadable, unsupported, damaged, too_large, empty };
inline constexpr std::size_t kBadKinds = 5;

/// "unreadable", "not a JPEG, PNG or WebP image", "truncated or damaged", "too large", "empty".
std::string to_string(BadKind kind);
/// The key of a kind in --json style output: "unreadable", "unsupported", ...
std::string key(BadKind kind);

/// Why one input file cannot be packed; `message` is one line that names the file.
struct BadFile {
  BadKind kind = BadKind::damaged;
  std::string message;
};

/// Thrown for the first bad file when bad files are not skipped.
class BadFileError : public formats::FormatError {
 public:
  explicit BadFileError(const BadFile& bad);
};

/// The kind of a decoder failure, from its message (the decoder says "is empty", "gpufeed
/// decodes JPEG, PNG and WebP" for another format, "megapixels" for the pixel limit; anything
/// else is a damaged or truncated file).
BadKind classify_decoder_error(const std::string& message);

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
