#include "gpufeed/profiler/idle_breakdown.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpufeed::profiler {

namespace {

void classify_gaps(StreamIdle& s, std::vector<const DeviceActivity*>& acts,
                   const std::unordered_map<std::uint64_t, std::int64_t>& launch_begin,
                   std::int64_t threshold) {
  std::stable_sort(acts.begin(), acts.end(),
                   [](const auto* a, const auto* b) { return a->begin_ns < b->begin_ns; });
  for (std::size_t i = 0; i < acts.size(); ++i) {
    s.busy_ns += acts[i]->end_ns - acts[i]->begin_ns;
    if (i == 0) continue;
    const std::int64_t prev_end = acts[i - 1]->end_ns;
    const std::int64_t gap = acts[i]->begin_ns - prev_end;
    const auto launch = launch_begin.find(acts[i]->correlation);
    if (launch != launch_begin.end() && launch->second > prev_end) {
      s.host_wait_ns += gap;
      ++s.host_wait_gaps;
    } else if (gap < threshold) {
      s.kernel_wait_ns += gap;
      ++s.kernel_wait_gaps;
    } else {
      s.other_ns += gap;
      ++s.other_gaps;
    }
  }
}

}  // namespace

std::vector<StreamIdle> idle_time_breakdown(const Timeline& timeline,
                                            std::int64_t kernel_wait_threshold_ns) {
  std::unordered_map<std::uint64_t, std::int64_t> launch_begin;
  for (const HostRange& r : timeline.host) {
    if (r.correlation != 0) launch_begin.emplace(r.correlation, r.begin_ns);
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const DeviceActivity*>> streams;
  for (const DeviceActivity& a : timeline.device) {
    if (a.is_work()) streams[{a.device, a.stream}].push_back(&a);
  }
  std::vector<StreamIdle> out;
  for (auto& [key, acts] : streams) {
    StreamIdle s;
    s.device = key.first;
    s.stream = key.second;
    s.activities = acts.size();
    classify_gaps(s, acts, launch_begin, kernel_wait_threshold_ns);
    out.push_back(s);
  }
  return out;
}

}  // namespace gpufeed::profiler
