#include "h5pack/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::tools::h5pack {

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) formats::throw_errno("cannot open " + path_);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    formats::throw_errno("cannot read the size of " + path_);
  }
  size_ = static_cast<std::size_t>(info.st_size);
  if (size_ == 0) {
    ::close(fd);
    throw formats::FormatError(path_ + " is empty");
  }
  data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int error = errno;
  ::close(fd);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    errno = error;
    formats::throw_errno("cannot map " + path_ + " into memory");
  }
  region_ = formats::MappedRegion(data_, size_, path_);
}

MappedFile::~MappedFile() {
  region_.release();
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace gpufeed::tools::h5pack
