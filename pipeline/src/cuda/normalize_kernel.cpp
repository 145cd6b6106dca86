// Host side of the normalize kernels: argument checks, splitting a batch into launches whose
// index arithmetic fits in 32 bits, and the grid size. The kernels are in normalize_kernel.cu,
// which of them a launch runs in normalize_plan.cpp.
#include "cuda/normalize_kernel.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_device.cuh"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/normalize_spec.hpp"

namespace gpufeed::pipeline {

namespace {

void check_args(const NormalizeKernelArgs& a) {
  if (a.channels < 1 || a.channels > 4 || a.in_height == 0 || a.in_width == 0 ||
      a.out_height == 0 || a.out_width == 0 || a.out_height > a.in_height ||
      a.out_width > a.in_width || a.max_launch_elements == 0 ||
      a.max_launch_elements > 0x7FFFFFFFu) {
    throw UsageError("normalize: invalid kernel arguments (" + std::to_string(a.in_height) + "x" +
                     std::to_string(a.in_width) + "x" + std::to_string(a.channels) + " -> " +
                     std::to_string(a.out_height) + "x" + std::to_string(a.out_width) +
                     ", launch limit " + std::to_string(a.max_launch_elements) + ")");
  }
}

}  // namespace

NormalizeKernelArgs normalize_kernel_args(const NormalizeSpec& spec) {
  spec.validate();
  NormalizeKernelArgs args;
  args.in_height = spec.in.height;
  args.in_width = spec.in.width;
  args.channels = spec.in.channels;
  args.in_nchw = spec.in.layout == formats::Layout::nchw;
  args.out_height = spec.out_height;
  args.out_width = spec.out_width;
  args.out_nchw = spec.out_layout == formats::Layout::nchw;
  args.dtype = spec.dtype;
  std::copy(spec.params.mean, spec.params.mean + 4, args.mean);
  std::copy(spec.params.inv_std, spec.params.inv_std + 4, args.inv_std);
  return args;
}

namespace detail {

std::uint32_t samples_per_launch(const NormalizeKernelArgs& args) {
  check_args(args);
  const std::uint64_t in_sample = std::uint64_t{args.in_height} * args.in_width * args.channels;
  const std::uint64_t out_sample = std::uint64_t{args.out_height} * args.out_width * args.channels;
  const std::uint64_t per_launch = args.max_launch_elements / std::max(in_sample, out_sample);
  if (per_launch == 0) {
    throw UsageError("normalize: a sample of " + std::to_string(in_sample) +
                     " elements exceeds the per-launch limit of " +
                     std::to_string(args.max_launch_elements));
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(per_launch, 0xFFFFFFFFu));
}

}  // namespace detail

void launch_normalize(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                      std::uint32_t count, const SampleAugment* augment_device, void* out_device,
                      void* stream) {
  detail::samples_per_launch(args);  // invalid arguments throw even for an empty batch
  if (count == 0) return;
  int device = 0, sms = 0, threads = 0;
  GPUFEED_CUDA_CHECK(cudaGetDevice(&device));
  GPUFEED_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUFEED_CUDA_CHECK(
      cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  // As many blocks as the SMs hold at once (8 a Hopper SM): the grid is resident as a whole.
  const unsigned per_sm = std::max(static_cast<unsigned>(threads) / normalize_device::kThreads, 1u);
  const unsigned max_blocks = static_cast<unsigned>(std::max(sms, 1)) * per_sm;
  detail::for_each_launch(
      args, in_device, count, augment_device, out_device,
      [&](const std::uint8_t* in, std::uint32_t n, const SampleAugment* augment, void* out) {
        detail::launch_normalize_chunk(args, in, n, augment, out, stream, max_blocks);
      });
}

void launch_normalize(const NormalizeSpec& spec, const std::uint8_t* in_device, std::uint32_t count,
                      const SampleAugment* augment_device, void* out_device, void* stream) {
  launch_normalize(normalize_kernel_args(spec), in_device, count, augment_device, out_device,
                   stream);
}

}  // namespace gpufeed::pipeline
