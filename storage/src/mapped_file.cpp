#include "gpufeed/storage/mapped_file.hpp"

#include <cerrno>
#include <utility>

#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/file_io.hpp"

namespace gpufeed::storage {

MappedFile::MappedFile(std::string path, std::string_view kind) : path_(std::move(path)) {
  const UniqueFd fd = open_read_only(path_);
  const std::uint64_t size = file_size(fd.get(), path_);
  if (size == 0) {
    throw FormatError(path_ + " is empty" + (kind.empty() ? "" : ", not " + std::string(kind)));
  }
  mapping_ = UniqueMapping::map_read_only(fd.get(), size);
  if (!mapping_) throw_errno("cannot map " + path_ + " into memory");
  region_ = MappedRegion(mapping_.bytes().data(), size, path_);
}

}  // namespace gpufeed::storage
