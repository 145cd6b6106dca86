#pragma once
// Where CUPTI's buffer-completed callback leaves the records it parsed.
#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gpufeed/profiler/device_activity.hpp"

namespace gpufeed::profiler::detail {

/// A runtime-API record; the name is resolved from cbid when the records are drained.
struct RawApiCall {
  std::uint32_t cbid = 0;
  std::int64_t begin = 0;  ///< CUPTI clock
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::uint32_t correlation = 0;
};

/// Filled on CUPTI's thread, drained by CuptiCollector; timestamps still on CUPTI's clock.
struct CuptiSink {
  std::mutex mutex;
  std::vector<DeviceActivity> device;
  std::vector<RawApiCall> api;
  std::atomic<std::uint64_t> records{0};
  std::atomic<std::uint64_t> dropped_records{0};
  std::atomic<std::uint64_t> dropped_buffers{0};
  std::atomic<std::size_t> buffer_bytes{std::size_t{8} << 20};

  static CuptiSink& instance() noexcept;
};

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                               std::size_t* max_records) noexcept;
void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t size, std::size_t valid_size) noexcept;

}  // namespace gpufeed::profiler::detail
