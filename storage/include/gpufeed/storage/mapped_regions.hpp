#pragma once
// Input files mapped into memory, registered so that a SIGBUS handler can name the file a fault
// belongs to: reading a mapped file that was truncated after it was mapped (or whose disk fails)
// raises SIGBUS where read() would have returned an error.
#include <cstddef>
#include <string>

namespace gpufeed::storage {

/// Registers [data, data + size) as a mapping of `path` for the object's lifetime. Up to
/// kMaxMappedRegions are registered at once; beyond that a mapping is not registered (a fault in
/// it keeps SIGBUS's default action). Thread-safe; the registration moves with the object.
class MappedRegion {
 public:
  static constexpr int kMaxMappedRegions = 16;

  MappedRegion() = default;
  MappedRegion(const void* data, std::size_t size, const std::string& path) noexcept;
  ~MappedRegion() { release(); }
  MappedRegion(MappedRegion&& other) noexcept;
  MappedRegion& operator=(MappedRegion&& other) noexcept;
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  /// No longer registered (call before the memory is unmapped).
  void release() noexcept;

 private:
  int slot_ = -1;
};

/// The path of the registered mapping that holds `address`, or null. Async-signal-safe (for a
/// SIGBUS handler).
const char* mapped_file_at(const void* address) noexcept;

}  // namespace gpufeed::storage
