#pragma once
// What the device did: kernels, copies, memsets and synchronizations, on the host clock.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpufeed::profiler {

enum class ActivityKind : std::uint8_t {
  kernel,
  memcpy_h2d,
  memcpy_d2h,
  memcpy_d2d,
  memcpy_other,  ///< host-to-host, peer-to-peer
  memset,
  sync,  ///< a host-side synchronization as the driver saw it; not device work
  /// A stream waiting for an event of another stream (cudaStreamWaitEvent): neither device
  /// work nor a host sync; kept because HolisticTraceAnalysis counts it.
  stream_wait,
};

/// Stable lower-case name ("kernel", "memcpy_h2d", ...), as used in JSON and traces.
const char* activity_kind_name(ActivityKind kind) noexcept;
std::optional<ActivityKind> parse_activity_kind(std::string_view name) noexcept;

/// One device activity record, timestamps already on the host monotonic clock (ns).
struct DeviceActivity {
  ActivityKind kind = ActivityKind::kernel;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t bytes = 0;        ///< copies and memsets
  std::uint64_t correlation = 0;  ///< matches the launching runtime call; 0 when unknown
  bool pageable = false;          ///< a copy to or from pageable (unpinned) host memory
  std::string name;               ///< kernel name (demangled) or copy description

  /// Work that occupies the device (everything but sync and stream-wait records).
  [[nodiscard]] bool is_work() const noexcept {
    return kind != ActivityKind::sync && kind != ActivityKind::stream_wait;
  }
  /// A communication kernel (NCCL's): device time that includes waiting for other ranks.
  [[nodiscard]] bool is_collective() const noexcept {
    return kind == ActivityKind::kernel && name.rfind("nccl", 0) == 0;
  }
};

}  // namespace gpufeed::profiler
