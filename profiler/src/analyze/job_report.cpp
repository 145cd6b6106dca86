#include "gpufeed/profiler/job_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analyze/interval_set.hpp"

namespace gpufeed::profiler {

namespace {

using detail::Interval;
using detail::IntervalSet;

/// Below this share of the ranks' time lost waiting, the ranks are in step.
constexpr double kStragglerShare = 0.02;

IntervalSet host_set(const Timeline& t, const char* name) {
  std::vector<Interval> v;
  for (const HostRange& r : t.host) {
    if (r.name == name) v.push_back({r.begin_ns, r.end_ns});
  }
  return detail::make_union(std::move(v));
}

RankSummary summarize(const Timeline& t, std::int32_t fallback_rank, const AnalysisOptions& o) {
  RankSummary r;
  r.rank = t.rank >= 0 ? t.rank : fallback_rank;
  r.report = analyze(t, o);
  const Interval window{r.report.window_begin_ns, r.report.window_end_ns};
  r.steps = r.report.steps;
  if (window.length() <= 0 || r.steps == 0) return r;
  std::vector<Interval> sync, collective, device_work;
  for (const HostRange& h : t.host) {
    if (h.name == range_names::sync) sync.push_back({h.begin_ns, h.end_ns});
    if (h.name == range_names::collective) collective.push_back({h.begin_ns, h.end_ns});
  }
  for (const DeviceActivity& a : t.device) {
    if (a.kind == ActivityKind::sync || a.kind == ActivityKind::memcpy_d2h) {
      sync.push_back({a.begin_ns, a.end_ns});
    } else if (a.is_collective()) {
      collective.push_back({a.begin_ns, a.end_ns});
    } else if (a.is_work()) {
      device_work.push_back({a.begin_ns, a.end_ns});
    }
  }
  const IntervalSet syncs = detail::clip(detail::make_union(std::move(sync)), window);
  const IntervalSet collectives = detail::clip(detail::make_union(std::move(collective)), window);
  const IntervalSet waits = detail::clip(host_set(t, range_names::wait), window);
  // Compute: the device's own work where the device was recorded, else the steps' host time
  // that was neither a sync nor a collective.
  const IntervalSet compute =
      device_work.empty()
          ? detail::subtract(detail::clip(host_set(t, range_names::step), window),
                             detail::make_union([&] {
                               std::vector<Interval> both(syncs.begin(), syncs.end());
                               both.insert(both.end(), collectives.begin(), collectives.end());
                               return both;
                             }()))
          : detail::clip(detail::make_union(std::move(device_work)), window);
  const double per_step = 1e-6 / static_cast<double>(r.steps);
  r.period_ms = static_cast<double>(window.length()) * per_step;
  r.input_wait_ms = static_cast<double>(detail::total_length(waits)) * per_step;
  r.host_sync_ms = static_cast<double>(detail::total_length(syncs)) * per_step;
  r.collective_ms = static_cast<double>(detail::total_length(collectives)) * per_step;
  r.compute_ms = static_cast<double>(detail::total_length(compute)) * per_step;
  return r;
}

double mean_of_others(const std::vector<RankSummary>& ranks, std::size_t s,
                      double RankSummary::*field) {
  double sum = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    if (j != s) sum += ranks[j].*field;
  }
  return ranks.size() > 1 ? sum / static_cast<double>(ranks.size() - 1) : 0.0;
}

std::string format(const char* pattern, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, pattern, args...);
  return buffer;
}

/// Why rank `s` is late: what it spends more time on than the others, per step.
void name_cause(const std::vector<RankSummary>& ranks, std::size_t s, Straggler& out) {
  struct Candidate {
    const char* cause;
    double RankSummary::*field;
    const char* what;
  };
  const Candidate candidates[] = {{"input", &RankSummary::input_wait_ms, "waits for its input"},
                                  {"host_sync", &RankSummary::host_sync_ms, "syncs with the host"},
                                  {"compute", &RankSummary::compute_ms, "computes"}};
  const Candidate* best = &candidates[2];
  double best_excess = -1;
  for (const Candidate& c : candidates) {
    // In step-time estimates the others' compute holds their waiting: compare the rest only.
    if (out.basis == "step times" && c.field == &RankSummary::compute_ms) continue;
    const double excess = ranks[s].*(c.field) - mean_of_others(ranks, s, c.field);
    if (excess > best_excess) {
      best_excess = excess;
      best = &c;
    }
  }
  const RankSummary& r = ranks[s];
  if (best_excess <= 0) {
    // Late, yet no longer in any measured part of an iteration: the time went where the trace
    // does not look (host work between steps that is neither a step nor a wait for input).
    const double untraced =
        r.period_ms - r.input_wait_ms - r.host_sync_ms - r.collective_ms - r.compute_ms;
    out.cause = "unknown";
    out.explanation = format(
        "rank %d is the last to arrive, yet it waits for input, syncs and computes no longer "
        "than the other ranks; %.1f ms a step is outside its steps and input waits (mark that "
        "host work as steps to see it); they lost %.2f s waiting for it (%s)",
        r.rank, std::max(0.0, untraced), out.lost_s,
        out.basis == "collectives" ? "in collectives" : "estimated from their longer steps");
    return;
  }
  out.cause = best->cause;
  if (out.cause == "input") out.stage = r.report.bottleneck_stage;
  out.explanation = format(
      "rank %d %s%s%s%s %.1f ms a step against %.1f ms on the other ranks; they lost %.2f s "
      "waiting for it (%s)",
      ranks[s].rank, best->what, out.stage.empty() ? "" : " (\"", out.stage.c_str(),
      out.stage.empty() ? "" : "\")", ranks[s].*(best->field),
      mean_of_others(ranks, s, best->field), out.lost_s,
      out.basis == "collectives" ? "in collectives" : "estimated from their longer steps");
}

