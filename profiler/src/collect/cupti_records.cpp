// CUPTI buffer callbacks: hand out aligned buffers, parse completed ones into CuptiSink.
#include <cstdlib>
#include <exception>
#include <string>

#include "collect/cupti_api.hpp"
#include "collect/cupti_sink.hpp"

namespace gpufeed::profiler::detail {

namespace {

constexpr std::size_t kAlign = 8;  // CUPTI requires 8-byte aligned activity buffers

ActivityKind copy_kind(std::uint8_t copy) noexcept {
  switch (copy) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return ActivityKind::memcpy_h2d;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return ActivityKind::memcpy_d2h;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return ActivityKind::memcpy_d2d;
    default:
      return ActivityKind::memcpy_other;
  }
}

/// What every timed device record says alike: its device, stream, span and correlation id.
template <typename Record>
DeviceActivity timed(ActivityKind kind, const Record& r) {
  DeviceActivity a;
  a.kind = kind;
  a.device = r.deviceId;
  a.stream = r.streamId;
  a.begin_ns = static_cast<std::int64_t>(r.start);
  a.end_ns = static_cast<std::int64_t>(r.end);
  a.correlation = r.correlationId;
  return a;
}

DeviceActivity from_kernel(const CUpti_ActivityKernel10& k) {
  DeviceActivity a = timed(ActivityKind::kernel, k);
  a.name = k.name != nullptr ? k.name : "kernel";  // demangled when drained
  return a;
}

DeviceActivity from_memcpy(const CUpti_ActivityMemcpy6& m) {
  DeviceActivity a = timed(copy_kind(m.copyKind), m);
  a.bytes = m.bytes;
  a.pageable = m.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
               m.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  a.name = std::string("Memcpy ") + activity_kind_name(a.kind) + (a.pageable ? " (pageable)" : "");
  return a;
}

DeviceActivity from_memset(const CUpti_ActivityMemset4& m) {
  DeviceActivity a = timed(ActivityKind::memset, m);
  a.bytes = m.bytes;
  a.name = "Memset";
  return a;
}

const char* sync_name(CUpti_ActivitySynchronizationType type) noexcept {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "Context Sync";
    default:
      return nullptr;  // stream-wait-event does not block the host
  }
}

void add_record(CuptiSink& sink, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      sink.device.push_back(from_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      sink.device.push_back(from_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      sink.device.push_back(from_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record)));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      const char* name = sync_name(s.type);
      if (name == nullptr) break;
      sink.device.push_back({ActivityKind::sync, 0, s.streamId, static_cast<std::int64_t>(s.start),
                             static_cast<std::int64_t>(s.end), 0, s.correlationId, false, name});
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto& api = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
      sink.api.push_back({api.cbid, static_cast<std::int64_t>(api.start),
                          static_cast<std::int64_t>(api.end), api.threadId, api.correlationId});
      break;
    }
    default:
      break;
  }
}

}  // namespace

CuptiSink& CuptiSink::instance() noexcept {
  static CuptiSink* const sink = new CuptiSink();  // CUPTI may call back during process exit
  return *sink;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                               std::size_t* max_records) noexcept {
  CuptiSink& sink = CuptiSink::instance();
  const std::size_t bytes = sink.buffer_bytes.load(std::memory_order_relaxed);
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, bytes));
  *size = *buffer != nullptr ? bytes : 0;
  *max_records = 0;  // as many as fit
  if (*buffer == nullptr) sink.dropped_buffers.fetch_add(1, std::memory_order_relaxed);
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t /*size*/, std::size_t valid_size) noexcept {
  CuptiSink& sink = CuptiSink::instance();
  const CuptiApi* cupti = cupti_api(nullptr);  // loaded: CUPTI calls back only once started
  if (cupti == nullptr) {
    std::free(buffer);
    return;
  }
  try {
    const std::lock_guard lock(sink.mutex);
    CUpti_Activity* record = nullptr;
    while (cupti->activity_get_next_record(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      sink.records.fetch_add(1, std::memory_order_relaxed);
      add_record(sink, record);
    }
  } catch (const std::exception&) {
    sink.dropped_buffers.fetch_add(1, std::memory_order_relaxed);  // out of memory: lose it
  }
  std::size_t dropped = 0;
  if (cupti->activity_get_num_dropped_records(context, stream, &dropped) == CUPTI_SUCCESS) {
    sink.dropped_records.fetch_add(dropped, std::memory_order_relaxed);
  }
  std::free(buffer);
}

}  // namespace gpufeed::profiler::detail
