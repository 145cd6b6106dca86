// A torch DataLoader's worker pool against the loop it feeds: the workers that keep up, packing
// the dataset once, persistent workers, pinned batches. The pool's costs come from the
// consumer's process (InputPoolFacts); the loop's from the gap report.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "advice/pool_model.hpp"
#include "advice/rules.hpp"

namespace gpufeed::diagnosis::detail {

namespace {

std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

/// ", 277 -> 420 samples/s" where both are known.
std::string samples_text(double now, double then) {
  if (now <= 0 || then <= 0) return "";
  return ", " + std::to_string(std::lround(now)) + " -> " + std::to_string(std::lround(then)) +
         " samples/s";
}

std::string ms(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", ns * 1e-6);
  return text;
}

/// A DataLoader's worker pool: the workers that make a batch as fast as the loop takes one,
/// from what a batch costs one worker and the loop's period without its waits, within the
/// cores beside the training process.
std::optional<Recommendation> pool_workers_rule(const GapReport& r, const InputPoolFacts& p,
                                                unsigned cores) {
  const auto m = pool_model(r, p, cores);
  if (!m) return {};
  const unsigned n = std::clamp(m->needed, 1u, m->room);
  if (n <= p.workers) return {};  // as many as the cores allow already
  const PoolModel::Point at = m->after(n, m->c);
  const double util = PoolModel::util(at);
  const double now = m->samples_per_s(m->period_now), then = m->samples_per_s(at.period);
  if (now > 0 && then < now * 1.05) {
    // The step needs the cores the workers would take: steps would not come faster.
    Recommendation rec{"num_workers",
                       {},
                       "keep DataLoader(num_workers=" + std::to_string(p.workers) +
                           "): more workers would not make the steps faster",
                       "the step keeps " + fixed(m->step_cores) + " of " + std::to_string(cores) +
                           " cores busy; " + std::to_string(n) + (n > 1 ? " workers" : " worker") +
                           " beside it would stretch it from " + ms(m->q) + " to " +
                           ms(at.busy / std::max(m->b, 1.0) * m->q),
                       "device utilization " + percent(r.device_util) + " -> " + percent(util) +
                           " but " + std::to_string(std::lround(now)) + " -> " +
                           std::to_string(std::lround(then)) + " samples/s",
                       r.device_util};
    rec.predicted_samples_per_s = now;
    return rec;
  }
  std::string why = "a batch costs one worker " + ms(m->c) + " (" +
                    (m->samples > 0 ? ms(m->c / m->samples) + " a sample; " : std::string()) +
                    "collate " + ms(m->collate) + ") against a step of " + ms(m->q) +
                    " without its waits; " + std::to_string(p.workers) + " workers";
  if (cores == 0) why += "; the trace does not say how many cores fit beside the training";
  if (m->needed > n) {
    why += "; " + std::to_string(m->needed) + " would keep up, " + std::to_string(m->room) +
           " fit beside the training on " + std::to_string(cores) + " cores";
  }
  Recommendation rec{"num_workers",
                     {},
                     "DataLoader(num_workers=" + std::to_string(n) + ")",
                     why,
                     "device utilization " + percent(r.device_util) + " -> " + percent(util) +
                         samples_text(now, then) +
                         (m->needed > n ? "; the rest needs a cheaper dataset: pack it once and "
                                          "read it with gpufeed's Loader"
                                        : ""),
                     util};
  rec.predicted_samples_per_s = then;
  rec.input_settings.push_back({"num_workers", static_cast<std::int64_t>(n)});
  return rec;
}

/// The Dataset itself is the cost: its items, not collate, take the workers' time, and the
/// workers the cores can run do not keep up (or gpufeed, measured on a packed sample of the
/// same items, keeps up better). Packing it once takes that cost out of every epoch.
std::optional<Recommendation> pool_pack_rule(const GapReport& r, const InputPoolFacts& p,
                                             unsigned cores) {
  const auto m = pool_model(r, p, cores);
  if (!m || m->samples <= 0 || m->c - m->collate < m->collate) {
    return {};  // collate is the cost, not the items (or a trace: no batch size to advise)
  }
  const unsigned n = std::max(std::clamp(m->needed, 1u, m->room), p.workers);
  const PoolModel::Point workers_at = m->after(n, m->c);
  const double with_workers = PoolModel::util(workers_at);
  const std::string store = p.packed_store == "jpeg" ? ", store=\"jpeg\"" : "";
  Recommendation rec{"pack",
                     {},
                     "gpufeed.pack(dataset, \"train.h5\"" + store +
                         ") once, then gpufeed.Loader(\"train.h5\", batch_size=" +
                         std::to_string(std::lround(m->samples)) + p.pack_loader_keywords + ")",
                     "the dataset's __getitem__ costs " + ms((m->c - m->collate) / m->samples) +
                         " a sample: " + std::to_string(n) +
                         (n > 1 ? " workers make" : " worker makes") + " at most " +
                         std::to_string(std::lround(m->rate(n))) + " samples/s",
                     "",
                     -1};
  if (!p.pack_transform_note.empty()) rec.reason += "; " + p.pack_transform_note;
  if (p.packed_samples_per_s > 0) {
    // gpufeed's threads made a batch in that many core-ns (measured; else every core taken as
    // busy at its rate), which crowd a CPU step as the DataLoader's workers would; the batch's
    // transform ops run on the loop's thread between its steps.
    const double all = std::max(1.0, m->cores);
    const double cost = p.packed_core_ns_per_sample > 0
                            ? m->samples * p.packed_core_ns_per_sample
                            : m->samples * 1e9 / p.packed_samples_per_s * all;
    PoolModel packed = *m;
    packed.serial = m->samples * p.packed_consumer_ns_per_sample;
    const PoolModel::Point at = packed.after(static_cast<unsigned>(all), cost);
    const double util = PoolModel::util(at);
    const double now = m->samples_per_s(m->period_now), then = m->samples_per_s(at.period);
    if (util < with_workers + 0.02 && then < m->samples_per_s(workers_at.period) * 1.05) {
      return {};  // the workers do as well
    }
    rec.reason += "; gpufeed read a packed sample of it (" + std::to_string(p.packed_items) +
                  " items) at " + std::to_string(std::lround(p.packed_samples_per_s)) +
                  " samples/s on this machine";
    rec.predicted_effect = "device utilization " + percent(r.device_util) + " -> " + percent(util) +
                           samples_text(now, then) + " at gpufeed's measured rate";
    rec.predicted_device_util = util;
    rec.predicted_samples_per_s = then;
    return rec;
  }
  if (m->needed <= m->room) return {};  // more workers are enough
  rec.reason += "; " + std::to_string(m->needed) + " workers would keep up";
  rec.predicted_effect = p.pack_note.empty() ? "the dataset's cost is paid once, not every epoch"
                                             : "gpufeed's rate not measured: " + p.pack_note;
  return rec;
}

/// Workers that start again every epoch: their start-up is a wait the loop pays each time.
std::optional<Recommendation> pool_persistence_rule(const GapReport& r, const InputPoolFacts& p) {
  if (p.workers == 0 || p.persistent_workers || p.starts < 2 || r.window_ns() <= 0) return {};
  const double startup = static_cast<double>(p.startup_ns);
  const double share = startup / static_cast<double>(r.window_ns());
  if (share < 0.02) return {};
  Recommendation rec{"persistent_workers",
                     {},
                     "DataLoader(persistent_workers=True)",
                     "the workers started " + std::to_string(p.starts) + " times, " +
                         ms(startup / static_cast<double>(p.starts)) + " to the first batch each",
                     "about " + percent(share) + " of the time no longer spent starting workers",
                     util_without(r, std::min(startup, idle(r, GapCause::input_wait)))};
  rec.input_settings.push_back({"persistent_workers", 1, true});
  return rec;
}

/// Batches for a CUDA device from pageable memory: pinned, the copy overlaps the step.
std::optional<Recommendation> pool_pinning_rule(const GapReport&, const InputPoolFacts& p) {
  if (!p.cuda || p.pin_memory) return {};
  Recommendation rec{"pin_memory",
                     {},
                     "DataLoader(pin_memory=True) and .to(device, non_blocking=True)",
                     "the batches are copied to the device from pageable memory",
                     "pinned copies run about 2x faster and overlap the step",
                     -1};
  rec.input_settings.push_back({"pin_memory", 1, true});
  return rec;
}

}  // namespace

std::optional<PoolModel> pool_model(const GapReport& r, const InputPoolFacts& p, unsigned cores) {
  if (r.verdict == Verdict::not_input_bound || p.batches == 0 || p.fetch_ns <= 0 || r.steps == 0) {
    return {};
  }
  PoolModel m;
  const double steps = static_cast<double>(r.steps);
  const double batches = static_cast<double>(p.batches);
  m.b = static_cast<double>(r.busy_ns) / steps;
  m.q = (window(r) - idle(r, GapCause::input_wait)) / steps;
  m.c = static_cast<double>(p.fetch_ns) / batches;
  m.collate = static_cast<double>(p.collate_ns) / batches;
  m.samples = static_cast<double>(p.samples) / batches;
  m.needed = static_cast<unsigned>(std::ceil(1.1 * m.c / std::max(m.q, 1.0)));
  // Cores unknown (a trace): the machine that ran it decides how many fit.
  m.room = cores == 0 ? std::max(m.needed, 1u) : cores > 1 ? cores - 1 : 1;
  m.workers = p.workers;
  m.step_cores = p.step_cores;
  m.cores = cores;
  if (m.step_cores > PoolModel::kOneThread && cores > 0) {
    // The machine's other processes take from the loop what its step was seen to lack: a step
    // of several threads measured short of a whole core (1.82 of 2) beside them was short of
    // that core. A one-thread step's other core is idle by the step's nature: others fill it
    // while it is idle and leave it to a loader that wants it.
    const double whole = std::min(std::ceil(m.step_cores), static_cast<double>(cores));
    m.others = std::clamp(std::min(p.other_cores, whole - m.step_cores), 0.0,
                          static_cast<double>(cores) - 1);
  }
  m.period_now = window(r) / steps;
  m.wait_now = idle(r, GapCause::input_wait) / steps;
  m.warm = static_cast<double>(p.warm_step_ns);
  if (p.run_wall_ns > 0 && p.run_samples > 0) {
    m.run_samples = static_cast<double>(p.run_samples);
    m.run_batches = batches;
    m.outside = std::max(0.0, static_cast<double>(p.run_wall_ns) - batches * m.period_now);
  }
  return m;
}

std::vector<Recommendation> pool_recommendations(const GapReport& report,
                                                 const InputPoolFacts& pool, unsigned cores) {
  std::vector<Recommendation> out;
  for (auto rec : {pool_workers_rule(report, pool, cores), pool_pack_rule(report, pool, cores),
                   pool_persistence_rule(report, pool), pool_pinning_rule(report, pool)}) {
    if (rec) out.push_back(std::move(*rec));
  }
  return out;
}

}  // namespace gpufeed::diagnosis::detail
