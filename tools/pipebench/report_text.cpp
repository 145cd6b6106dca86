// The terminal summary of a run: plain text, aligned columns.
#include <cstdio>
#include <string>

#include "common/cli.hpp"
#include "gpufeed/base/text.hpp"
#include "pipebench/report.hpp"

namespace gpufeed::tools::pipebench {

namespace {

constexpr const char* kRowFormat = "%-11s %s\n";

std::string mb(double bytes) {
  return format("%.1f MB", bytes / 1e6);
}

void row(const char* key, const std::string& value) {
  std::printf(kRowFormat, key, value.c_str());
}

std::string shape_text(const formats::SampleShape& s) {
  return format("%ux%ux%u %s", s.height, s.width, s.channels, formats::to_string(s.layout).c_str());
}

void print_dataset(const DatasetSummary& d) {
  row("dataset", d.synthetic.empty()
                     ? d.path
                     : "synthetic " + d.synthetic + " (temporary file " + d.path + ")");
  row("",
      format("%llu samples %s, %llu per chunk, %llu chunks, compression %s, read path %s",
             static_cast<unsigned long long>(d.samples), shape_text(d.shape).c_str(),
             static_cast<unsigned long long>(d.chunk), static_cast<unsigned long long>(d.chunks),
             d.compression.c_str(), d.read_path.c_str()));
}

void print_settings(const BenchReport& r) {
  const auto& o = r.options;
  const std::string length =
      r.plan.steps != 0 ? format("%llu steps", static_cast<unsigned long long>(r.plan.steps))
                        : format("%llu epochs", static_cast<unsigned long long>(r.plan.epochs));
  const LoaderOptions& lo = o.loader;
  const char* tuned_workers = lo.resources.workers.is_auto() ? " (auto)" : "";
  const char* tuned_prefetch = lo.resources.prefetch.is_auto() ? " (auto)" : "";
  row("settings",
      format("device %s, batch %u, workers %u%s, prefetch %u%s, order %s, seed %llu, %s",
             r.device.used.str().c_str(), lo.sampling.batch_size, r.workers, tuned_workers,
             r.run.stats.prefetch, tuned_prefetch, to_string(lo.sampling.order).c_str(),
             static_cast<unsigned long long>(lo.sampling.seed), length.c_str()));
  for (const TuningChange& c : r.run.stats.tuning) {
    row("tuning", format("%s %u -> %u at %s: %s", knob_name(c.knob), c.from, c.to,
                         stage_name(c.stage), c.reason.c_str()));
  }
  row("", format("dtype %s, echo %s, augment %s, on-error %s", to_string(lo.output.dtype).c_str(),
                 lo.echo.to_string().c_str(), to_string(lo.image.augment).c_str(),
                 to_string(lo.on_error).c_str()) +
              (o.inject_stall ? ", injected stall " + o.inject_stall->str() : ""));
}

void print_device(const BenchReport& r) {
  const LoaderStats& s = r.run.stats;
  const auto& o = r.options;
  if (o.loader.echo.enabled()) {
    row("echo", format("%llu fresh batches, %llu echoed (%llu with a new flip)",
                       static_cast<unsigned long long>(s.fresh_batches),
                       static_cast<unsigned long long>(s.echoed_batches),
                       static_cast<unsigned long long>(s.reaugmented_batches)));
  }
  if (s.decode.engine_images + s.decode.cpu_images > 0 && s.decode.mode != "cpu") {
    std::string why;
    for (const auto& [reason, count] : s.decode.cpu_reasons) {
      why += (why.empty() ? " (" : ", ") + reason + " " + std::to_string(count);
    }
    row("decode",
        format("%s: %llu images on the JPEG engines, %llu on the CPU%s%s", s.decode.mode.c_str(),
               static_cast<unsigned long long>(s.decode.engine_images),
               static_cast<unsigned long long>(s.decode.cpu_images), why.c_str(),
               why.empty() ? "" : ")"));
  }
  if (s.skipped_samples > 0) {
    row("skipped", format("%llu undecodable samples replaced (--on-error skip)",
                          static_cast<unsigned long long>(s.skipped_samples)));
  }
  if (r.device.used.is_cpu()) return;
  row("h2d", format("pinned %.2f GB/s, pageable %.2f GB/s (measured at start)%s",
                    s.pinned_h2d_bytes_per_s / 1e9, s.pageable_h2d_bytes_per_s / 1e9,
                    s.pinned ? "" : "; slots are PAGEABLE: pinning failed"));
}

void print_throughput(const BenchReport& r) {
  row("run",
      format("%llu samples in %llu batches, %.2f s", static_cast<unsigned long long>(r.run.samples),
             static_cast<unsigned long long>(r.run.batches), r.run.wall_s));
  if (r.run.interrupted_by != 0) {
    row("interrupted", format("by %s: every figure below covers the part that ran",
                              signal_name(r.run.interrupted_by).c_str()));
  }
  std::string text =
      format("%.0f samples/s, %.1f MB/s %s output", samples_per_s(r), output_bytes_per_s(r) / 1e6,
             to_string(r.options.loader.output.dtype).c_str());
  if (const auto steady = steady_samples_per_s(r)) {
    text += format(" (steady state after epoch 1: %.0f samples/s)", *steady);
  }
  row("throughput", text);
}

void print_stages(const BenchReport& r) {
  std::printf("%-11s %7s %9s %9s\n", "stage", "busy", "items", "ms/item");
  for (std::size_t i = 0; i < kStageCount; ++i) {
    const auto stage = static_cast<Stage>(i);
    const StageStats& s = r.run.stats[stage];
    if (s.items == 0) continue;
    const double busy = r.run.stats.busy_fraction(stage);
    std::printf("%-11s %6.1f%% %9llu %9.3f%s\n", stage_name(stage), 100.0 * busy,
                static_cast<unsigned long long>(s.items), ms_per_item(s),
                stage == Stage::wait ? "  (consumer blocked on the loader)" : "");
  }
}

void print_memory(const BenchReport& r) {
  const LoaderStats& s = r.run.stats;
  const auto hit_rate = diagnosis::cache_hit_rate(r.run.stats);
  row("cache",
      (hit_rate ? format("hit rate %.1f%%", 100.0 * *hit_rate) : std::string("no lookups")) +
          format(" (%llu hits, %llu misses), peak %s",
                 static_cast<unsigned long long>(s.cache_hits),
                 static_cast<unsigned long long>(s.cache_misses),
                 mb(static_cast<double>(s.cache_peak_bytes)).c_str()));
  if (const auto& n = s.network) {
    row("network",
        format("%llu GETs, %s, first byte after %.1f ms on average, up to %llu in flight (%u "
               "allowed), %llu retried, %llu throttled (%.1f s backing off)",
               static_cast<unsigned long long>(n->requests),
               mb(static_cast<double>(n->bytes)).c_str(), n->mean_first_byte_ms(),
               static_cast<unsigned long long>(n->peak_in_flight), n->read_requests,
               static_cast<unsigned long long>(n->retries),
               static_cast<unsigned long long>(n->throttled),
               static_cast<double>(n->backoff_ns) / 1e9) +
            (n->rate_limit > 0 ? format(", paced to %.0f requests/s (%.1f s waiting for the rate)",
                                        n->rate_limit, static_cast<double>(n->rate_wait_ns) / 1e9)
                               : std::string()));
  }
  const bool cuda = r.device.used.is_cuda();
  std::string text = "batch slots " + mb(static_cast<double>(s.slot_bytes));
  if (cuda) {
    text += s.pinned ? " (pinned " + mb(static_cast<double>(s.pinned_bytes)) + ")" : " (pageable)";
    text += ", device pool " + mb(static_cast<double>(s.device_bytes));
  }
  text += ", peak RSS " + mb(static_cast<double>(r.peak_rss_bytes));
  if (r.run.training && cuda) {
    text += ", LibTorch allocator peak " +
            mb(static_cast<double>(r.run.training->allocator_peak_bytes));
  }
  row("memory", text);
}

void print_bottleneck(const BenchReport& r) {
  const auto stage = r.run.stats.bottleneck();
  if (!stage) {
    std::printf("slowest stage: none (no pipeline work was recorded)\n");
    return;
  }
  std::printf("slowest stage: %s (busy %.0f%% of %u workers)\n", stage_name(*stage),
              100.0 * r.run.stats.busy_fraction(*stage), r.run.stats.workers);
}

}  // namespace

void print_report(const BenchReport& r) {
  print_dataset(r.dataset);
  print_settings(r);
  print_throughput(r);
  print_stages(r);
  print_device(r);
  print_memory(r);
  print_bottleneck(r);
  std::fflush(stdout);
}

}  // namespace gpufeed::tools::pipebench
