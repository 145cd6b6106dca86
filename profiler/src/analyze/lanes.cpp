#include "analyze/lanes.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

namespace gpufeed::profiler::detail {

namespace {

enum class Role { consumer, worker, copy, dataloader_worker, other };

Role role_of(const std::set<std::string>& names) {
  if (names.contains(range_names::step) || names.contains(range_names::wait)) {
    return Role::consumer;
  }
  bool copies = false;
  for (const Stage s : range_names::stages) {
    if (!names.contains(stage_name(s))) continue;
    if (s != Stage::h2d) return Role::worker;
    copies = true;
  }
  if (copies) return Role::copy;
  for (const char* name : range_names::dataloader_stages) {
    if (names.contains(name)) return Role::dataloader_worker;
  }
  return Role::other;
}

}  // namespace

std::map<std::uint64_t, std::string> host_lane_names(const Timeline& t) {
  struct Thread {
    std::set<std::string> names;
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
  };
  std::map<std::uint64_t, Thread> threads;
  for (const HostRange& r : t.host) {
    Thread& th = threads[r.thread];
    th.names.insert(r.name);
    th.first = std::min(th.first, r.begin_ns);
  }
  std::vector<std::pair<std::int64_t, std::uint64_t>> order;  // by first range, then id
  for (const auto& [tid, th] : threads) order.emplace_back(th.first, tid);
  std::sort(order.begin(), order.end());
  std::map<Role, int> count;
  std::map<std::uint64_t, std::string> names;
  for (const auto& [first, tid] : order) {
    const Role role = role_of(threads[tid].names);
    const int n = ++count[role];
    switch (role) {
      case Role::consumer:
        names[tid] = n == 1 ? "consumer" : "consumer " + std::to_string(n);
        break;
      case Role::worker:
        names[tid] = "worker " + std::to_string(n);
        break;
      case Role::copy:
        names[tid] = n == 1 ? "copy" : "copy " + std::to_string(n);
        break;
      case Role::dataloader_worker:
        names[tid] = "DataLoader worker " + std::to_string(n);
        break;
      case Role::other:
        names[tid] = "thread " + std::to_string(tid);
        break;
    }
  }
  return names;
}

std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> stream_lane_names(
    const Timeline& t) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, bool> copies_only;
  for (const DeviceActivity& a : t.device) {
    if (!a.is_work()) continue;
    const bool copy = a.kind != ActivityKind::kernel;
    auto [it, added] = copies_only.try_emplace({a.device, a.stream}, copy);
    if (!added) it->second = it->second && copy;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> names;
  for (const auto& [key, copy] : copies_only) {
    names[key] = (copy ? "copy stream " : "stream ") + std::to_string(key.second);
  }
  return names;
}

}  // namespace gpufeed::profiler::detail
