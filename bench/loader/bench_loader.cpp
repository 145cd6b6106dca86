// bench_loader: the Loader end to end on a dataset file, one JSON line per run.
//
//   bench_loader --data FILE.h5 [--order random|chunk|sequential] [--workers 2] [--batch 256]
//                [--epochs 3] [--cache-mb MB] [--prefetch 4] [--seed 0] [--no-index]
//                [--max-batches N] [--device cpu]
//   bench_loader --memcpy [--memcpy-mb 256] [--repeats 5]
//
// Loader mode runs E epochs; the first is the warm-up (file and chunk cache cold, pools being
// touched) and is reported on its own; samples_per_s is the rate over the remaining epochs.
// Each batch is touched lightly (one float per 4 KiB page, its labels) as a consumer would.
// Memory: peak_rss_bytes (getrusage) with the bound's terms: slot_bytes (the batch slot pool)
// and the chunk cache budget.
//
// Memcpy mode prints the machine's memcpy bandwidth (bytes copied per second, best of N copies
// of a large buffer) on one thread and on all threads: the physical limit the loader's output
// rate is compared with.
//
// Exit codes: 0 success, 1 runtime failure, 2 usage error.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/sampler.hpp"
#include "gpufeed/pipeline/stats.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Args {
  std::string data;
  std::string order = "chunk";
  unsigned workers = 2;
  std::uint32_t batch = 256;
  std::uint64_t epochs = 3;
  std::optional<std::uint64_t> cache_mb;
  unsigned prefetch = 4;
  std::uint64_t seed = 0;
  bool no_index = false;
  std::uint64_t max_batches = 0;  // per epoch; 0: all
  std::string device = "cpu";
  bool memcpy_mode = false;
  std::uint64_t memcpy_mb = 256;
  unsigned repeats = 5;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "bench_loader: " << message
            << " (usage: bench_loader --data FILE.h5 [--order random|chunk|sequential] "
               "[--workers N] [--batch N] [--epochs E] [--cache-mb MB] | bench_loader --memcpy)\n";
  std::exit(2);
}

std::uint64_t parse_uint(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(text, &used);
    if (used != text.size() || text.front() == '-') throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    usage_error(flag + " expects a non-negative integer, got '" + text + "'");
  }
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--data")
      a.data = value();
    else if (flag == "--order")
      a.order = value();
    else if (flag == "--workers")
      a.workers = static_cast<unsigned>(parse_uint(flag, value()));
    else if (flag == "--batch")
      a.batch = static_cast<std::uint32_t>(parse_uint(flag, value()));
    else if (flag == "--epochs")
      a.epochs = parse_uint(flag, value());
    else if (flag == "--cache-mb")
      a.cache_mb = parse_uint(flag, value());
    else if (flag == "--prefetch")
      a.prefetch = static_cast<unsigned>(parse_uint(flag, value()));
    else if (flag == "--seed")
      a.seed = parse_uint(flag, value());
    else if (flag == "--no-index")
      a.no_index = true;
    else if (flag == "--max-batches")
      a.max_batches = parse_uint(flag, value());
    else if (flag == "--device")
      a.device = value();
    else if (flag == "--memcpy")
      a.memcpy_mode = true;
    else if (flag == "--memcpy-mb")
      a.memcpy_mb = parse_uint(flag, value());
    else if (flag == "--repeats")
      a.repeats = static_cast<unsigned>(parse_uint(flag, value()));
    else if (flag == "--help" || flag == "-h") {
      std::cout << "bench_loader --data FILE.h5 [--order random|chunk|sequential] [--workers 2] "
                   "[--batch 256] [--epochs 3] [--cache-mb MB] [--prefetch 4] [--seed 0] "
                   "[--no-index] [--max-batches N] [--device cpu]\n"
                   "bench_loader --memcpy [--memcpy-mb 256] [--repeats 5]\n";
      std::exit(0);
    } else {
      usage_error("unknown option '" + flag + "'");
    }
  }
  if (!a.memcpy_mode && a.data.empty()) usage_error("--data FILE.h5 is required");
  if (a.epochs == 0) usage_error("--epochs must be at least 1");
  if (a.memcpy_mb == 0 || a.repeats == 0) usage_error("--memcpy-mb and --repeats must be > 0");
  return a;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

