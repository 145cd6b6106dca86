#include "gpufeed/base/unique_mapping.hpp"

#include <sys/mman.h>

namespace gpufeed {

UniqueMapping UniqueMapping::map_read_only(int fd, std::size_t size) noexcept {
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return {};
  return {data, size};
}

void UniqueMapping::reset() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace gpufeed
