#include "gpufeed/storage/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "gpufeed/storage/error.hpp"

namespace gpufeed::storage {

UniqueFd open_read_only(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno("cannot open " + path, "; check the path and its permissions");
  return fd;
}

std::uint64_t file_size(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw_errno("cannot read the size of " + path);
  return static_cast<std::uint64_t>(info.st_size);
}

ReadResult pread_full(int fd, std::span<std::uint8_t> out, std::uint64_t offset) noexcept {
  ReadResult result;
  while (result.bytes < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + result.bytes, out.size() - result.bytes,
                              static_cast<off_t>(offset + result.bytes));
    if (n > 0) {
      result.bytes += static_cast<std::size_t>(n);
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      result.error = errno;
      break;
    }
  }
  return result;
}

void sync_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno("cannot write " + path);
  while (::fsync(fd.get()) != 0) {
    if (errno != EINTR) throw_errno("cannot write " + path);
  }
}

void write_all(int fd, std::span<const std::uint8_t> bytes, const std::string& what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      throw_errno(what);
    }
  }
}

}  // namespace gpufeed::storage
