#pragma once
// A whole file mapped read-only into memory.
#include <cstdint>
#include <span>
#include <string>

#include "gpufeed/formats/mapped_regions.hpp"

namespace gpufeed::tools::h5pack {

class MappedFile {
 public:
  /// Throws formats::IoError naming the file when it cannot be opened or mapped, and
  /// formats::FormatError when it is empty.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const {
    return {static_cast<const std::uint8_t*>(data_), size_};
  }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  formats::MappedRegion region_;  ///< names the file to a SIGBUS handler (a file cut while mapped)
};

}  // namespace gpufeed::tools::h5pack
