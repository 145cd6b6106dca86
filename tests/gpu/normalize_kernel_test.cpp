// The CUDA normalize kernels against normalize_reference() on random data, with poisoned output
// buffers and guard bytes around them. Skipped without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/normalize_spec.hpp"
#include "normalize_expect.hpp"

namespace gpufeed::pipeline {
namespace {

using formats::Layout;
using testing::expect_matches;
using testing::make_normalize_spec;

constexpr std::size_t kGuard = 256;  // poisoned bytes after (and, when offset, before) outputs

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU test not run";
  }
};

struct RunOptions {
  std::size_t in_offset = 0;   ///< bytes; nonzero misaligns the input
  std::size_t out_offset = 0;  ///< bytes; nonzero misaligns the output
  std::uint32_t max_launch_elements = 0x7FFFFFFFu;
};

/// Runs the kernel on random input (poisoned output) and compares with the reference.
void run_and_compare(const NormalizeSpec& spec, std::uint32_t count,
                     const std::vector<SampleAugment>& augments, std::uint32_t seed,
                     const RunOptions& options = {}) {
  const std::vector<std::uint8_t> in = testing::random_samples(spec, count, seed);
  const std::size_t out_bytes = count * spec.out_bytes();
  const DeviceMemory in_d = device_alloc(in.size() + options.in_offset + 1);
  const DeviceMemory out_d = device_alloc(options.out_offset + out_bytes + kGuard);
  DeviceMemory aug_d;
  if (!augments.empty()) aug_d = device_alloc(augments.size() * sizeof(SampleAugment));
  const CudaStream stream = make_stream();
  auto* in_ptr = static_cast<std::uint8_t*>(in_d.get()) + options.in_offset;
  GPUFEED_CUDA_CHECK(cudaMemcpy(in_ptr, in.data(), in.size(), cudaMemcpyHostToDevice));
  GPUFEED_CUDA_CHECK(cudaMemset(out_d.get(), 0xFF, options.out_offset + out_bytes + kGuard));
  if (aug_d) {
    GPUFEED_CUDA_CHECK(cudaMemcpy(aug_d.get(), augments.data(),
                                  augments.size() * sizeof(SampleAugment), cudaMemcpyHostToDevice));
  }
  // The kernel's stream does not wait for the legacy stream, on which the copies and the
  // poisoning above are queued (a pageable copy can return before its data has landed).
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());
  NormalizeKernelArgs args = normalize_kernel_args(spec);
  args.max_launch_elements = options.max_launch_elements;
  launch_normalize(args, in_ptr, count, static_cast<const SampleAugment*>(aug_d.get()),
                   static_cast<unsigned char*>(out_d.get()) + options.out_offset, stream.get());
  GPUFEED_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::vector<unsigned char> got(options.out_offset + out_bytes + kGuard);
  GPUFEED_CUDA_CHECK(cudaMemcpy(got.data(), out_d.get(), got.size(), cudaMemcpyDeviceToHost));
  expect_matches(spec, count, in, augments.empty() ? nullptr : augments.data(), got,
                 options.out_offset);
}

class NormalizeKernel : public GpuTest,
                        public ::testing::WithParamInterface<testing::NormalizeParam> {};

TEST_P(NormalizeKernel, MatchesTheReference) {
  const NormalizeSpec spec = testing::normalize_param_spec(GetParam());
  const std::uint32_t count = 5, seed = spec.in.height * 31 + spec.in.width;
  run_and_compare(spec, count, testing::augments_for(spec, count, std::get<4>(GetParam()), seed),
                  seed);
}

INSTANTIATE_TEST_SUITE_P(All, NormalizeKernel, testing::normalize_params(),
                         testing::normalize_param_name);

TEST_F(GpuTest, UnalignedBuffersAreConverted) {
  testing::for_every_case({13, 11, 3}, 3, [](const NormalizeSpec& spec, const auto& augments) {
    for (const std::size_t in_offset : {1, 3, 8}) {
      for (const std::size_t out_elements : {0, 1, 3}) {
        RunOptions misaligned;
        misaligned.in_offset = in_offset;
        misaligned.out_offset = out_elements * dtype_size(spec.dtype);
        run_and_compare(spec, 3, augments, 5, misaligned);
      }
    }
  });
}

TEST_F(GpuTest, LargeBatchesAreSplitIntoLaunches) {
  testing::for_every_case({32, 32, 3}, 7, [](const NormalizeSpec& spec, const auto& augments) {
    RunOptions small;
    small.max_launch_elements = static_cast<std::uint32_t>(3 * spec.in.bytes() + 5);
    run_and_compare(spec, 7, augments, 10, small);  // launches of 3, 3 and 1 samples
  });
}

