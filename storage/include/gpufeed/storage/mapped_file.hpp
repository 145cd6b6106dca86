#pragma once
// A whole input file mapped read-only into memory, named to the SIGBUS handler.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpufeed/base/unique_mapping.hpp"
#include "gpufeed/storage/mapped_regions.hpp"

namespace gpufeed::storage {

/// Move-only. While it lives, a fault in the mapping (a file cut after it was mapped) is
/// reported with the file's path.
class MappedFile {
 public:
  /// Throws IoError naming the file when it cannot be opened or mapped, and FormatError when it
  /// is empty ("<path> is empty", then ", not <kind>" when `kind` is given).
  explicit MappedFile(std::string path, std::string_view kind = {});

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return mapping_.bytes(); }
  [[nodiscard]] std::size_t size() const { return mapping_.bytes().size(); }

 private:
  std::string path_;
  UniqueMapping mapping_;
  MappedRegion region_;  ///< released before the mapping goes (declared after it)
};

}  // namespace gpufeed::storage
