#include "gpufeed/profiler/idle_breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "analyze/interval_set.hpp"

namespace gpufeed::profiler {

namespace {

constexpr std::int64_t kMicro = 1000;

// HTA rounds fractional-microsecond timestamps inwards (trace_parser.round_down_time_stamps).
std::int64_t ceil_us(std::int64_t ns) {
  const std::int64_t q = ns / kMicro;
  return (ns % kMicro > 0 ? q + 1 : q) * kMicro;
}

/// The float64 microseconds HTA holds for `ns` (pandas reads fractional ts and dur as float64):
/// the double nearest ns / 1000, as parsing the trace's three-decimal text gives it. Past 2^53
/// ns, converting ns itself would round first, so the whole microseconds (exact) and the
/// fraction are added instead: the sum rounds once, correctly.
double hta_micros(std::int64_t ns) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (ns > -kExact && ns < kExact) return static_cast<double>(ns) / 1e3;
  return static_cast<double>(ns / kMicro) + static_cast<double>(ns % kMicro) / 1e3;
}

/// HTA's end of an event: floor(ts + dur), the sum taken in float64. At epoch timestamps
/// (about 1.7e15 us) a double resolves a quarter of a microsecond, so the sum first rounds to
/// that grid: ts 1712195495505583 plus dur 4.928 ends at ...587.928, but at ...588.0 to HTA,
/// and floors to 588, not 587. Exact ends put 6% more idle time than HTA's on the resnet trace
/// of ../shared/data/kineto.
std::int64_t hta_end(std::int64_t begin_ns, std::int64_t end_ns) {
  const double end_us = std::floor(hta_micros(begin_ns) + hta_micros(end_ns - begin_ns));
  return static_cast<std::int64_t>(end_us) * kMicro;
}

/// A device event as HTA sees it.
struct Event {
  const DeviceActivity* activity;
  std::int64_t begin;
  std::int64_t end;
};

/// Launching calls by correlation id, their start rounded as HTA rounds it.
std::unordered_map<std::uint64_t, std::int64_t> launch_begins(const Timeline& t) {
  std::unordered_map<std::uint64_t, std::int64_t> out;
  for (const HostRange& r : t.host) {
    if (r.correlation != 0) out.emplace(r.correlation, ceil_us(r.begin_ns));
  }
  return out;
}

/// HTA's _filter_irrelevant_gpu_kernels: with two or more ProfilerStep annotations, only the
/// device events launched before the last one began.
std::vector<Event> hta_events(const Timeline& t, const HtaOptions& o,
                              const std::unordered_map<std::uint64_t, std::int64_t>& launches) {
  std::vector<std::int64_t> steps;
  for (const HostRange& r : t.host) {
    if (r.name.find("ProfilerStep") != std::string::npos ||
        r.detail.find("ProfilerStep") != std::string::npos) {
      steps.push_back(ceil_us(r.begin_ns));
    }
  }
  const bool filter = o.exclude_last_step && steps.size() >= 2;
  const std::int64_t last_step = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  std::vector<Event> out;
  for (const DeviceActivity& a : t.device) {
    if (filter) {
      const auto launch = launches.find(a.correlation);
      if (launch == launches.end() || launch->second >= last_step) continue;
    }
    out.push_back({&a, ceil_us(a.begin_ns), hta_end(a.begin_ns, a.end_ns)});
  }
  return out;
}

void classify_gaps(StreamIdle& s, std::vector<Event>& events,
                   const std::unordered_map<std::uint64_t, std::int64_t>& launches,
                   std::int64_t threshold) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.begin < b.begin; });
  for (std::size_t i = 0; i < events.size(); ++i) {
    s.busy_ns += events[i].end - events[i].begin;
    if (i == 0) continue;
    const std::int64_t prev_end = events[i - 1].end;
    const std::int64_t gap = events[i].begin - prev_end;
    const auto launch = launches.find(events[i].activity->correlation);
    if (launch != launches.end() && launch->second > prev_end) {
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

/// HTA's get_kernel_type(...) == COMPUTATION: not a communication kernel (its ^nccl.*Kernel),
/// not a memory one (^Memcpy, ^Memset, ^dma), and not matching its non-compute pattern
/// (^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync) as re.match reads it: "Memcpy" or "Sync"
/// anywhere, "Memset" at the start.
bool is_compute(std::string_view name) {
  const bool comm = name.starts_with("nccl") && name.find("Kernel", 4) != std::string_view::npos;
  const bool memory =
      name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma");
  const bool not_compute =
      name.find("Memcpy") != std::string_view::npos || name.find("Sync") != std::string_view::npos;
  return !comm && !memory && !not_compute;
}

}  // namespace

std::vector<StreamIdle> idle_time_breakdown(const Timeline& timeline, const HtaOptions& options) {
  const auto launches = launch_begins(timeline);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Event>> streams;
  for (const Event& e : hta_events(timeline, options, launches)) {
    if (e.activity->is_work()) streams[{e.activity->device, e.activity->stream}].push_back(e);
  }
  std::vector<StreamIdle> out;
  for (auto& [key, events] : streams) {
    StreamIdle s;
    s.device = key.first;
    s.stream = key.second;
    s.activities = events.size();
    classify_gaps(s, events, launches, options.kernel_wait_threshold_ns);
    out.push_back(s);
  }
  return out;
}

TemporalBreakdown temporal_breakdown(const Timeline& timeline, const HtaOptions& options) {
  std::vector<detail::Interval> all, compute;
  for (const Event& e : hta_events(timeline, options, launch_begins(timeline))) {
    all.push_back({e.begin, e.end});
    if (is_compute(e.activity->name)) compute.push_back({e.begin, e.end});
  }
  TemporalBreakdown out;
  const detail::IntervalSet merged = detail::make_union(std::move(all));
  if (merged.empty()) return out;
  out.span_ns = merged.back().end - merged.front().begin;
  out.idle_ns = out.span_ns - detail::total_length(merged);
  out.compute_ns = detail::total_length(detail::make_union(std::move(compute)));
  out.non_compute_ns = out.span_ns - out.compute_ns - out.idle_ns;
  return out;
}

}  // namespace gpufeed::profiler
