#pragma once
// Host interface of the CUDA normalize kernels. No CUDA types appear here (the stream is a
// void* holding a cudaStream_t) and the header is C++17, so .cu files and C++ files share it.
#include <cstdint>

#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/dtype.hpp"

namespace gpufeed {

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
/// One kernel launch for `count` samples of fewer than 2^31 input and output elements in all,
/// with grid-stride loops over at most `max_blocks` blocks (in normalize_kernel.cu).
void launch_normalize_chunk(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                            std::uint32_t count, const SampleAugment* augment_device,
                            void* out_device, void* stream, unsigned max_blocks);
}  // namespace detail

}  // namespace gpufeed
