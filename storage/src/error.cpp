#include "gpufeed/storage/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpufeed::storage {

std::string errno_advice(int error) {
  switch (error) {
    case ENOSPC:
      return "; the disk is full: free space on it, or write to another disk";
    case EDQUOT:
      return "; the disk quota is used up: free space, or write to another disk";
    case EFBIG:
      return "; the file would exceed the largest file allowed here (a file-size limit such as "
             "ulimit -f, or the filesystem's maximum): raise the limit, or write to another "
             "filesystem";
    case EIO:
      return "; the device reported an I/O error: check the disk or network filesystem (dmesg) "
             "and try again";
    case EROFS:
      return "; the filesystem is read-only: write to another location";
    default:
      return {};
  }
}

void throw_errno(const std::string& what, const std::string& advice) {
  const int err = errno;
  throw IoError(what + ": " + std::strerror(err) + (advice.empty() ? errno_advice(err) : advice));
}

}  // namespace gpufeed::storage
