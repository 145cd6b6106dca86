#include "gpufeed/profiler/recommendation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

#include "gpufeed/profiler/gap_report.hpp"
#include "render/text_format.hpp"

namespace gpufeed::profiler {

namespace {

using detail::duration;
using detail::percent;
using Rule = std::optional<Recommendation> (*)(const GapReport&, const PipelineFacts&);

double window(const GapReport& r) {
  return static_cast<double>(std::max<std::int64_t>(1, r.window_ns()));
}
double idle(const GapReport& r, GapCause c) {
  return static_cast<double>(r.idle_ns[c]);
}

/// Utilization once `removed` ns of idle time no longer occur (the rest of the run unchanged).
double util_without(const GapReport& r, double removed) {
  return std::min(1.0, static_cast<double>(r.busy_ns) / std::max(1.0, window(r) - removed));
}

std::optional<Recommendation> echo_rule(const GapReport& r, const PipelineFacts& f) {
  if (r.verdict == Verdict::not_input_bound || r.busy_ns <= 0 || f.echo.value_or(1) > 1) return {};
  const double b = static_cast<double>(r.busy_ns);
  const double need = std::ceil((b + idle(r, GapCause::input_wait)) / b);
  const int e = static_cast<int>(std::clamp(need, 2.0, 4.0));
  std::string table;
  for (int k = 2; k <= 4; ++k) {
    table += (k > 2 ? ", " : "") + std::string("echo ") + std::to_string(k) + ": " +
             percent(predicted_util_with_echo(r, k));
  }
  return Recommendation{"echo",
                        {Setting::of(Knob::echo, static_cast<std::uint64_t>(e))},
                        "",
                        "the device waits for input " + percent(r.input_bound_share) +
                            " of the time; repeating each batch on the device hides the wait",
                        "device utilization " + percent(r.device_util) + " -> " +
                            percent(predicted_util_with_echo(r, e)) + " (" + table +
                            "); fresh samples per second unchanged",
                        predicted_util_with_echo(r, e)};
}

/// How busy the bottleneck stage keeps each worker: from the caller's counters when given,
/// else from the recorded ranges (threads in the stage while waiting / workers); negative when
/// unknown.
double stage_saturation(const GapReport& r, const PipelineFacts& f) {
  if (const auto it = f.stage_busy.find(r.bottleneck_stage); it != f.stage_busy.end()) {
    return it->second;
  }
  for (const StageShare& s : r.stages) {
    if (s.name == r.bottleneck_stage && f.workers && *f.workers > 0 && s.share_during_wait > 0) {
      return s.share_during_wait / *f.workers;
    }
  }
  return -1;
}

std::optional<Recommendation> workers_rule(const GapReport& r, const PipelineFacts& f) {
  if (r.verdict == Verdict::not_input_bound || r.bottleneck_stage.empty()) return {};
  const unsigned n = f.workers.value_or(0);
  const unsigned cores = f.cpu_cores.value_or(0);
  if (n > 0 && cores > 0 && n >= cores) return {};  // no idle core to add
  const double saturation = stage_saturation(r, f);
  if (saturation >= 0 && saturation < 0.6) return {};  // workers idle: more would not help
  const unsigned target = n > 0 ? (cores > 0 ? std::min(cores, 2 * n) : 2 * n) : 0;
  const double scale = n > 0 ? static_cast<double>(n) / target : 0.5;
  // The loader delivers a batch every busy + wait; more workers shorten that period.
  const double b = static_cast<double>(r.busy_ns);
  const double w = idle(r, GapCause::input_wait);
  const double new_wait = std::max(0.0, (b + w) * scale - b);
  const double util = util_without(r, w - new_wait);
  std::string why = "\"" + r.bottleneck_stage + "\" is the busiest stage while the consumer waits";
  if (saturation >= 0) why += ", busy " + percent(saturation) + " per worker";
  if (n > 0) why += " (" + std::to_string(n) + " workers";
  if (n > 0) why += cores > 0 ? ", " + std::to_string(cores) + " cores)" : ")";
  std::vector<Setting> settings;
  if (n > 0) settings.push_back(Setting::of(Knob::workers, target));
  return Recommendation{"workers",
                        settings,
                        n > 0 ? "" : "twice as many workers",
                        why,
                        "input wait " + percent(w / window(r)) + " -> " +
                            percent(new_wait / window(r)) + ", device utilization -> " +
                            percent(util) + " if the stage scales with workers",
                        util};
}

std::optional<Recommendation> prefetch_rule(const GapReport& r, const PipelineFacts& f) {
  const GapStats& s = r.gap_stats[static_cast<std::size_t>(GapCause::input_wait)];
  if (s.count < 3 || s.cv <= 1.0) return {};
  // Bursty waits: a deeper queue absorbs what exceeds the typical (median) wait.
  const double typical = static_cast<double>(s.median_ns) * static_cast<double>(s.count);
  const double absorbed = std::max(0.0, static_cast<double>(s.total_ns) - typical);
  const unsigned p = f.prefetch.value_or(0);
  std::vector<Setting> settings;
  if (p > 0) settings.push_back(Setting::of(Knob::prefetch, 2 * p));
  return Recommendation{
      "prefetch",
      settings,
      p > 0 ? "" : "prefetch more batches",
      "input waits are bursty (coefficient of variation " + std::to_string(s.cv).substr(0, 4) +
          ", longest " + duration(s.max_ns) + ", median " + duration(s.median_ns) + ")",
      "absorbs about " + duration(static_cast<std::int64_t>(absorbed)) +
          " of waiting; device utilization -> " + percent(util_without(r, absorbed)),
      util_without(r, absorbed)};
}

std::optional<Recommendation> pinned_rule(const GapReport& r, const PipelineFacts& f) {
  // Pageable copies matter once they take a noticeable share of the window.
  const bool seen = static_cast<double>(r.pageable_h2d_ns) >= 0.01 * window(r);
  if (!seen && f.pinned_memory.value_or(true)) return {};
  const std::string what = seen ? duration(r.pageable_h2d_ns) + " of pageable host-to-device copies"
                                : "host batch memory is not pinned";
  return Recommendation{"pinned_memory",
                        {},
                        "pin host batch memory (cudaHostAlloc / pin_memory=True)",
                        what + " in the window",
                        "pageable copies stage through a driver buffer and block the host; "
                        "pinned copies run about 2x faster and overlap compute: copy time -> ~" +
                            duration(r.pageable_h2d_ns / 2),
                        -1};
}

std::optional<Recommendation> chunk_cache_rule(const GapReport& r, const PipelineFacts& f) {
  if (!r.has_bottleneck() || r.bottleneck_stage != stage_name(Stage::read)) return {};
  std::string effect = "each chunk read once per epoch";
  if (f.chunk_reads && f.chunks_read_once && *f.chunk_reads > 0) {
    const double keep =
        static_cast<double>(*f.chunks_read_once) / static_cast<double>(*f.chunk_reads);
    if (keep >= 0.95) return {};  // already reading each chunk about once
    effect = "chunk reads -" + percent(1 - keep) + " (" + std::to_string(*f.chunk_reads) + " -> " +
             std::to_string(*f.chunks_read_once) + ")";
  }
  if (f.cache_hit_rate) effect += "; cache hit rate now " + percent(*f.cache_hit_rate);
  Recommendation rec{"chunk_cache", {}, "", "\"read\" is the bottleneck stage", effect, -1};
  if (f.order.value_or(Order::random) != Order::chunk) {
    rec.settings.push_back(Setting::of(Order::chunk));
    rec.words = "with a chunk cache of at least the shuffle window";
  } else if (f.cache_bytes) {
    rec.settings.push_back(
        Setting::of(Knob::cache_bytes, std::max<std::uint64_t>(2 * *f.cache_bytes, 64ull << 20)));
  } else {
    rec.words = "a chunk cache of at least the shuffle window";
  }
  return rec;
}

std::optional<Recommendation> object_store_rule(const GapReport& r, const PipelineFacts& f) {
  if (!f.network || !r.has_bottleneck() || r.bottleneck_stage != stage_name(Stage::read)) {
    return {};
  }
  const NetworkFacts& n = *f.network;
  const std::string fetched = std::to_string(n.requests) + " GETs, first byte after " +
                              std::to_string(n.mean_first_byte_ms).substr(0, 5) + " ms on average";
  if (n.requests > 0 && n.throttled * 100 >= n.requests) {  // 1% or more refused
    // Waiting removes nothing: the client already keeps under the server's rate. The fix is
    // fewer requests for the same samples.
    Recommendation rec{"object_store", {}, "", "", "", -1};
    const std::uint64_t per_get = n.bytes / n.requests;
    rec.reason = "\"read\" is the bottleneck stage and the object store limits the request rate: " +
                 std::to_string(n.throttled) + " of " + std::to_string(n.requests) +
                 " requests were refused (SlowDown)";
    if (n.rate_limit > 0) {
      rec.reason += ", and the loader paced itself to " +
                    std::to_string(static_cast<long long>(n.rate_limit + 0.5)) +
                    " requests a second (" + duration(n.rate_wait_ns) + " waiting for its turn, " +
                    duration(n.backoff_ns) + " backing off)";
    }
    rec.reason += "; GETs averaged " + std::to_string(per_get / 1024) + " KiB";
    if (f.order.value_or(Order::random) != Order::chunk) {
      rec.settings.push_back(Setting::of(Order::chunk));
      rec.predicted_effect =
          n.jpeg_layout
              ? "one GET a block of consecutive images (about 4 MiB) instead of one an image: "
                "requests / " +
                    std::to_string(std::max<std::uint64_t>(
                        1, (4ull << 20) / std::max<std::uint64_t>(1, per_get))) +
                    ", the same samples"
              : "each chunk fetched once an epoch: fewer requests for the same samples";
    } else {
      rec.words = "pack more samples a chunk (fewer, larger GETs)";
      rec.predicted_effect = "each GET brings more samples: the request rate falls as chunks grow";
    }
    return rec;
  }
  if (n.read_requests > 0 && n.peak_in_flight >= n.read_requests && n.read_requests < 1024) {
    return Recommendation{
        "object_store",
        {Setting::of(Knob::read_requests, std::min(1024u, 2 * n.read_requests))},
        "",
        "\"read\" is the bottleneck stage with every allowed GET in flight (" + fetched + ")",
        "twice the requests in flight: up to twice the read rate while the link has room",
        -1};
  }
  return Recommendation{
      "object_store",
      {},
      "fetch fewer, larger ranges: repack the file with bigger chunks (more samples a chunk)",
      "\"read\" is the bottleneck stage with fewer GETs in flight than allowed (" + fetched + ")",
      "each GET pays the first-byte time once for more samples",
      -1};
}

std::optional<Recommendation> dtype_rule(const GapReport&, const PipelineFacts& f) {
  if (!f.transfer_bytes_per_sample || !f.uint8_bytes_per_sample || *f.uint8_bytes_per_sample == 0 ||
      *f.transfer_bytes_per_sample <= *f.uint8_bytes_per_sample) {
    return {};
  }
  const double ratio = static_cast<double>(*f.transfer_bytes_per_sample) /
                       static_cast<double>(*f.uint8_bytes_per_sample);
  return Recommendation{
      "transfer_dtype",
      {},
      "copy uint8 to the device and normalize there",
      "samples cross the bus " + std::to_string(ratio).substr(0, 4) + "x larger than as uint8",
      "host-to-device bytes / " + std::to_string(ratio).substr(0, 4),
      -1};
}

std::optional<Recommendation> sync_rule(const GapReport& r, const PipelineFacts&) {
  if (r.idle_share(GapCause::host_sync) < 0.05) return {};
  const double s = idle(r, GapCause::host_sync);
  return Recommendation{
      "host_sync",
      {},
      "remove .item()/.cpu()/synchronize from the step loop",
      "the device idles " + percent(s / window(r)) + " of the time while the host synchronizes",
      "device utilization -> " + percent(util_without(r, s)),
      util_without(r, s)};
}

std::optional<Recommendation> launch_rule(const GapReport& r, const PipelineFacts& f) {
  if (r.idle_share(GapCause::launch) < 0.10) return {};
  const double l = idle(r, GapCause::launch);
  const std::string reason = "the device idles " + percent(l / window(r)) +
                             " of the time while the host is still issuing work";
  // A loader working on every core takes them from the thread that issues the step's work:
  // its launches come late however small the step is (on an H200 with 16 cores, resnet18's
  // launch gaps were 16-23% of the time under 16 decoding workers, 5-6% with decoding eased).
  const bool loader_busy = r.verdict != Verdict::not_input_bound ||
                           std::any_of(f.stage_busy.begin(), f.stage_busy.end(),
                                       [](const auto& stage) { return stage.second >= 0.8; });
  if (f.loader_settings && f.workers && f.cpu_cores && *f.cpu_cores > 1 &&
      *f.workers >= *f.cpu_cores && loader_busy) {
    const unsigned workers = *f.cpu_cores - 1;
    return Recommendation{
        "launch",
        {Setting::of(Knob::workers, workers)},
        "(a core for the training thread; then, if the gaps stay, larger batches, fused ops or "
        "CUDA graphs)",
        reason + ", and the loader's " + std::to_string(*f.workers) + " workers take all " +
            std::to_string(*f.cpu_cores) + " cores",
        "launches no longer wait for a core (at most device utilization -> " +
            percent(util_without(r, l)) + "); the loader keeps " + std::to_string(workers) +
            " of its " + std::to_string(*f.workers) + " workers",
        -1};
  }
  return Recommendation{"launch",
                        {},
                        "larger batches, fused ops or CUDA graphs",
                        reason,
                        "device utilization -> " + percent(util_without(r, l)),
                        util_without(r, l)};
}

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

/// A DataLoader's worker pool against the loop it feeds, per step: the step's work `b`, its
/// period without waits `q`, what a batch costs one worker `c` (its items and collate), and
/// the workers that would keep up (`needed`) against those the cores beside the training
/// process can run (`room`: every core but the loop's own).
struct PoolModel {
  double b = 0, q = 0, c = 0, collate = 0;
  double samples = 0;  ///< a batch's; 0: unknown (a trace)
  unsigned room = 1, needed = 1;
  unsigned workers = 0;   ///< today's
  double step_cores = 0;  ///< cores a CPU step keeps busy (0: a device step)
  double cores = 0;       ///< cores there are (0: unknown)
  double period_now = 0;  ///< today's period of a step, waits included
  double wait_now = 0;    ///< today's wait for input a step
  double warm = 0;        ///< a step's busy time with no wait before it (0: not measured)
  /// The input's work on the loop's own thread between two steps (a Loader's transform ops on
  /// each delivered batch): the loop cannot take a step more often than q + serial.
  double serial = 0;
  /// A step whose CPU time is at most this many cores runs on one thread (a little over 1:
  /// the process's other threads, the profile's own).
  static constexpr double kOneThread = 1.2;

