#pragma once
// The inner loops of the resizer in Pillow's 8-bit fixed-point arithmetic: a portable version
// and an AVX2 version picked once at run time. Both give the same bytes (the sums are exact
// integers, whatever order they are added in), so the choice never changes an image.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufeed::formats::detail {

/// Fraction bits of the resize weights (Pillow's PRECISION_BITS).
inline constexpr int kPrecisionBits = 32 - 8 - 2;

/// The taps of one dimension: output i reads count[i] inputs from first[i], weighted by
/// weights[i * stride ...]. `stride` is even, count[i] < stride and the weights past count[i]
/// are zero, so kernels may read the taps in pairs.
struct TapsView {
  const int* first = nullptr;
  const int* count = nullptr;
  const std::int32_t* weights = nullptr;
  int stride = 0;
};

/// `rows` rows of `in_width` pixels of C channels resampled horizontally into rows of
/// `out_width` pixels. The input rows start at source column `in_x`: output x reads input
/// pixels from taps.first[x] - in_x. Reads nothing outside the input rows' pixels. `scratch`
/// (may be null) holds the kernel's own layout of the weights, so a caller that keeps it
/// allocates nothing in steady state.
struct HorizontalJob {
  const std::uint8_t* in = nullptr;
  std::size_t in_stride = 0;
  int in_width = 0;
  int in_x = 0;
  std::uint8_t* out = nullptr;
  std::size_t out_stride = 0;
  int out_width = 0;
  int rows = 0;
  TapsView taps;
  std::vector<std::int32_t>* scratch = nullptr;
};
using HorizontalKernel = void (*)(const HorizontalJob& job);

/// One output row of `bytes` bytes from `count` input rows `row_stride` apart starting at
/// `rows`, weighted by weights[0 .. count).
using VerticalRowKernel = void (*)(const std::uint8_t* rows, std::size_t row_stride,
                                   const std::int32_t* weights, int count, std::uint8_t* out,
                                   std::size_t bytes);

struct ResampleKernels {
  HorizontalKernel horizontal[4];  ///< by channel count - 1
  VerticalRowKernel vertical;
};

/// The fastest kernels this CPU runs.
const ResampleKernels& resample_kernels();
/// Plain C++ kernels (what a CPU without AVX2 runs); tests compare the two.
const ResampleKernels& portable_resample_kernels();

}  // namespace gpufeed::formats::detail
