#include "gpufeed/base/unique_handle.hpp"

#include <unistd.h>

namespace gpufeed {

// close() may fail (EINTR, EIO on network filesystems) but the descriptor is released either
// way on Linux, so retrying would risk closing a descriptor another thread just received.
void FdTraits::destroy(int fd) noexcept {
  ::close(fd);
}

}  // namespace gpufeed
