#include "gpufeed/formats/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpufeed/formats/unique_handle.hpp"

namespace gpufeed::formats {

void throw_errno(const std::string& what, const std::string& advice) {
  const int err = errno;
  throw IoError(what + ": " + std::strerror(err) + advice);
}

}  // namespace gpufeed::formats

namespace gpufeed {

// close() may fail (EINTR, EIO on network filesystems) but the descriptor is released either
// way on Linux, so retrying would risk closing a descriptor another thread just received.
void FdTraits::destroy(int fd) noexcept {
  ::close(fd);
}

}  // namespace gpufeed
