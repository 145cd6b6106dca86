// Soak: many short epochs with random settings, random cancellation, echo, skip-on-error and
// tiny chunk caches, for a given time. Checks every epoch that ran to its end is exactly-once
// (every sample once; with skip-on-error, every good sample, no broken one, and one stand-in
// per skipped sample) and that the process's resident memory stays flat.
//
//   bench_soak [--seconds 60] [--seed 1] [--dir DIR]
//
// Prints one line per minute (loaders, epochs, batches, RSS) and a JSON summary as its last
// line; exits 1 when a check fails. See bench/soak/README.md.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/pack.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace fs = std::filesystem;
using gpufeed::Batch;
using gpufeed::Loader;
using gpufeed::LoaderOptions;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kRawSamples = 3000;  // 93 full batches of 32 and a partial one
constexpr std::uint64_t kJpegSamples = 600;
constexpr std::uint64_t kBrokenEvery = 97;  // jpeg samples 0, 97, 194, ... are not images

std::uint8_t pixel(std::uint64_t sample, std::uint64_t byte) {
  return static_cast<std::uint8_t>((sample * 131 + byte * 7 + 1) & 0xff);
}

void write_raw(const std::string& path) {
  const gpufeed::formats::SampleShape shape{16, 16, 3, gpufeed::formats::Layout::nhwc};
  gpufeed::formats::WriterOptions o;
  o.samples_per_chunk = 50;
  gpufeed::formats::DatasetWriter writer(path, kRawSamples, shape, o);
  const std::uint64_t bytes = shape.bytes();
  gpufeed::formats::pack_images(
      writer,
      [&](std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
        for (std::uint64_t s = 0; s < count; ++s) {
          for (std::uint64_t b = 0; b < bytes; ++b) out[s * bytes + b] = pixel(first + s, b);
        }
      },
      1);
  std::vector<std::int64_t> labels(kRawSamples);
  for (std::uint64_t i = 0; i < kRawSamples; ++i) labels[i] = static_cast<std::int64_t>(i % 10);
  writer.write_labels(labels);
  writer.commit();
}

void write_jpeg(const std::string& path) {
  gpufeed::formats::JpegDatasetWriter writer(path);
  gpufeed::formats::JpegEncoder encoder(90);
  for (std::uint64_t i = 0; i < kJpegSamples; ++i) {
    const auto w = static_cast<std::uint32_t>(24 + (i % 4) * 8);
    const auto h = static_cast<std::uint32_t>(20 + (i % 3) * 8);
    gpufeed::formats::Image img(w, h, 3);
    for (std::size_t p = 0; p < img.pixels.size(); ++p) {
      img.pixels[p] = static_cast<std::uint8_t>((p * 3 + i * 29) & 0xff);
    }
    std::vector<std::uint8_t> bytes = encoder.encode(img.view());
    if (i % kBrokenEvery == 0) std::fill(bytes.begin(), bytes.end(), std::uint8_t{0x42});
    writer.append(bytes, {static_cast<std::uint16_t>(h), static_cast<std::uint16_t>(w), 3},
                  static_cast<std::int64_t>(i % 5));
  }
  writer.commit();
}

std::uint64_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      std::uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

struct Totals {
  std::uint64_t loaders = 0, epochs_completed = 0, epochs_cancelled = 0, batches = 0;
  std::uint64_t echoed = 0, samples = 0, skipped = 0, failures = 0;
  std::vector<std::string> problems;
};

struct Setting {
  bool jpeg = false;
  LoaderOptions options;
  std::string describe;
};

