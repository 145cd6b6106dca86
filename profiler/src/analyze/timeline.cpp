#include "gpufeed/profiler/timeline.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace gpufeed::profiler {

namespace {

constexpr std::array<std::pair<ActivityKind, const char*>, 8> kKindNames{{
    {ActivityKind::kernel, "kernel"},
    {ActivityKind::memcpy_h2d, "memcpy_h2d"},
    {ActivityKind::memcpy_d2h, "memcpy_d2h"},
    {ActivityKind::memcpy_d2d, "memcpy_d2d"},
    {ActivityKind::memcpy_other, "memcpy_other"},
    {ActivityKind::memset, "memset"},
    {ActivityKind::sync, "sync"},
    {ActivityKind::stream_wait, "stream_wait"},
}};

}  // namespace

const char* activity_kind_name(ActivityKind kind) noexcept {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<ActivityKind> parse_activity_kind(std::string_view name) noexcept {
  for (const auto& [k, n] : kKindNames) {
    if (name == n) return k;
  }
  return std::nullopt;
}

void Timeline::normalize() {
  std::erase_if(host, [](const HostRange& r) { return r.end_ns < r.begin_ns; });
  std::erase_if(device, [](const DeviceActivity& a) { return a.end_ns < a.begin_ns; });
  std::stable_sort(host.begin(), host.end(),
                   [](const HostRange& a, const HostRange& b) { return a.begin_ns < b.begin_ns; });
  std::stable_sort(device.begin(), device.end(),
                   [](const auto& a, const auto& b) { return a.begin_ns < b.begin_ns; });
}

bool Timeline::has_device_work() const noexcept {
  return std::any_of(device.begin(), device.end(),
                     [](const DeviceActivity& a) { return a.is_work(); });
}

Timeline timeline_from(const RecorderSnapshot& snapshot) {
  Timeline t;
  t.host.reserve(snapshot.events.size());
  for (const RangeEvent& e : snapshot.events) {
    HostRange r;
    r.name = std::string(snapshot.name_of(e));
    r.begin_ns = e.begin_ns;
    r.end_ns = e.end_ns;
    r.thread = e.thread;
    r.arg = e.arg;
    t.host.push_back(std::move(r));
  }
  t.dropped_host_events = snapshot.dropped;
  if (snapshot.dropped > 0) {
    t.warnings.push_back("recorder dropped " + std::to_string(snapshot.dropped) +
                         " host ranges (ring full); the oldest part of the run is missing");
  }
  t.normalize();
  return t;
}

}  // namespace gpufeed::profiler
