// The Loader's settings (echo, workers, prefetch, pinned memory, chunk cache, object store,
// transfer dtype) and the step's own habits (host syncs, launches), from the gap report and the
// facts only the caller knows; and the general advice for an input that is not the Loader.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "advice/rules.hpp"

namespace gpufeed::diagnosis::detail {

namespace {

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

}  // namespace

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

}  // namespace gpufeed::diagnosis::detail
