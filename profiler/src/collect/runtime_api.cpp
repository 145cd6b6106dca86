#include "collect/runtime_api.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>

namespace gpufeed::profiler::detail {

namespace {

constexpr std::array<std::string_view, 12> kSyncCalls{
    "cudaStreamSynchronize", "cudaDeviceSynchronize",
    "cudaEventSynchronize",  "cudaThreadSynchronize",
    "cuStreamSynchronize",   "cuCtxSynchronize",
    "cuEventSynchronize",    "cudaFree",
    "cudaFreeHost",          "cudaMemcpyFromSymbol",
    "cuMemcpyDtoH",          "cudaMemcpyFromArray"};

bool is_synchronous_copy(std::string_view api) noexcept {
  const bool copy = api.starts_with("cudaMemcpy") || api.starts_with("cuMemcpy");
  return copy && !api.ends_with("Async") && api.find("Peer") == std::string_view::npos;
}

}  // namespace

const char* classify_runtime_call(std::string_view api) noexcept {
  if (std::find(kSyncCalls.begin(), kSyncCalls.end(), api) != kSyncCalls.end()) {
    return range_names::sync;
  }
  return is_synchronous_copy(api) ? range_names::sync : range_names::launch;
}

std::string strip_api_version(std::string_view api) {
  const std::size_t v = api.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= api.size()) return std::string(api);
  const bool digits =
      std::all_of(api.begin() + static_cast<std::ptrdiff_t>(v + 2), api.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return std::string(digits ? api.substr(0, v) : api);
}

void refine_copy_calls(Timeline& timeline) {
  std::unordered_map<std::uint64_t, ActivityKind> kind_of;
  for (const DeviceActivity& a : timeline.device) {
    if (a.correlation != 0) kind_of.emplace(a.correlation, a.kind);
  }
  for (HostRange& r : timeline.host) {
    if (r.name != range_names::sync || !is_synchronous_copy(r.detail)) continue;
    const auto it = kind_of.find(r.correlation);
    if (it != kind_of.end() && it->second != ActivityKind::memcpy_d2h) r.name = range_names::launch;
  }
}

}  // namespace gpufeed::profiler::detail
