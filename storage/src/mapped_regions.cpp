#include "gpufeed/storage/mapped_regions.hpp"

#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

namespace gpufeed::storage {

namespace {

// A slot is free (0), being filled or emptied by its owner (1), or describes a mapping (2). The
// signal handler reads only slots in state 2; an owner frees a slot before it unmaps.
enum : int { kFree = 0, kBusy = 1, kHeld = 2 };

struct Entry {
  std::atomic<int> state{kFree};
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::array<char, PATH_MAX> path{};
};

std::array<Entry, MappedRegion::kMaxMappedRegions>& entries() {
  static std::array<Entry, MappedRegion::kMaxMappedRegions> all;
  return all;
}

static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need lock-free atomics");

}  // namespace

MappedRegion::MappedRegion(const void* data, std::size_t size, const std::string& path) noexcept {
  if (data == nullptr || size == 0 || path.size() + 1 > PATH_MAX) return;
  for (int i = 0; i < kMaxMappedRegions; ++i) {
    Entry& e = entries()[static_cast<std::size_t>(i)];
    int expected = kFree;
    if (!e.state.compare_exchange_strong(expected, kBusy)) continue;
    e.begin = reinterpret_cast<std::uintptr_t>(data);
    e.end = e.begin + size;
    std::memcpy(e.path.data(), path.c_str(), path.size() + 1);
    e.state.store(kHeld, std::memory_order_release);
    slot_ = i;
    return;
  }
}

MappedRegion::MappedRegion(MappedRegion&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}

MappedRegion& MappedRegion::operator=(MappedRegion&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

void MappedRegion::release() noexcept {
  if (slot_ < 0) return;
  entries()[static_cast<std::size_t>(slot_)].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

const char* mapped_file_at(const void* address) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  for (const Entry& e : entries()) {
    if (e.state.load(std::memory_order_acquire) != kHeld) continue;
    if (at >= e.begin && at < e.end) return e.path.data();
  }
  return nullptr;
}

}  // namespace gpufeed::storage