  /// What a CPU step's time is multiplied by when `busy` worker cores run beside it: the
  /// share of the cores it lacks.
  [[nodiscard]] double crowding(double busy) const {
    if (step_cores <= 0 || cores <= 0) return 1.0;
    return std::max(1.0, (step_cores + busy) / cores);
  }
  /// Today's: each worker busy making its batches (no workers: the loop loads between steps).
  [[nodiscard]] double crowding_now() const {
    return crowding(workers == 0 ? 0.0 : std::min<double>(workers, c / std::max(period_now, 1.0)));
  }
  /// The loop when `n` suppliers make batches that cost `cost` core-ns each: the period of a
  /// step and the step's own busy time. Where a CPU step of several threads (torch's intra-op
  /// pool) and the workers want more cores than there are, both run slower by the crowding (a
  /// fixed point, damped: the workers' load depends on the period it sets): a parallel step
  /// waits for its slowest thread.
  struct Point {
    double period = 0;
    double busy = 0;
  };
  [[nodiscard]] Point at(unsigned n, double cost) const {
    const double k = std::max(n, 1u);
    if (step_cores > 0 && step_cores <= kOneThread && cores > 0) {
      // A step on one thread keeps its core (the scheduler runs the thread that slept through
      // its wait for input first) and runs as fast as today; the suppliers get the core-time
      // the loop leaves them: cores * period >= cost + the loop's own core-time.
      return {std::max({q + serial, cost / k, (cost + step_cores * q) / cores}), b};
    }
    double slow = 1.0;
    Point p{std::max(q + serial, cost / k), b};
    for (int i = 0; i < 64; ++i) {
      const double working = std::min(k, cost * slow / std::max(p.period, 1.0));
      slow = 0.5 * slow + 0.5 * crowding(working) / crowding_now();
      p.busy = b * slow;
      p.period = std::max((q + serial) * slow, cost * slow / k);
    }
    return p;
  }
  /// at(), with the step as long as it would be after that point's wait for input. A step
  /// after a wait runs on cold caches (a halted core, the loading's data in them): today's step
  /// `b` follows today's wait, the probe's `warm` none; in between, the step is taken to grow
  /// linearly with the wait before it (measured on a CPU step: 0.88 ms back to back, 0.95 after
  /// 0.5 ms, 1.10 after 2 ms, 1.77 after 10 ms). The point's wait depends on its step: a few
  /// rounds of a fixed point.
  [[nodiscard]] Point after(unsigned n, double cost) const {
    if (warm <= 0 || warm >= b || wait_now <= 0) return at(n, cost);
    PoolModel then = *this;
    Point p = at(n, cost);
    for (int i = 0; i < 16; ++i) {
      const double wait = std::max(0.0, p.period - then.q);
      const double step = warm + (b - warm) * std::min(1.0, wait / wait_now);
      then.q = q - b + step;
      then.b = step;
      p = then.at(n, cost);
    }
    return p;
  }
  [[nodiscard]] static double util(const Point& p) {
    return std::min(1.0, p.busy / std::max(p.period, 1.0));
  }
  /// Samples a second the loop takes at a step period of `period` ns; today's at period_now.
  [[nodiscard]] double samples_per_s(double period) const {
    return samples > 0 ? samples * 1e9 / std::max(period, 1.0) : -1;
  }
  /// The samples a second `n` workers make.
  [[nodiscard]] double rate(unsigned n) const { return std::max(n, 1u) * samples * 1e9 / c; }
};

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
  m.period_now = window(r) / steps;
  m.wait_now = idle(r, GapCause::input_wait) / steps;
  m.warm = static_cast<double>(p.warm_step_ns);
  return m;
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

/// An input that is not a gpufeed Loader (a torch DataLoader, a generator): only its waits are
/// seen, so the advice is what removes them, not a setting.
std::optional<Recommendation> foreign_input_rule(const GapReport& r, const PipelineFacts&) {
  if (r.verdict == Verdict::not_input_bound) return {};
  const double w = idle(r, GapCause::input_wait);
  return Recommendation{
      "input",
      {},
      "make the input keep up: more parallel workers for it (a DataLoader's num_workers), or "
      "pack the dataset once and read it with gpufeed's Loader",
      "the loop waits for its input " + percent(r.input_bound_share) +
          " of the time; the profile sees the waits, not the work inside the input",
      "device utilization " + percent(r.device_util) + " -> up to " + percent(util_without(r, w)) +
          " once no step waits for input",
      util_without(r, w)};
}

}  // namespace

std::string Recommendation::action(const SettingSpelling& spelling) const {
  std::string out;
  for (const Setting& s : settings) out += (out.empty() ? "" : " ") + spelling(s);
  if (!words.empty()) out += (out.empty() ? "" : " ") + words;
  return out;
}

double predicted_util_with_echo(const GapReport& r, double echo) noexcept {
  const double b = static_cast<double>(r.busy_ns);
  const double w = static_cast<double>(r.idle_ns[GapCause::input_wait]);
  if (r.window_ns() <= 0) return 0;
  return std::min(1.0,
                  std::min(std::max(echo, 1.0) * b, b + w) / static_cast<double>(r.window_ns()));
}

std::vector<Recommendation> recommend(const GapReport& report, const PipelineFacts& facts) {
  std::vector<Recommendation> out;
  // The loader's settings are advised only where the input is gpufeed's Loader.
  static constexpr std::array<Rule, 9> kLoaderRules{
      echo_rule,         workers_rule, prefetch_rule, pinned_rule, chunk_cache_rule,
      object_store_rule, dtype_rule,   sync_rule,     launch_rule};
  static constexpr std::array<Rule, 4> kForeignInputRules{foreign_input_rule, pinned_rule,
                                                          sync_rule, launch_rule};
  const std::span<const Rule> rules =
      facts.loader_settings ? std::span<const Rule>(kLoaderRules) : kForeignInputRules;
  if (!facts.loader_settings && facts.input_pool) {
    const InputPoolFacts& pool = *facts.input_pool;
    const unsigned cores = pool.cores != 0 ? pool.cores : facts.cpu_cores.value_or(0);
    for (auto rec : {pool_workers_rule(report, pool, cores), pool_pack_rule(report, pool, cores),
                     pool_persistence_rule(report, pool), pool_pinning_rule(report, pool)}) {
      if (rec) out.push_back(std::move(*rec));
    }
  }
  // Without a pool's own advice, the general one for an input that holds the loop back.
  const bool pool_advised = !out.empty();
  for (Rule rule : rules) {
    if (pool_advised && rule == foreign_input_rule) continue;
    if (auto rec = rule(report, facts)) {
      // A change never makes things worse in the model: at worst it keeps today's utilization.
      if (rec->predicted_device_util >= 0) {
        rec->predicted_device_util = std::max(rec->predicted_device_util, report.device_util);
      }
      out.push_back(std::move(*rec));
    }
  }
  // Where the step's cost does not change, steps (and samples) a second follow utilization.
  double per_step = facts.samples_per_step.value_or(0);
  if (per_step <= 0 && facts.input_pool && facts.input_pool->batches > 0) {
    per_step = static_cast<double>(facts.input_pool->samples) /
               static_cast<double>(facts.input_pool->batches);
  }
  if (per_step > 0 && report.steps > 0 && report.device_util > 0) {
    const double now = per_step * static_cast<double>(report.steps) * 1e9 / window(report);
    for (Recommendation& rec : out) {
      if (rec.predicted_samples_per_s < 0 && rec.predicted_device_util >= 0) {
        rec.predicted_samples_per_s = now * rec.predicted_device_util / report.device_util;
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    return a.predicted_device_util > b.predicted_device_util;
  });
  return out;
}

}  // namespace gpufeed::profiler
