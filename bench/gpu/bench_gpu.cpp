// GPU bandwidth of the staging path, each figure next to its physical reference measured in
// the same run (bench/gpu/README.md):
//   - the normalize kernel, uint8 224x224x3 batches of 256 to float32 / float16 / bfloat16, for
//     each layout pair and with and without crop-flip (from 256x256), in bytes read + written per
//     second, against a device-to-device cudaMemcpyAsync moving as many bytes; target >= 0.80;
//   - host-to-device batch copies through the loader's own staging (CudaStaging: its pinned
//     slots, copy stream, events and reclaim waits, the normalize kernel overlapping on its
//     compute stream) against plain cudaMemcpyAsync from one pinned buffer of the same size;
//     target >= 0.90.
// Kernel and copy times come from CUDA events, kernel and copy alternating over rounds, each
// figure the median of the rounds; the staged copies are timed on the host from the first submit
// to the last reclaim, as the loader sees them. `--json FILE` writes the figures.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"
#include "cuda/normalize_plan.hpp"
#include "cuda/staging.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/normalize_spec.hpp"
#include "slot_pool.hpp"

namespace {

using gpufeed::DType;
using gpufeed::formats::Layout;
using gpufeed::pipeline::CudaEvent;
using gpufeed::pipeline::device_alloc;
using gpufeed::pipeline::DeviceMemory;
using gpufeed::pipeline::make_event;
using gpufeed::pipeline::NormalizeSpec;
using nlohmann::json;

constexpr std::uint32_t kBatch = 256;
constexpr int kWarmup = 3;
constexpr int kRepeats = 20;
constexpr int kRounds = 5;  ///< normalize: kernel and copy timed alternately, medians reported
constexpr double kNormalizeTarget = 0.80;
constexpr double kCopyTarget = 0.90;

/// Seconds per call of `enqueue` on `stream`, from events around kRepeats calls.
template <typename F>
double time_on_stream(cudaStream_t stream, F&& enqueue) {
  for (int i = 0; i < kWarmup; ++i) enqueue();
  const CudaEvent start = make_event(), stop = make_event();
  GPUFEED_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < kRepeats; ++i) enqueue();
  GPUFEED_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  GPUFEED_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  GPUFEED_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3 / kRepeats;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double gbps(double bytes, double seconds) {
  return bytes / seconds * 1e-9;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> out(n);
  std::mt19937 rng(seed);
  for (auto& x : out) x = static_cast<std::uint8_t>(rng());
  return out;
}

NormalizeSpec imagenet_spec(std::uint32_t in_side, std::uint32_t out_side, Layout in_layout,
                            Layout out_layout, DType dtype) {
  NormalizeSpec spec;
  spec.in = {in_side, in_side, 3, in_layout};
  spec.out_height = spec.out_width = out_side;
  spec.out_layout = out_layout;
  spec.dtype = dtype;
  const float mean[3] = {123.675f, 116.28f, 103.53f}, sd[3] = {58.395f, 57.12f, 57.375f};
  spec.params = gpufeed::pipeline::NormalizeParams::make(mean, sd, 3);
  return spec;
}

const char* layout_name(Layout l) {
  return l == Layout::nchw ? "nchw" : "nhwc";
}

/// A batch of random samples on the device, an output buffer, and for crop-flip random windows
/// and flips.
struct NormalizeBuffers {
  DeviceMemory in, out, augments;
};

NormalizeBuffers normalize_buffers(const NormalizeSpec& spec, bool crop_flip) {
  const std::size_t in_bytes = std::size_t{kBatch} * spec.in.bytes();
  NormalizeBuffers d{
      device_alloc(in_bytes), device_alloc(std::size_t{kBatch} * spec.out_bytes()), {}};
  const std::vector<std::uint8_t> host = random_bytes(in_bytes, 1);
  GPUFEED_CUDA_CHECK(cudaMemcpy(d.in.get(), host.data(), in_bytes, cudaMemcpyHostToDevice));
  if (crop_flip) {
    std::vector<gpufeed::pipeline::SampleAugment> a(kBatch);
    std::mt19937 rng(3);
    const std::uint32_t slack = spec.in.height - spec.out_height + 1;
    for (auto& s : a)
      s = {static_cast<std::uint32_t>(rng() % slack), static_cast<std::uint32_t>(rng() % slack),
           static_cast<std::uint32_t>(rng() % 2)};
    d.augments = device_alloc(a.size() * sizeof(a[0]));
    GPUFEED_CUDA_CHECK(
        cudaMemcpy(d.augments.get(), a.data(), a.size() * sizeof(a[0]), cudaMemcpyHostToDevice));
  }
  return d;
}

/// Medians over kRounds rounds of the seconds per call of `launch` and of a device-to-device
/// copy moving `moved` bytes (a copy of half of them reads and writes them all), and of the
/// rounds' ratios; the two alternate, so that a drift in clocks shows in both.
template <typename F>
std::array<double, 3> time_against_copy(std::size_t moved, cudaStream_t stream, F&& launch) {
  const DeviceMemory a = device_alloc(moved / 2), b = device_alloc(moved / 2);
  std::vector<double> kernel, copy, ratio;
  for (int round = 0; round < kRounds; ++round) {
    kernel.push_back(time_on_stream(stream, launch));
    copy.push_back(time_on_stream(stream, [&] {
      GPUFEED_CUDA_CHECK(
          cudaMemcpyAsync(b.get(), a.get(), moved / 2, cudaMemcpyDeviceToDevice, stream));
    }));
    ratio.push_back(copy.back() / kernel.back());
  }
  return {median(kernel), median(copy), median(ratio)};
}

std::string case_name(const NormalizeSpec& spec, bool crop_flip) {
  return std::to_string(spec.in.height) + "x" + std::to_string(spec.in.width) + "x3 " +
         layout_name(spec.in.layout) + " -> " + std::to_string(spec.out_height) + "x" +
         std::to_string(spec.out_width) + " " + layout_name(spec.out_layout) + " " +
         gpufeed::to_string(spec.dtype) + (crop_flip ? " crop-flip" : "");
}

/// One normalize case: kernel bytes/s (crop window read + output written) against a d2d copy
/// of as many bytes.
json bench_normalize(const NormalizeSpec& spec, bool crop_flip, cudaStream_t stream) {
  const NormalizeBuffers d = normalize_buffers(spec, crop_flip);
  // `stream` does not wait for the legacy stream the copies above ran on.
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());
  const auto* in = static_cast<const std::uint8_t*>(d.in.get());
  const auto* augments = static_cast<const gpufeed::pipeline::SampleAugment*>(d.augments.get());
  const std::size_t moved = kBatch * (spec.out_elements() + spec.out_bytes());
  const auto [kernel_s, copy_s, ratio] = time_against_copy(moved, stream, [&] {
    gpufeed::pipeline::launch_normalize(spec, in, kBatch, augments, d.out.get(), stream);
  });
  // Which kernel the launches took (normalize_plan.cpp), for reading the figure.
  const char* kernel =
      gpufeed::pipeline::normalize_device::plan_launch(
          gpufeed::pipeline::normalize_kernel_args(spec), in, kBatch, augments, d.out.get(), 1)
              .elementwise
          ? "elementwise"
          : "rows";
  const std::string name = case_name(spec, crop_flip);
  const double kernel_gbps = gbps(static_cast<double>(moved), kernel_s);
  const double copy_gbps = gbps(static_cast<double>(moved), copy_s);
  std::printf("normalize %-46s %-11s %8.1f us %7.1f GB/s | d2d copy %7.1f GB/s | ratio %.2f %s\n",
              name.c_str(), kernel, kernel_s * 1e6, kernel_gbps, copy_gbps, ratio,
              ratio >= kNormalizeTarget ? "ok" : "BELOW TARGET");
  return {{"case", name},          {"kernel", kernel},
          {"rounds", kRounds},     {"kernel_us", kernel_s * 1e6},
          {"bytes_moved", moved},  {"kernel_gbps", kernel_gbps},
          {"d2d_gbps", copy_gbps}, {"ratio", ratio}};
}