Setting draw(std::mt19937_64& rng, const std::string& raw, const std::string& jpeg) {
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  Setting s;
  s.jpeg = pick(3) == 0;
  LoaderOptions& o = s.options;
  o.source.path = s.jpeg ? jpeg : raw;
  o.sampling.shard = gpufeed::Shard{};
  o.output.keep_raw = true;  // the soak checks Batch::raw()'s pixels
  o.resources.workers = static_cast<unsigned>(1 + pick(3));
  o.resources.prefetch = static_cast<unsigned>(1 + pick(4));
  o.sampling.batch_size = std::vector<std::uint32_t>{7, 16, 32}[pick(3)];
  o.sampling.order = std::vector<gpufeed::Order>{gpufeed::Order::random, gpufeed::Order::sequential,
                                                 gpufeed::Order::chunk}[pick(3)];
  o.sampling.seed = rng();
  o.sampling.drop_last = pick(4) == 0;
  // Tiny caches: one byte (one chunk kept), a few chunks, or plenty.
  o.storage.cache_bytes = std::vector<std::uint64_t>{1, 120 << 10, 64 << 20}[pick(3)];
  o.echo = gpufeed::EchoOptions::parse(std::vector<const char*>{"1", "2", "auto:2"}[pick(3)]);
  if (s.jpeg) {
    o.image.height = 16;
    o.image.width = 16;
    o.on_error = gpufeed::OnError::skip;
    o.image.augment = std::vector<gpufeed::Augment>{gpufeed::Augment::none, gpufeed::Augment::flip,
                                                    gpufeed::Augment::crop_flip}[pick(3)];
  } else if (pick(2) == 0) {
    o.image.augment = gpufeed::Augment::flip;
  }
  s.describe = std::string(s.jpeg ? "jpeg" : "raw") + " workers " + o.resources.workers.str() +
               " prefetch " + o.resources.prefetch.str() + " batch " +
               std::to_string(o.sampling.batch_size) + " cache " +
               std::to_string(o.storage.cache_bytes) + " echo " + o.echo.to_string() + " seed " +
               std::to_string(o.sampling.seed);
  return s;
}

/// Checks a finished epoch's fresh sample indices; returns a problem or "".
std::string check_epoch(const Setting& s, const std::vector<std::uint64_t>& seen,
                        std::uint64_t skipped, std::uint64_t expected_samples) {
  const std::uint64_t n = s.jpeg ? kJpegSamples : kRawSamples;
  if (seen.size() != expected_samples) {
    return "delivered " + std::to_string(seen.size()) + " samples, expected " +
           std::to_string(expected_samples);
  }
  std::vector<std::uint32_t> count(n, 0);
  for (std::uint64_t i : seen) {
    if (i >= n) return "sample index " + std::to_string(i) + " out of range";
    ++count[i];
  }
  std::uint64_t extra = 0, missing = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const bool broken = s.jpeg && i % kBrokenEvery == 0;
    if (broken && count[i] != 0) return "broken sample " + std::to_string(i) + " delivered";
    if (count[i] > 1) extra += count[i] - 1;
    if (!broken && count[i] == 0) ++missing;
  }
  // drop_last drops up to batch_size - 1 samples of the epoch's tail.
  if (!s.options.sampling.drop_last && missing != 0) {
    return std::to_string(missing) + " samples never delivered";
  }
  if (!s.jpeg && extra != 0) return std::to_string(extra) + " samples delivered twice";
  if (s.jpeg && extra > skipped) {
    return std::to_string(extra) + " repeats for " + std::to_string(skipped) + " skipped samples";
  }
  return "";
}

