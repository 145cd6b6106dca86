#include "analyze/stage_shares.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

namespace gpufeed::profiler::detail {

namespace {

/// The loader's stages, then a DataLoader's (its fetches, timed in its worker processes).
constexpr std::size_t kLoaderStageCount = std::size(range_names::stages);
constexpr std::size_t kStages = kLoaderStageCount + std::size(range_names::dataloader_stages);

const char* name_of_stage(std::size_t i) noexcept {
  return i < kLoaderStageCount ? stage_name(range_names::stages[i])
                               : range_names::dataloader_stages[i - kLoaderStageCount];
}

int stage_index(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kStages; ++i) {
    if (name == name_of_stage(i)) return static_cast<int>(i);
  }
  return -1;
}

struct StageTimes {
  std::array<std::int64_t, kStages> during_wait{};
  std::array<std::int64_t, kStages> in_window{};
  std::array<std::size_t, kStages> items{};
};

struct Open {
  std::int64_t end;
  int stage;
};

/// Walks one thread's stage ranges (sorted by begin) and credits each instant to the innermost
/// open range.
void credit_thread(const std::vector<const HostRange*>& ranges, const IntervalSet& wait,
                   Interval window, StageTimes& out) {
  std::vector<Open> stack;
  std::int64_t t = 0;
  auto credit = [&](std::int64_t until) {
    if (stack.empty() || until <= t) return;
    const auto s = static_cast<std::size_t>(stack.back().stage);
    out.during_wait[s] += covered(wait, {t, until});
    out.in_window[s] +=
        std::max<std::int64_t>(0, std::min(until, window.end) - std::max(t, window.begin));
  };
  auto pop_until = [&](std::int64_t time) {
    while (!stack.empty() && stack.back().end <= time) {
      credit(stack.back().end);
      t = std::max(t, stack.back().end);
      stack.pop_back();
    }
  };
  for (const HostRange* r : ranges) {
    pop_until(r->begin_ns);
    credit(r->begin_ns);
    t = r->begin_ns;
    stack.push_back({r->end_ns, stage_index(r->name)});
  }
  pop_until(INT64_MAX);
}

void pick_bottleneck(bool have_ranges, const PipelineFacts& facts, GapReport& report) {
  auto best = [&](auto key) {
    const auto it = std::max_element(report.stages.begin(), report.stages.end(),
                                     [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return it != report.stages.end() && key(*it) > 0 ? it->name : std::string();
  };
  if (have_ranges) {
    report.bottleneck_stage = best([](const StageShare& s) { return s.share_during_wait; });
    report.bottleneck_basis = "input_wait";
  }
  if (have_ranges && report.bottleneck_stage.empty()) {
    report.bottleneck_stage = best([](const StageShare& s) { return s.busy_frac; });
    report.bottleneck_basis = "overall";
  }
  if (report.bottleneck_stage.empty() && !facts.stage_busy.empty()) {
    const auto it =
        std::max_element(facts.stage_busy.begin(), facts.stage_busy.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (it->second > 0) report.bottleneck_stage = it->first;
    report.bottleneck_basis = "pipeline facts";
  }
  if (report.bottleneck_stage.empty()) report.bottleneck_basis.clear();
}

}  // namespace

void analyze_stages(const Timeline& timeline, const IntervalSet& input_wait, Interval window,
                    const PipelineFacts& facts, GapReport& report) {
  std::map<std::uint64_t, std::vector<const HostRange*>> by_thread;
  StageTimes times;
  bool loader_ranges = false;  // a DataLoader's bottleneck is said from its counters instead
  for (const HostRange& r : timeline.host) {
    const int s = stage_index(r.name);
    if (s < 0) continue;
    loader_ranges |= static_cast<std::size_t>(s) < kLoaderStageCount;
    by_thread[r.thread].push_back(&r);  // timeline.host is sorted by begin
    if (r.begin_ns >= window.begin && r.begin_ns < window.end)
      ++times.items[static_cast<std::size_t>(s)];
  }
  for (const auto& [thread, ranges] : by_thread) credit_thread(ranges, input_wait, window, times);
  const double wait_ns = static_cast<double>(total_length(input_wait));
  const double workers = facts.workers.value_or(1) > 0 ? facts.workers.value_or(1) : 1.0;
  // A DataLoader's workers, or its main process (num_workers=0).
  const double pool = facts.pool_workers > 0 ? static_cast<double>(facts.pool_workers) : 1.0;
  for (std::size_t s = 0; s < kStages; ++s) {
    const char* name = name_of_stage(s);
    const auto fact = facts.stage_busy.find(name);
    if (times.in_window[s] == 0 && times.items[s] == 0 && fact == facts.stage_busy.end()) continue;
    StageShare share{name, 0, 0, times.items[s]};
    if (wait_ns > 0) share.share_during_wait = static_cast<double>(times.during_wait[s]) / wait_ns;
    if (window.length() > 0) {
      share.busy_frac = static_cast<double>(times.in_window[s]) /
                        static_cast<double>(window.length()) /
                        (s < kLoaderStageCount ? workers : pool);
    }
    if (times.in_window[s] == 0 && fact != facts.stage_busy.end()) share.busy_frac = fact->second;
    report.stages.push_back(share);
  }
  pick_bottleneck(loader_ranges, facts, report);
}

}  // namespace gpufeed::profiler::detail