/// Batches of 256 x 224x224x3 uint8 through CudaStaging's slots (copy + labels on its copy
/// stream, normalize to bfloat16 on its compute stream), against plain pinned copies.
json bench_staged_h2d() {
  constexpr std::uint32_t kSlots = 4;
  constexpr int kBatches = 48;
  const NormalizeSpec spec = imagenet_spec(224, 224, Layout::nhwc, Layout::nchw, DType::bfloat16);
  gpufeed::pipeline::detail::CudaStaging staging(0, spec, kBatch);
  const gpufeed::pipeline::detail::SlotFormat format{gpufeed::Device::cuda(0), spec.dtype,
                                                     spec.out_layout, spec.in};
  gpufeed::pipeline::detail::SlotPool pool(
      format, kSlots, kBatch, spec.in.bytes(), 0,
      [&](std::uint64_t n) { return staging.allocate_host(n); });
  const std::size_t bytes = std::size_t{kBatch} * spec.in.bytes();
  const std::vector<std::uint8_t> fill = random_bytes(bytes, 2);
  for (const auto& slot : pool.slots()) {
    staging.attach(*slot);
    std::memcpy(slot->raw.get(), fill.data(), bytes);
    slot->count = kBatch;
  }
  gpufeed::pipeline::StageCounters counters;
  auto run = [&](int batches) {
    for (int i = 0; i < batches; ++i) {
      gpufeed::pipeline::detail::Slot& slot = *pool.slots()[static_cast<std::size_t>(i) % kSlots];
      staging.reclaim(slot, counters);  // the wait the loader's workers do before reusing a slot
      staging.submit(slot);
    }
    for (const auto& slot : pool.slots()) staging.reclaim(*slot, counters);
  };
  run(kSlots * 2);  // warm-up
  counters.reset();
  auto t0 = std::chrono::steady_clock::now();
  run(kBatches);
  const double staged_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kBatches;
  const double copy_event_s =
      static_cast<double>(counters.busy_ns[static_cast<std::size_t>(gpufeed::Stage::h2d)]) * 1e-9 /
      kBatches;

  // The reference: cudaMemcpyAsync of the same bytes from one pinned buffer, back to back.
  void* raw = nullptr;
  GPUFEED_CUDA_CHECK(cudaHostAlloc(&raw, bytes, cudaHostAllocDefault));
  const gpufeed::pipeline::PinnedMemory host(raw);
  std::memcpy(host.get(), fill.data(), bytes);
  const DeviceMemory device = device_alloc(bytes);
  const gpufeed::pipeline::CudaStream stream_owner = gpufeed::pipeline::make_stream();
  cudaStream_t stream = stream_owner.get();
  auto plain = [&](int copies) {
    for (int i = 0; i < copies; ++i) {
      GPUFEED_CUDA_CHECK(
          cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream));
    }
    GPUFEED_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  plain(kWarmup);
  t0 = std::chrono::steady_clock::now();
  plain(kBatches);
  const double plain_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kBatches;
  const double ratio = plain_s / staged_s;
  const gpufeed::pipeline::detail::StagingStats stats = staging.stats();
  std::printf(
      "h2d %ux224x224x3 uint8 through the loader's slots %7.1f GB/s (copy alone %7.1f GB/s) | "
      "plain pinned cudaMemcpyAsync %7.1f GB/s | ratio %.2f %s\n",
      kBatch, gbps(static_cast<double>(bytes), staged_s),
      gbps(static_cast<double>(bytes), copy_event_s), gbps(static_cast<double>(bytes), plain_s),
      ratio, ratio >= kCopyTarget ? "ok" : "BELOW TARGET");
  std::printf(
      "h2d at start (CudaStaging): pinned %.1f GB/s, pageable %.1f GB/s, pageable/pinned "
      "%.2f; slots pinned: %s\n",
      stats.pinned_h2d_bytes_per_s * 1e-9, stats.pageable_h2d_bytes_per_s * 1e-9,
      stats.pageable_h2d_bytes_per_s / stats.pinned_h2d_bytes_per_s, stats.pinned ? "yes" : "no");
  return {{"batch_bytes", bytes},
          {"staged_gbps", gbps(static_cast<double>(bytes), staged_s)},
          {"staged_copy_only_gbps", gbps(static_cast<double>(bytes), copy_event_s)},
          {"plain_gbps", gbps(static_cast<double>(bytes), plain_s)},
          {"ratio", ratio},
          {"slots_pinned", stats.pinned},
          {"pinned_gbps_at_start", stats.pinned_h2d_bytes_per_s * 1e-9},
          {"pageable_gbps_at_start", stats.pageable_h2d_bytes_per_s * 1e-9}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  if (argc == 3 && std::strcmp(argv[1], "--json") == 0) {
    json_path = argv[2];
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: bench_gpu [--json FILE]\n");
    return 2;
  }
  if (gpufeed::pipeline::cuda_device_count() == 0) {
    std::printf("no CUDA device: not measured\n");
    return 0;
  }
  try {
    json out;
    out["device"] = gpufeed::pipeline::describe_device("cuda:0");
    std::printf("device: %s\n", out["device"].get<std::string>().c_str());
    GPUFEED_CUDA_CHECK(cudaSetDevice(0));
    const gpufeed::pipeline::CudaStream stream = gpufeed::pipeline::make_stream();
    json cases = json::array();
    double worst = 1e30;
    std::string worst_case;
    const std::pair<Layout, Layout> layouts[] = {
        {Layout::nhwc, Layout::nchw}, {Layout::nhwc, Layout::nhwc}, {Layout::nchw, Layout::nchw}};
    for (const auto& [in_layout, out_layout] : layouts) {
      for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
        for (const bool crop_flip : {false, true}) {
          const NormalizeSpec spec =
              imagenet_spec(crop_flip ? 256 : 224, 224, in_layout, out_layout, dtype);
          json c = bench_normalize(spec, crop_flip, stream.get());
          if (c["ratio"].get<double>() < worst) {
            worst = c["ratio"].get<double>();
            worst_case = c["case"].get<std::string>();
          }
          cases.push_back(std::move(c));
        }
      }
    }
    std::printf("normalize worst case: %s, ratio %.2f (target >= %.2f) %s\n", worst_case.c_str(),
                worst, kNormalizeTarget, worst >= kNormalizeTarget ? "met" : "MISSED");
    out["normalize"] = {{"cases", cases}, {"worst_ratio", worst}, {"worst_case", worst_case}};
    out["h2d"] = bench_staged_h2d();
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << out.dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write " + json_path);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
