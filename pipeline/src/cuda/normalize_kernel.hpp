#pragma once
// Host interface of the CUDA normalize kernels. No CUDA types appear here (the stream is a
// void* holding a cudaStream_t) and the header is C++17, so .cu files and C++ files share it.
#include <cstdint>

#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/dtype.hpp"

namespace gpufeed::pipeline {

struct NormalizeSpec;

/// A NormalizeSpec as plain integers and floats (what the kernels see).
struct NormalizeKernelArgs {
  std::uint32_t in_height = 0;
  std::uint32_t in_width = 0;
  std::uint32_t channels = 0;  ///< 1 to 4
  bool in_nchw = false;
  std::uint32_t out_height = 0;
  std::uint32_t out_width = 0;
  bool out_nchw = true;
  DType dtype = DType::float32;
  float mean[4] = {0, 0, 0, 0};
  float inv_std[4] = {1, 1, 1, 1};
  /// Samples are processed in launches of at most this many input (and output) elements
  /// (at most 2^31 - 1, so that all index arithmetic on the device is 32-bit).
  std::uint32_t max_launch_elements = 0x7FFFFFFFu;
};

/// `spec` as kernel arguments; throws UsageError when the spec is invalid.
NormalizeKernelArgs normalize_kernel_args(const NormalizeSpec& spec);

/// Enqueues the normalization of `count` densely packed uint8 samples at `in_device` into
/// `out_device` (see normalize_reference() for the element order) on `stream` (a cudaStream_t,
/// null for the default stream). `augment_device` holds `count` SampleAugment in device memory,
/// or is null for no crop and no flip; crop offsets are clamped so that the window stays inside
/// the sample, and any nonzero flip mirrors. Asynchronous: nothing is synchronized; throws
/// CudaError when a launch fails and UsageError for invalid arguments.
void launch_normalize(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                      std::uint32_t count, const SampleAugment* augment_device, void* out_device,
                      void* stream);

/// The same for a NormalizeSpec (validated first).
void launch_normalize(const NormalizeSpec& spec, const std::uint8_t* in_device, std::uint32_t count,
                      const SampleAugment* augment_device, void* out_device, void* stream);

namespace detail {
/// Samples of one launch: as many as keep its input and output elements below
/// args.max_launch_elements. Throws UsageError for invalid arguments or a sample over the limit.
std::uint32_t samples_per_launch(const NormalizeKernelArgs& args);

/// Calls launch(in, samples, augment, out) with each launch's samples and the pointers to its
/// first sample's input, augment (null stays null) and output, in order.
template <typename F>
void for_each_launch(const NormalizeKernelArgs& args, const std::uint8_t* in, std::uint32_t count,
                     const SampleAugment* augment, void* out, F&& launch) {
  const std::uint32_t per_launch = samples_per_launch(args);
  const std::uint64_t in_sample = std::uint64_t{args.in_height} * args.in_width * args.channels;
  const std::uint64_t out_bytes =
      std::uint64_t{args.out_height} * args.out_width * args.channels * dtype_size(args.dtype);
  for (std::uint64_t s0 = 0; s0 < count; s0 += per_launch) {
    const auto n = static_cast<std::uint32_t>(count - s0 < per_launch ? count - s0 : per_launch);
    launch(in + s0 * in_sample, n, augment != nullptr ? augment + s0 : nullptr,
           static_cast<unsigned char*>(out) + s0 * out_bytes);
  }
}

/// One kernel launch for `count` samples of fewer than 2^31 input and output elements in all,
/// with grid-stride loops over at most `max_blocks` blocks (in normalize_kernel.cu).
void launch_normalize_chunk(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                            std::uint32_t count, const SampleAugment* augment_device,
                            void* out_device, void* stream, unsigned max_blocks);
}  // namespace detail

}  // namespace gpufeed::pipeline