void run_one_loader(std::mt19937_64& rng, const Setting& s, Totals& t) {
  Loader loader(s.options);
  ++t.loaders;
  const std::uint64_t epochs = 1 + rng() % 3;
  std::optional<Batch> held;  // a consumer that keeps the previous batch while asking
  for (std::uint64_t e = 0; e < epochs; ++e) {
    const bool cancel = rng() % 3 == 0;
    const std::uint64_t cancel_after = rng() % (loader.batches_per_epoch() + 1);
    const std::uint64_t skipped_before = loader.stats().skipped_samples;
    loader.start_epoch(e);
    std::vector<std::uint64_t> seen;
    std::uint64_t batches = 0;
    bool cancelled = false;
    for (;;) {
      Batch b = loader.next();  // with at most `held` kept meanwhile: one slot of prefetch + 1
      if (!b) break;
      ++batches;
      ++t.batches;
      t.samples += b.size();
      if (b.echoed()) {
        ++t.echoed;
      } else {
        seen.insert(seen.end(), b.sample_indices().begin(), b.sample_indices().end());
        if (!s.jpeg && s.options.image.augment == gpufeed::Augment::none &&
            b.raw()[0] != pixel(b.sample_indices()[0], 0)) {
          t.problems.push_back(s.describe + ": wrong pixels for sample " +
                               std::to_string(b.sample_indices()[0]));
        }
      }
      if (rng() % 4 == 0) {
        held = std::move(b);
      }
      if (cancel && batches >= cancel_after) {
        cancelled = true;
        break;
      }
    }
    held.reset();
    if (cancelled) {
      ++t.epochs_cancelled;
      if (rng() % 2 == 0) return;  // destroy the loader mid-epoch
      continue;                    // or start the next epoch over this one
    }
    ++t.epochs_completed;
    const std::uint64_t skipped = loader.stats().skipped_samples - skipped_before;
    t.skipped += skipped;
    const std::uint64_t share = s.jpeg ? kJpegSamples : kRawSamples;
    const std::uint64_t b = s.options.sampling.batch_size;
    const std::uint64_t expected = s.options.sampling.drop_last ? share / b * b : share;
    const std::string problem = check_epoch(s, seen, skipped, expected);
    if (!problem.empty())
      t.problems.push_back(s.describe + " epoch " + std::to_string(e) + ": " + problem);
  }
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  std::uint64_t seed = 1;
  std::string dir_arg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--dir" && i + 1 < argc) {
      dir_arg = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_soak [--seconds S] [--seed N] [--dir DIR]\n");
      return 2;
    }
  }
  const fs::path base = dir_arg.empty() ? fs::temp_directory_path() : fs::path(dir_arg);
  std::string tmpl = (base / "gpufeed-soak.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "bench_soak: cannot create a directory in %s\n", base.c_str());
    return 1;
  }
  const fs::path dir = tmpl;
  const std::string raw = (dir / "raw.h5").string(), jpeg = (dir / "jpeg.h5").string();
  Totals t;
  int status = 0;
  std::vector<std::uint64_t> rss_per_minute;
  try {
    write_raw(raw);
    write_jpeg(jpeg);
    std::mt19937_64 rng(seed);
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    std::uint64_t rss_after_warmup = 0, rss_peak_after_warmup = 0, rss_last = 0;
    const auto warmup = start + std::chrono::duration<double>(std::min(60.0, seconds / 5));
    auto next_minute = start + std::chrono::minutes(1);
    std::printf("%8s %8s %10s %10s %10s %8s  %s\n", "minute", "loaders", "epochs", "cancelled",
                "batches", "RSS MB", "problems");
    while (Clock::now() < end) {
      const Setting s = draw(rng, raw, jpeg);
      try {
        run_one_loader(rng, s, t);
      } catch (const std::exception& e) {
        ++t.failures;
        t.problems.push_back(s.describe + ": " + e.what());
      }
      rss_last = rss_bytes();
      const auto now = Clock::now();
      if (now >= warmup) {
        if (rss_after_warmup == 0) rss_after_warmup = rss_last;
        rss_peak_after_warmup = std::max(rss_peak_after_warmup, rss_last);
      }
      if (now >= next_minute || now >= end) {
        rss_per_minute.push_back(rss_last);
        std::printf("%8zu %8llu %10llu %10llu %10llu %8.1f  %zu\n", rss_per_minute.size(),
                    static_cast<unsigned long long>(t.loaders),
                    static_cast<unsigned long long>(t.epochs_completed),
                    static_cast<unsigned long long>(t.epochs_cancelled),
                    static_cast<unsigned long long>(t.batches), static_cast<double>(rss_last) / 1e6,
                    t.problems.size());
        std::fflush(stdout);
        next_minute += std::chrono::minutes(1);
      }
    }
    // Flat: after the warm-up, RSS never exceeds the first post-warm-up figure by more than
    // 5% + 16 MB (allocator noise); a leak of a batch or a chunk per loader would.
    const double limit = static_cast<double>(rss_after_warmup) * 1.05 + 16e6;
    const bool flat = static_cast<double>(rss_peak_after_warmup) <= limit;
    for (const std::string& p : t.problems) std::printf("problem: %s\n", p.c_str());
    if (!flat || !t.problems.empty()) status = 1;
    nlohmann::json out;
    out["seconds"] = seconds;
    out["seed"] = seed;
    out["loaders"] = t.loaders;
    out["epochs_completed"] = t.epochs_completed;
    out["epochs_cancelled"] = t.epochs_cancelled;
    out["batches"] = t.batches;
    out["echoed_batches"] = t.echoed;
    out["samples"] = t.samples;
    out["skipped_samples"] = t.skipped;
    out["loader_errors"] = t.failures;
    out["problems"] = t.problems.size();
    out["rss_after_warmup_bytes"] = rss_after_warmup;
    out["rss_peak_after_warmup_bytes"] = rss_peak_after_warmup;
    out["rss_last_bytes"] = rss_last;
    out["rss_flat"] = flat;
    out["exactly_once"] = t.problems.empty();
    std::printf("%s\n", out.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_soak: %s\n", e.what());
    status = 1;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