TEST_F(GpuTest, OutOfRangeCropsAreClamped) {
  const NormalizeSpec spec =
      make_normalize_spec({9, 9, 4, Layout::nhwc}, true, Layout::nchw, DType::float32);
  std::vector<std::uint8_t> in(spec.in.bytes());
  std::mt19937 rng(3);
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  const SampleAugment wild{1000, 1000, 7};
  const SampleAugment clamped{spec.in.height - spec.out_height, spec.in.width - spec.out_width, 1};
  const DeviceMemory in_d = device_alloc(in.size());
  const DeviceMemory aug_d = device_alloc(sizeof wild);
  const DeviceMemory out_d = device_alloc(spec.out_bytes() + kGuard);
  GPUFEED_CUDA_CHECK(cudaMemcpy(in_d.get(), in.data(), in.size(), cudaMemcpyHostToDevice));
  GPUFEED_CUDA_CHECK(cudaMemcpy(aug_d.get(), &wild, sizeof wild, cudaMemcpyHostToDevice));
  GPUFEED_CUDA_CHECK(cudaMemset(out_d.get(), 0xFF, spec.out_bytes() + kGuard));
  launch_normalize(spec, static_cast<const std::uint8_t*>(in_d.get()), 1,
                   static_cast<const SampleAugment*>(aug_d.get()), out_d.get(), nullptr);
  std::vector<unsigned char> got(spec.out_bytes() + kGuard);
  GPUFEED_CUDA_CHECK(cudaMemcpy(got.data(), out_d.get(), got.size(), cudaMemcpyDeviceToHost));
  expect_matches(spec, 1, in, &clamped, got, 0);
}

TEST_F(GpuTest, ConcurrentLaunchesKeepTheirOwnConstants) {
  // Two streams, different means and dtypes, in flight together: constants travel by value.
  NormalizeSpec a =
      make_normalize_spec({64, 64, 3, Layout::nhwc}, false, Layout::nchw, DType::float32);
  NormalizeSpec b =
      make_normalize_spec({64, 64, 3, Layout::nhwc}, false, Layout::nchw, DType::float16);
  const std::vector<float> other_mean{10.0f, 20.0f, 30.0f}, other_sd{2.0f, 3.0f, 4.0f};
  b.params = NormalizeParams::make(other_mean, other_sd, 3);
  const std::uint32_t count = 64;
  std::vector<std::uint8_t> in(count * a.in.bytes());
  std::mt19937 rng(4);
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  const DeviceMemory in_d = device_alloc(in.size());
  const DeviceMemory out_a = device_alloc(count * a.out_bytes() + kGuard);
  const DeviceMemory out_b = device_alloc(count * b.out_bytes() + kGuard);
  GPUFEED_CUDA_CHECK(cudaMemcpy(in_d.get(), in.data(), in.size(), cudaMemcpyHostToDevice));
  GPUFEED_CUDA_CHECK(cudaMemset(out_a.get(), 0xFF, count * a.out_bytes() + kGuard));
  GPUFEED_CUDA_CHECK(cudaMemset(out_b.get(), 0xFF, count * b.out_bytes() + kGuard));
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());  // s1 and s2 do not wait for the legacy stream
  const CudaStream s1 = make_stream(), s2 = make_stream();
  const auto* src = static_cast<const std::uint8_t*>(in_d.get());
  for (int repeat = 0; repeat < 4; ++repeat) {
    launch_normalize(a, src, count, nullptr, out_a.get(), s1.get());
    launch_normalize(b, src, count, nullptr, out_b.get(), s2.get());
  }
  GPUFEED_CUDA_CHECK(cudaStreamSynchronize(s1.get()));
  GPUFEED_CUDA_CHECK(cudaStreamSynchronize(s2.get()));
  for (const NormalizeSpec* spec : {&a, &b}) {
    const DeviceMemory& out = spec == &a ? out_a : out_b;
    std::vector<unsigned char> got(count * spec->out_bytes() + kGuard);
    GPUFEED_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost));
    expect_matches(*spec, count, in, nullptr, got, 0);
  }
}

TEST_F(GpuTest, EmptyBatchLaunchesNothing) {
  const NormalizeSpec spec =
      make_normalize_spec({7, 5, 3, Layout::nhwc}, false, Layout::nchw, DType::float32);
  // Null buffers: a launch for zero samples must not touch memory at all.
  EXPECT_NO_THROW(launch_normalize(spec, nullptr, 0, nullptr, nullptr, nullptr));
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // Valid buffers for one sample, the output poisoned: zero samples leave every byte as it was.
  std::vector<std::uint8_t> in(spec.in.bytes());
  std::mt19937 rng(5);
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  const std::size_t out_bytes = spec.out_bytes() + kGuard;
  const DeviceMemory in_d = device_alloc(in.size());
  const DeviceMemory out_d = device_alloc(out_bytes);
  GPUFEED_CUDA_CHECK(cudaMemcpy(in_d.get(), in.data(), in.size(), cudaMemcpyHostToDevice));
  GPUFEED_CUDA_CHECK(cudaMemset(out_d.get(), 0xA5, out_bytes));
  // The stream below does not wait for the legacy stream: the poison must be in place first.
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());
  const CudaStream stream = make_stream();
  EXPECT_NO_THROW(launch_normalize(spec, static_cast<const std::uint8_t*>(in_d.get()), 0, nullptr,
                                   out_d.get(), stream.get()));
  EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<unsigned char> got(out_bytes);
  GPUFEED_CUDA_CHECK(cudaMemcpy(got.data(), out_d.get(), got.size(), cudaMemcpyDeviceToHost));
  const auto changed =
      std::find_if(got.begin(), got.end(), [](unsigned char b) { return b != 0xA5; });
  EXPECT_EQ(changed, got.end()) << "byte " << (changed - got.begin()) << " written";
}

}  // namespace
}  // namespace gpufeed::pipeline
