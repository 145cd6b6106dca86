// GPU bandwidth of the staging path, each figure next to its physical reference measured in
// the same run:
//   - the normalize kernel (uint8 NHWC -> NCHW float32 / bfloat16, batches of 256 x 64x64x3
//     and 256 x 224x224x3) against a device-to-device cudaMemcpyAsync moving the same number of
//     bytes (read + written); target >= 80%;
//   - H2D of a pinned 256 x 64x64x3 uint8 batch with cudaMemcpyAsync on a copy stream (an event
//     per batch, as the pipeline does) against plain pinned cudaMemcpy of the same size; target
//     >= 90%.
// Kernel and copy times come from CUDA events, averaged over the timed repeats.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"
#include "gpufeed/pipeline/device.hpp"

namespace {

using gpufeed::CudaEvent;
using gpufeed::CudaStream;
using gpufeed::DeviceMemory;
using gpufeed::DType;
using gpufeed::PinnedMemory;

constexpr std::uint32_t kBatch = 256;
constexpr int kWarmup = 3;
constexpr int kRepeats = 20;

DeviceMemory device_alloc(std::size_t bytes) {
  void* p = nullptr;
  GPUFEED_CUDA_CHECK(cudaMalloc(&p, bytes));
  return DeviceMemory(p);
}

CudaEvent make_event() {
  cudaEvent_t e = nullptr;
  GPUFEED_CUDA_CHECK(cudaEventCreate(&e));
  return CudaEvent(e);
}

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

double gbps(double bytes, double seconds) {
  return bytes / seconds * 1e-9;
}

void bench_normalize(std::uint32_t side, DType dtype, cudaStream_t stream) {
  gpufeed::NormalizeKernelArgs args;
  args.in_height = args.out_height = side;
  args.in_width = args.out_width = side;
  args.channels = 3;
  args.in_nchw = false;
  args.out_nchw = true;
  args.dtype = dtype;
  const float mean[3] = {123.675f, 116.28f, 103.53f}, sd[3] = {58.395f, 57.12f, 57.375f};
  for (int c = 0; c < 3; ++c) {
    args.mean[c] = mean[c];
    args.inv_std[c] = 1.0f / sd[c];
  }
  const std::size_t in_bytes = std::size_t{kBatch} * side * side * 3;
  const std::size_t out_bytes = in_bytes * gpufeed::dtype_size(dtype);
  std::vector<std::uint8_t> host(in_bytes);
  std::mt19937 rng(1);
  for (auto& x : host) x = static_cast<std::uint8_t>(rng());
  const DeviceMemory in = device_alloc(in_bytes), out = device_alloc(out_bytes);
  GPUFEED_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in_bytes, cudaMemcpyHostToDevice));
  const double kernel_s = time_on_stream(stream, [&] {
    gpufeed::launch_normalize(args, static_cast<const std::uint8_t*>(in.get()), kBatch, nullptr,
                              out.get(), stream);
  });
  // A copy of half the moved bytes reads and writes as many bytes as the kernel.
  const std::size_t moved = in_bytes + out_bytes;
  const DeviceMemory a = device_alloc(moved / 2), b = device_alloc(moved / 2);
  const double copy_s = time_on_stream(stream, [&] {
    GPUFEED_CUDA_CHECK(
        cudaMemcpyAsync(b.get(), a.get(), moved / 2, cudaMemcpyDeviceToDevice, stream));
  });
  const double ratio = copy_s / kernel_s;
  std::printf(
      "normalize %ux%ux%ux3 nhwc->nchw %-8s %8.1f us %7.1f GB/s (read+written) | d2d copy "
      "%7.1f GB/s | ratio %.2f (target >= 0.80) %s\n",
      kBatch, side, side, gpufeed::to_string(dtype).c_str(), kernel_s * 1e6,
      gbps(static_cast<double>(moved), kernel_s), gbps(static_cast<double>(moved), copy_s), ratio,
      ratio >= 0.8 ? "ok" : "BELOW TARGET");
}

void bench_h2d(cudaStream_t copy_stream) {
  const std::size_t bytes = std::size_t{kBatch} * 64 * 64 * 3;
  constexpr int kSlots = 4;
  void* raw = nullptr;
  GPUFEED_CUDA_CHECK(cudaHostAlloc(&raw, bytes * kSlots, cudaHostAllocDefault));
  const PinnedMemory host(raw);
  std::vector<std::uint8_t> fill(bytes * kSlots);
  std::mt19937 rng(2);
  for (auto& x : fill) x = static_cast<std::uint8_t>(rng());
  std::copy(fill.begin(), fill.end(), static_cast<std::uint8_t*>(host.get()));
  const DeviceMemory device = device_alloc(bytes * kSlots);
  std::vector<CudaEvent> done;
  for (int i = 0; i < kSlots; ++i) done.push_back(make_event());
  int next = 0;
  // The staging pattern: one batch per slot, an event recorded after each copy.
  const double staged_s = time_on_stream(copy_stream, [&] {
    const std::size_t offset = static_cast<std::size_t>(next) * bytes;
    GPUFEED_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(device.get()) + offset,
                                       static_cast<char*>(host.get()) + offset, bytes,
                                       cudaMemcpyHostToDevice, copy_stream));
    GPUFEED_CUDA_CHECK(cudaEventRecord(done[static_cast<std::size_t>(next)].get(), copy_stream));
    next = (next + 1) % kSlots;
  });
  // The plain bandwidth test: synchronous cudaMemcpy from pinned memory, host-timed.
  for (int i = 0; i < kWarmup; ++i) {
    GPUFEED_CUDA_CHECK(cudaMemcpy(device.get(), host.get(), bytes, cudaMemcpyHostToDevice));
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) {
    GPUFEED_CUDA_CHECK(cudaMemcpy(device.get(), host.get(), bytes, cudaMemcpyHostToDevice));
  }
  const double plain_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kRepeats;
  const double ratio = plain_s / staged_s;
  std::printf(
      "h2d pinned %ux64x64x3 uint8 (copy stream + events) %7.1f GB/s | plain pinned cudaMemcpy "
      "%7.1f GB/s | ratio %.2f (target >= 0.90) %s\n",
      kBatch, gbps(static_cast<double>(bytes), staged_s), gbps(static_cast<double>(bytes), plain_s),
      ratio, ratio >= 0.9 ? "ok" : "BELOW TARGET");
}

}  // namespace

int main() {
  if (gpufeed::cuda_device_count() == 0) {
    std::printf("no CUDA device: not measured\n");
    return 0;
  }
  try {
    std::printf("device: %s\n", gpufeed::describe_device("cuda:0").c_str());
    GPUFEED_CUDA_CHECK(cudaSetDevice(0));
    cudaStream_t raw = nullptr;
    GPUFEED_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const CudaStream stream(raw);
    for (const std::uint32_t side : {64u, 224u}) {
      for (const DType dtype : {DType::float32, DType::bfloat16}) {
        bench_normalize(side, dtype, stream.get());
      }
    }
    bench_h2d(stream.get());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
