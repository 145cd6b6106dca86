#include "gpufeed/profiler/cupti_collector.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>

#include "collect/cupti_api.hpp"
#include "collect/cupti_sink.hpp"
#include "collect/runtime_api.hpp"
#include "gpufeed/profiler/clock_alignment.hpp"

namespace gpufeed::profiler {

namespace {

constexpr CUpti_ActivityKind kDeviceKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

struct CollectorState {
  mutable std::mutex mutex;
  bool active = false;
  bool disabled = false;
  bool runtime_api = false;
  std::string reason;
  ClockAlignment clocks;
};

CollectorState& state() noexcept {
  static CollectorState* const s = new CollectorState();
  return *s;
}

/// The loaded CUPTI: set by the first start that loaded it, before any call through it.
const detail::CuptiApi* cupti = nullptr;

std::string cupti_failure(const char* call, CUptiResult r) {
  const char* text = nullptr;
  if (cupti->get_result_string(r, &text) != CUPTI_SUCCESS || text == nullptr) {
    text = "unknown error";
  }
  return std::string(call) + " failed: " + text;
}

void disable_locked(CollectorState& s, std::string reason) noexcept {
  s.active = false;
  if (s.disabled) return;
  s.disabled = true;
  s.reason = std::move(reason);
  std::fprintf(stderr, "gpufeed profiler: CUPTI unavailable (%s); continuing with host ranges\n",
               s.reason.c_str());
}

bool cupti_clock(ClockPair& out) {
  return measure_clock_pair(
      [](std::int64_t& t) {
        std::uint64_t ts = 0;
        if (cupti->get_timestamp(&ts) != CUPTI_SUCCESS) return false;
        t = static_cast<std::int64_t>(ts);
        return true;
      },
      out);
}

void disable_kinds(bool runtime_api) noexcept {
  for (CUpti_ActivityKind k : kDeviceKinds) cupti->activity_disable(k);
  if (runtime_api) cupti->activity_disable(CUPTI_ACTIVITY_KIND_RUNTIME);
}

/// Enables every kind; on failure undoes what it did and says why.
std::string enable_kinds(bool runtime_api) {
  for (CUpti_ActivityKind k : kDeviceKinds) {
    if (const CUptiResult r = cupti->activity_enable(k); r != CUPTI_SUCCESS) {
      disable_kinds(runtime_api);
      return cupti_failure("cuptiActivityEnable", r);
    }
  }
  if (runtime_api) {
    if (const CUptiResult r = cupti->activity_enable(CUPTI_ACTIVITY_KIND_RUNTIME);
        r != CUPTI_SUCCESS) {
      disable_kinds(runtime_api);
      return cupti_failure("cuptiActivityEnable(RUNTIME)", r);
    }
  }
  return {};
}

std::string start_locked(CollectorState& s, const CuptiCollector::Options& options) {
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess) {
    return std::string("no usable CUDA driver or device: ") + cudaGetErrorString(e);
  }
  if (devices == 0) return "no CUDA device";
  std::string why;
  cupti = detail::cupti_api(&why);
  if (cupti == nullptr) return why;
  const std::size_t bytes = (std::max<std::size_t>(options.buffer_bytes, 1 << 16) + 7) / 8 * 8;
  detail::CuptiSink::instance().buffer_bytes.store(bytes);
  if (const CUptiResult r =
          cupti->activity_register_callbacks(detail::buffer_requested, detail::buffer_completed);
      r != CUPTI_SUCCESS) {
    return cupti_failure("cuptiActivityRegisterCallbacks", r);
  }
  // Runtime-call records carry the caller's thread as the recorder does (gettid), not
  // CUPTI's default pthread_self(): a sync must land on the thread of the step it is in.
  if (const CUptiResult r = cupti->set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS) {
    return cupti_failure("cuptiSetThreadIdType", r);
  }
  if (std::string failure = enable_kinds(options.runtime_api); !failure.empty()) return failure;
  ClockPair pair;
  if (!cupti_clock(pair)) {
    disable_kinds(options.runtime_api);
    return "cuptiGetTimestamp failed";
  }
  s.clocks = ClockAlignment(pair);
  s.runtime_api = options.runtime_api;
  return {};
}

std::string demangle(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string runtime_api_name(std::uint32_t cbid) {
  const char* name = nullptr;
  if (cupti == nullptr ||
      cupti->get_callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS ||
      name == nullptr) {
    return "cudaRuntime#" + std::to_string(cbid);
  }
  return detail::strip_api_version(name);
}

}  // namespace

CuptiCollector& CuptiCollector::instance() noexcept {
  static CuptiCollector collector;
  return collector;
}

void CuptiCollector::add_library_directory(const std::string& directory) {
  detail::add_cupti_directory(directory);
}

std::string CuptiCollector::library_path() const {
  const std::lock_guard lock(state().mutex);
  return cupti != nullptr ? cupti->path : std::string();
}

bool CuptiCollector::start(const Options& options) noexcept {
  CollectorState& s = state();
  const std::lock_guard lock(s.mutex);
  if (s.disabled) return false;
  if (s.active) return true;
  try {
    if (std::string failure = start_locked(s, options); !failure.empty()) {
      disable_locked(s, std::move(failure));
      return false;
    }
  } catch (const std::exception& e) {
    disable_locked(s, e.what());
    return false;
  }
  s.active = true;
  return true;
}

void CuptiCollector::stop() noexcept {
  CollectorState& s = state();
  const std::lock_guard lock(s.mutex);
  if (!s.active) return;
  disable_kinds(s.runtime_api);
  if (const CUptiResult r = cupti->activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      r != CUPTI_SUCCESS) {
    disable_locked(s, cupti_failure("cuptiActivityFlushAll", r));
  }
  ClockPair pair;
  if (cupti_clock(pair)) s.clocks.set_stop(pair);
  s.active = false;
}

bool CuptiCollector::active() const noexcept {
  const std::lock_guard lock(state().mutex);
  return state().active;
}

bool CuptiCollector::available() const noexcept {
  const std::lock_guard lock(state().mutex);
  return !state().disabled;
}

std::string CuptiCollector::unavailable_reason() const {
  const std::lock_guard lock(state().mutex);
  return state().reason;
}

CuptiStats CuptiCollector::stats() const noexcept {
  const detail::CuptiSink& sink = detail::CuptiSink::instance();
  CuptiStats out;
  out.records = sink.records.load();
  out.dropped_records = sink.dropped_records.load();
  out.dropped_buffers = sink.dropped_buffers.load();
  const std::lock_guard lock(state().mutex);
  out.offset_start_ns = state().clocks.start().offset_ns;
  out.offset_stop_ns = state().clocks.stop().offset_ns;
  return out;
}

void CuptiCollector::append_to(Timeline& timeline) {
  detail::CuptiSink& sink = detail::CuptiSink::instance();
  std::vector<DeviceActivity> device;
  std::vector<detail::RawApiCall> api;
  {
    const std::lock_guard lock(sink.mutex);
    device.swap(sink.device);
    api.swap(sink.api);
  }
  ClockAlignment clocks;
  {
    const std::lock_guard lock(state().mutex);
    clocks = state().clocks;
  }
  for (DeviceActivity& a : device) {
    a.begin_ns = clocks.to_host(a.begin_ns);
    a.end_ns = clocks.to_host(a.end_ns);
    if (a.kind == ActivityKind::kernel) a.name = demangle(a.name);
    timeline.device.push_back(std::move(a));
  }
  for (const detail::RawApiCall& c : api) {
    std::string name = runtime_api_name(c.cbid);
    const char* category = detail::classify_runtime_call(name);
    timeline.host.push_back({category, clocks.to_host(c.begin), clocks.to_host(c.end), c.thread,
                             kNoArg, c.correlation, std::move(name)});
  }
  const CuptiStats st = stats();
  timeline.dropped_device_records = st.dropped_records + st.dropped_buffers;
  if (timeline.dropped_device_records > 0) {
    timeline.warnings.push_back("CUPTI dropped " + std::to_string(st.dropped_records) +
                                " records and " + std::to_string(st.dropped_buffers) +
                                " buffers; device activity is incomplete");
  }
  detail::refine_copy_calls(timeline);
  timeline.normalize();
}

}  // namespace gpufeed::profiler