Straggler find_straggler(const std::vector<RankSummary>& ranks) {
  Straggler out;
  const bool collectives = std::any_of(ranks.begin(), ranks.end(),
                                       [](const RankSummary& r) { return r.collective_ms > 0; });
  out.basis = collectives ? "collectives" : "step times";
  std::size_t s = 0;
  for (std::size_t j = 1; j < ranks.size(); ++j) {
    // The last to arrive waits least in the collectives; without them, it is the one whose
    // own waits (input, syncs) are longest.
    const bool later = collectives ? ranks[j].collective_ms < ranks[s].collective_ms
                                   : ranks[j].input_wait_ms + ranks[j].host_sync_ms >
                                         ranks[s].input_wait_ms + ranks[s].host_sync_ms;
    if (later) s = j;
  }
  double lost_ms = 0, total_ms = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    const double steps = static_cast<double>(ranks[j].steps);
    total_ms += ranks[j].period_ms * steps;
    if (j == s) continue;
    const double per_step = collectives ? ranks[j].collective_ms - ranks[s].collective_ms
                                        : ranks[j].compute_ms - ranks[s].compute_ms;
    lost_ms += std::max(0.0, per_step) * steps;
  }
  out.lost_s = lost_ms * 1e-3;
  if (total_ms <= 0 || lost_ms < kStragglerShare * total_ms) {
    out.explanation = format(
        "no rank holds the others back: they lose %.1f%% of their time waiting for each other",
        total_ms > 0 ? 100.0 * lost_ms / total_ms : 0.0);
    return out;
  }
  out.rank = ranks[s].rank;
  name_cause(ranks, s, out);
  return out;
}

}  // namespace

JobReport analyze_job(const std::vector<Timeline>& timelines, const AnalysisOptions& options) {
  JobReport job;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    job.ranks.push_back(summarize(timelines[i], static_cast<std::int32_t>(i), options));
    if (job.ranks.back().steps == 0) {
      job.warnings.push_back(
          format("rank %d has no training steps in its window: it cannot be "
                 "compared (mark steps, or profile longer)",
                 job.ranks.back().rank));
    }
  }
  std::sort(job.ranks.begin(), job.ranks.end(),
            [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < job.ranks.size(); ++i) {
    if (job.ranks[i].rank == job.ranks[i - 1].rank) {
      job.warnings.push_back(
          format("two traces are rank %d: give one trace per rank", job.ranks[i].rank));
    }
  }
  std::vector<RankSummary> comparable;
  for (const RankSummary& r : job.ranks) {
    if (r.steps > 0) comparable.push_back(r);
  }
  if (comparable.size() < 2) {
    job.straggler.explanation = "fewer than two ranks with training steps: nothing to compare";
    return job;
  }
  job.straggler = find_straggler(comparable);
  return job;
}

std::string format_job(const JobReport& job) {
  std::string out =
      format("%-5s %6s %9s %6s %11s %10s %11s %11s  %s\n", "rank", "steps", "step ms", "util",
             "input wait", "host sync", "collective", "compute ms", "bottleneck stage");
  for (const RankSummary& r : job.ranks) {
    out += format("%-5d %6zu %9.2f %5.1f%% %8.2f ms %7.2f ms %8.2f ms %11.2f  %s\n", r.rank,
                  r.steps, r.period_ms, 100.0 * r.report.device_util, r.input_wait_ms,
                  r.host_sync_ms, r.collective_ms, r.compute_ms,
                  r.report.bottleneck_stage.empty() ? "-" : r.report.bottleneck_stage.c_str());
  }
  out += "straggler   " + job.straggler.explanation + "\n";
  for (const std::string& w : job.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string job_json(const JobReport& job) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankSummary& r : job.ranks) {
    nlohmann::json idle;
    for (const GapCause c :
         {GapCause::input_wait, GapCause::host_sync, GapCause::launch, GapCause::other}) {
      idle[gap_cause_name(c)] = r.report.idle_share(c);
    }
    ranks.push_back({{"rank", r.rank},
                     {"steps", r.steps},
                     {"step_ms", r.period_ms},
                     {"device_util", r.report.device_util},
                     {"idle_by_cause", idle},
                     {"input_wait_ms", r.input_wait_ms},
                     {"host_sync_ms", r.host_sync_ms},
                     {"collective_ms", r.collective_ms},
                     {"compute_ms", r.compute_ms},
                     {"bottleneck_stage", r.report.bottleneck_stage.empty()
                                              ? nlohmann::json(nullptr)
                                              : nlohmann::json(r.report.bottleneck_stage)}});
  }
  const Straggler& s = job.straggler;
  nlohmann::json straggler = nullptr;
  if (s.rank >= 0) {
    straggler = {{"rank", s.rank},
                 {"cause", s.cause},
                 {"stage", s.stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.stage)},
                 {"lost_s", s.lost_s},
                 {"basis", s.basis},
                 {"explanation", s.explanation}};
  }
  return nlohmann::json{{"ranks", ranks},
                        {"straggler", straggler},
                        {"explanation", s.explanation},
                        {"warnings", job.warnings}}
      .dump(2);
}

}  // namespace gpufeed::profiler