std::uint64_t current_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "<n> kB"
  return 0;
}

// ---- memcpy bandwidth -------------------------------------------------------------------

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using Buffer = std::unique_ptr<std::uint8_t[], FreeDeleter>;

Buffer aligned_buffer(std::size_t bytes) {
  constexpr std::size_t kAlign = 4096;
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, rounded));
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(p);
}

// Best time of `repeats` copies of `bytes` from src to dst split over `threads` threads.
double best_copy_seconds(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes,
                         unsigned threads, unsigned repeats) {
  double best = 1e30;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    if (threads == 1) {
      std::memcpy(dst, src, bytes);
    } else {
      std::vector<std::thread> pool;
      const std::size_t part = (bytes / threads + 63) / 64 * 64;
      for (unsigned t = 0; t < threads; ++t) {
        const std::size_t begin = std::min(bytes, t * part);
        const std::size_t end = std::min(bytes, begin + part);
        pool.emplace_back([=] { std::memcpy(dst + begin, src + begin, end - begin); });
      }
      for (auto& th : pool) th.join();
    }
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

int run_memcpy(const Args& a) {
  const std::size_t bytes = a.memcpy_mb << 20;
  Buffer src = aligned_buffer(bytes);
  Buffer dst = aligned_buffer(bytes);
  std::memset(src.get(), 1, bytes);  // fault every page in before timing
  std::memset(dst.get(), 0, bytes);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const double one = best_copy_seconds(dst.get(), src.get(), bytes, 1, a.repeats);
  const double all = best_copy_seconds(dst.get(), src.get(), bytes, threads, a.repeats);
  const double bw_one = static_cast<double>(bytes) / one;
  const double bw_all = static_cast<double>(bytes) / all;
  json out;
  out["mode"] = "memcpy";
  out["buffer_bytes"] = bytes;
  out["repeats"] = a.repeats;
  out["threads"] = threads;
  out["memcpy_bytes_per_s_1thread"] = bw_one;
  out["memcpy_bytes_per_s_all_threads"] = bw_all;
  out["memcpy_bytes_per_s"] = std::max(bw_one, bw_all);
  std::cout << out.dump() << std::endl;
  return 0;
}

// ---- loader -------------------------------------------------------------------------------

struct EpochResult {
  std::uint64_t samples = 0;
  std::uint64_t batches = 0;
  double seconds = 0;
};

// Reads one float per 4 KiB page of the batch and its labels, as a consumer that hands the
// batch on would; the sum keeps the reads from being optimized away.
double touch(const gpufeed::Batch& batch) {
  const auto images = batch.images();
  double sum = 0;
  for (std::size_t i = 0; i < images.size(); i += 1024) sum += images[i];
  if (!images.empty()) sum += images.back();
  for (const std::int64_t label : batch.labels()) sum += static_cast<double>(label);
  return sum;
}

// Busy fraction and items of every stage that did work.
json stages_json(const gpufeed::LoaderStats& stats) {
  json stages = json::object();
  for (std::size_t s = 0; s < gpufeed::kStageCount; ++s) {
    const auto stage = static_cast<gpufeed::Stage>(s);
    if (stats[stage].items == 0 && stats[stage].busy_ns == 0) continue;
    stages[gpufeed::stage_name(stage)] = {{"busy_frac", stats.busy_fraction(stage)},
                                          {"items", stats[stage].items}};
  }
  return stages;
}

int run_loader(const Args& a) {
  gpufeed::LoaderOptions o;
  o.source.path = a.data;
  o.sampling.batch_size = a.batch;
  o.resources.workers = a.workers;
  o.resources.prefetch = a.prefetch;
  o.sampling.order = gpufeed::parse_order(a.order);
  o.sampling.seed = a.seed;
  if (a.cache_mb) o.storage.cache_bytes = *a.cache_mb << 20;
  o.source.use_index = !a.no_index;
  o.output.device = a.device;

  const std::uint64_t baseline_rss = current_rss_bytes();
  const auto t_open = Clock::now();
  gpufeed::Loader loader(o);
  const double open_seconds = seconds_since(t_open);
  const std::uint64_t rss_after_open = current_rss_bytes();

  double checksum = 0;
  std::vector<EpochResult> epochs;
  gpufeed::LoaderStats after_warmup{};
  for (std::uint64_t e = 0; e < a.epochs; ++e) {
    EpochResult r;
    const auto t0 = Clock::now();
    for (gpufeed::Batch& batch : loader.epoch(e)) {
      checksum += touch(batch);
      r.samples += batch.size();
      ++r.batches;
      if (a.max_batches != 0 && r.batches >= a.max_batches) break;
    }
    r.seconds = seconds_since(t0);
    epochs.push_back(r);
    if (e == 0) after_warmup = loader.stats();
  }
  const gpufeed::LoaderStats total = loader.stats();
  // Counters of the steady epochs: the run's totals less the warm-up epoch's.
  const gpufeed::LoaderStats steady = a.epochs > 1 ? total.since(after_warmup) : total;

  std::uint64_t steady_samples = 0;
  double steady_seconds = 0;
  for (std::size_t e = 1; e < epochs.size(); ++e) {
    steady_samples += epochs[e].samples;
    steady_seconds += epochs[e].seconds;
  }
  const double warm_rate = static_cast<double>(epochs[0].samples) / epochs[0].seconds;
  const double rate =
      epochs.size() > 1 ? static_cast<double>(steady_samples) / steady_seconds : warm_rate;

  const gpufeed::formats::Dataset& ds = loader.dataset();
  const gpufeed::formats::SampleShape shape = loader.sample_shape();
  const double out_bytes_per_sample = static_cast<double>(shape.bytes() * sizeof(float));

  json out;
  out["mode"] = "loader";
  out["data"] = a.data;
  out["order"] = gpufeed::to_string(o.sampling.order);
  out["workers"] = loader.workers();
  out["batch"] = a.batch;
  out["epochs"] = a.epochs;
  out["steady_epochs"] = a.epochs - 1;
  out["max_batches"] = a.max_batches;
  out["device"] = o.output.device.str();
  out["sample_shape"] = gpufeed::formats::to_string(shape);
  out["compression"] = ds.compression();
  out["read_path"] = ds.read_path_name();
  out["samples_per_epoch"] = loader.samples_per_epoch();
  out["samples_per_s"] = rate;
  out["warmup_samples_per_s"] = warm_rate;
  out["output_bytes_per_s"] = rate * out_bytes_per_sample;
  out["input_bytes_per_s"] = rate * static_cast<double>(shape.bytes());
  json per_epoch = json::array();
  for (const EpochResult& r : epochs)
    per_epoch.push_back({{"samples", r.samples}, {"batches", r.batches}, {"seconds", r.seconds}});
  out["epoch"] = per_epoch;
  out["open_seconds"] = open_seconds;
  out["peak_rss_bytes"] = peak_rss_bytes();
  out["baseline_rss_bytes"] = baseline_rss;
  out["rss_after_open_bytes"] = rss_after_open;
  out["slot_bytes"] = total.slot_bytes;
  out["cache_budget_bytes"] = o.storage.cache_bytes;
  out["cache_peak_bytes"] = total.cache_peak_bytes;
  out["cache_hits"] = total.cache_hits;
  out["cache_misses"] = total.cache_misses;
  out["chunk_reads"] = total.chunk_reads;
  out["bytes_read"] = total.bytes_read;
  out["stages"] = stages_json(steady);
  out["warmup_stages"] = stages_json(after_warmup);
  const auto bottleneck = steady.bottleneck();
  out["bottleneck_stage"] = bottleneck ? json(gpufeed::stage_name(*bottleneck)) : json(nullptr);
  out["checksum"] = checksum;
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return args.memcpy_mode ? run_memcpy(args) : run_loader(args);
  } catch (const gpufeed::UsageError& e) {
    std::cerr << "bench_loader: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench_loader: " << e.what() << "\n";
    return 1;
  }
}
