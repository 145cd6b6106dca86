#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/base/names.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "analyze/analysis_window.hpp"
#include "analyze/interval_set.hpp"
#include "analyze/stage_shares.hpp"

namespace gpufeed::profiler {

namespace {

using detail::Interval;
using detail::IntervalSet;

constexpr GapCause kCauses[] = {GapCause::input_wait, GapCause::host_sync, GapCause::launch,
                                GapCause::other};

/// What the host was doing, as sets of time: the evidence for each cause.
struct HostActivity {
  IntervalSet wait;
  IntervalSet sync;
  IntervalSet launch;
  std::vector<Interval> steps;  // sorted by begin, not merged
};

HostActivity host_activity(const Timeline& t) {
  std::vector<Interval> wait, sync, launch;
  HostActivity h;
  for (const HostRange& r : t.host) {
    const Interval i{r.begin_ns, r.end_ns};
    if (r.name == range_names::wait) wait.push_back(i);
    if (r.name == range_names::sync) sync.push_back(i);
    if (r.name == range_names::launch || r.name == range_names::step ||
        r.name == range_names::cpu_op) {
      launch.push_back(i);
    }
    if (r.name == range_names::step) h.steps.push_back(i);
  }
  for (const DeviceActivity& a : t.device) {  // host-side syncs seen by the driver, D2H copies
    if (a.kind == ActivityKind::sync || a.kind == ActivityKind::memcpy_d2h) {
      sync.push_back({a.begin_ns, a.end_ns});
    }
  }
  h.wait = detail::make_union(std::move(wait));
  h.sync = detail::make_union(std::move(sync));
  h.launch = detail::make_union(std::move(launch));
  return h;
}

IntervalSet device_busy(const Timeline& t, const HostActivity& host, bool use_device) {
  std::vector<Interval> busy;
  if (!use_device) {
    // The step ranges stand in for the device, less the input waits inside them: a
    // torch.profiler step (ProfilerStep#N) runs from one prof.step() to the next, so it
    // holds the loop's wait for its next batch.
    return detail::subtract(detail::make_union(host.steps), host.wait);
  }
  for (const DeviceActivity& a : t.device) {
    if (a.is_work()) busy.push_back({a.begin_ns, a.end_ns});
  }
  return detail::make_union(std::move(busy));
}

/// Splits idle time between causes in priority order; returns the idle set of each cause.
std::vector<IntervalSet> attribute(const IntervalSet& idle, const HostActivity& host) {
  std::vector<IntervalSet> per(kGapCauseCount);
  IntervalSet rest = idle;
  const IntervalSet* evidence[] = {&host.wait, &host.sync, &host.launch};
  for (std::size_t c = 0; c < 3; ++c) {
    per[c] = detail::intersect(rest, *evidence[c]);
    rest = detail::subtract(rest, *evidence[c]);
  }
  per[3] = std::move(rest);
  return per;
}

GapStats stats_of(std::vector<std::int64_t> lengths) {
  GapStats s;
  if (lengths.empty()) return s;
  std::sort(lengths.begin(), lengths.end());
  s.count = lengths.size();
  double sum = 0, sq = 0;
  for (std::int64_t l : lengths) {
    s.total_ns += l;
    sum += static_cast<double>(l);
    sq += static_cast<double>(l) * static_cast<double>(l);
  }
  s.max_ns = lengths.back();
  s.median_ns = lengths[lengths.size() / 2];
  const double mean = sum / static_cast<double>(s.count);
  const double var = std::max(0.0, sq / static_cast<double>(s.count) - mean * mean);
  s.cv = mean > 0 ? std::sqrt(var) / mean : 0;
  return s;
}

void fill_gaps(GapReport& r, const IntervalSet& idle, const std::vector<IntervalSet>& per) {
  std::vector<std::int64_t> lengths[kGapCauseCount];
  for (const Interval& g : idle) {
    Gap gap{g.begin, g.end, {}, GapCause::other};
    for (GapCause c : kCauses)
      gap.by_cause[c] = detail::covered(per[static_cast<std::size_t>(c)], g);
    gap.cause = gap.by_cause.largest();
    lengths[static_cast<std::size_t>(gap.cause)].push_back(g.length());
    r.gaps.push_back(gap);
  }
  for (std::size_t c = 0; c < kGapCauseCount; ++c) {
    r.idle_ns.ns[c] = detail::total_length(per[c]);
    r.idle_by_cause[c] = r.window_ns() > 0 ? static_cast<double>(r.idle_ns.ns[c]) /
                                                 static_cast<double>(r.window_ns())
                                           : 0;
    r.gap_stats[c] = stats_of(std::move(lengths[c]));
  }
}

std::vector<double> utilization_series(const IntervalSet& busy, Interval w, std::size_t bins) {
  std::vector<double> out;
  if (w.length() <= 0 || bins == 0) return out;
  for (std::size_t b = 0; b < bins; ++b) {
    const std::int64_t lo =
        w.begin + w.length() * static_cast<std::int64_t>(b) / static_cast<std::int64_t>(bins);
    const std::int64_t hi =
        w.begin + w.length() * static_cast<std::int64_t>(b + 1) / static_cast<std::int64_t>(bins);
    out.push_back(hi > lo ? static_cast<double>(detail::covered(busy, {lo, hi})) /
                                static_cast<double>(hi - lo)
                          : 0);
  }
  return out;
}

void copy_times(const Timeline& t, Interval w, GapReport& r) {
  for (const DeviceActivity& a : t.device) {
    if (a.kind != ActivityKind::memcpy_h2d) continue;
    const std::int64_t in =
        std::max<std::int64_t>(0, std::min(a.end_ns, w.end) - std::max(a.begin_ns, w.begin));
    r.h2d_ns += in;
    if (a.pageable) r.pageable_h2d_ns += in;
  }
}

}  // namespace

const char* gap_cause_name(GapCause cause) noexcept {
  return name_of(kGapCauseNames, cause, "other");
}

std::string idle_elsewhere(const GapReport& r) {
  if (r.verdict != Verdict::not_input_bound || r.device_util >= kIdleElsewhereUtil ||
      r.window_ns() <= 0) {
    return {};
  }
  GapCause top = GapCause::other;
  for (const GapCause c : {GapCause::host_sync, GapCause::launch, GapCause::other}) {
    if (r.idle_share(c) > r.idle_share(top)) top = c;
  }
  const char* look = "";
  switch (top) {
    case GapCause::host_sync:
      look =
          "host synchronizations in the step (reading device values on the host); read them "
          "every few steps instead";
      break;
    case GapCause::launch:
      look =
          "kernel launch overhead (many small kernels); fuse them or capture the step as a "
          "CUDA graph";
      break;
    case GapCause::input_wait:
    case GapCause::other:
      look =
          "time outside the training steps that no recorded range explains: work between "
          "the steps, or steps that are not marked";
      break;
  }
  char share[16];
  std::snprintf(share, sizeof share, "%.0f%%", 100.0 * (1.0 - r.device_util));
  char cause_share[16];
  std::snprintf(cause_share, sizeof cause_share, "%.0f%%", 100.0 * r.idle_share(top));
  return std::string("the device idles ") + share +
         " of the window, but not waiting for input: " + gap_cause_name(top) + " " + cause_share +
         ", " + look;
}

double predicted_util_with_echo(const GapReport& r, double echo) noexcept {
  const double b = static_cast<double>(r.busy_ns);
  const double w = static_cast<double>(r.idle_ns[GapCause::input_wait]);
  if (r.window_ns() <= 0) return 0;
  return std::min(1.0,
                  std::min(std::max(echo, 1.0) * b, b + w) / static_cast<double>(r.window_ns()));
}

GapCause CauseTimes::largest() const noexcept {
  const auto* it = std::max_element(std::begin(ns), std::end(ns));
  return static_cast<GapCause>(it - std::begin(ns));
}

GapReport analyze(const Timeline& timeline, const AnalysisOptions& options,
                  const PipelineFacts& facts) {
  GapReport r;
  r.warnings = timeline.warnings;
  const HostActivity host = host_activity(timeline);
  const bool use_device = timeline.has_device_work();
  r.device_timeline = use_device ? "device activity" : "step ranges";
  const IntervalSet busy_all = device_busy(timeline, host, use_device);
  const detail::WindowChoice choice = detail::steady_state_window(host.steps, busy_all, options);
  const Interval w = choice.window;
  r.window_begin_ns = w.begin;
  r.window_end_ns = w.end;
  r.window_basis = choice.basis;
  if (w.length() <= 0) {
    r.warnings.push_back(use_device || !host.steps.empty()
                             ? "the steady-state window is empty: the run is too short"
                             : "no device activity and no \"step\" ranges: nothing to analyze");
    return r;
  }
  if (!use_device) {
    r.warnings.push_back("no device activity records: the device timeline is the \"step\" ranges");
  }
  for (const Interval& s : host.steps) r.steps += s.begin >= w.begin && s.end <= w.end ? 1 : 0;
  const IntervalSet busy = detail::clip(busy_all, w);
  r.busy_ns = detail::total_length(busy);
  r.device_util = static_cast<double>(r.busy_ns) / static_cast<double>(w.length());
  r.consumer_wait_ns = detail::total_length(detail::clip(host.wait, w));
  const IntervalSet idle = detail::complement(busy, w);
  const std::vector<IntervalSet> per = attribute(idle, host);
  fill_gaps(r, idle, per);
  detail::analyze_stages(timeline, per[0], w, facts, r);
  r.input_bound_share = r.idle_share(GapCause::input_wait);
  r.verdict = input_bound_verdict(r.input_bound_share, options.thresholds);
  r.utilization = utilization_series(busy, w, options.utilization_bins);
  copy_times(timeline, w, r);
  return r;
}

}  // namespace gpufeed::profiler
