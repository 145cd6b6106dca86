// The resizer's SIMD kernels against its portable ones: the same bytes for any taps, and no
// read outside the input rows (buffers are allocated to the byte, for the sanitizers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "codecs/resample_kernels.hpp"

namespace gpufeed::testing {
namespace {

using formats::detail::HorizontalJob;
using formats::detail::portable_resample_kernels;
using formats::detail::resample_kernels;

/// Taps that keep the kernels' contract: inside the input, count < stride, stride even,
/// zeros past count. Weights are random (negative ones too) but small enough that no sum
/// overflows, so both kernels must agree exactly, clamping included.
struct RandomTaps {
  std::vector<int> first, count;
  std::vector<std::int32_t> weights;
  int stride = 0;

  RandomTaps(std::mt19937& random, int in_size, int out_size) {
    const int max_count = std::uniform_int_distribution<int>(1, std::min(in_size, 20))(random);
    stride = (max_count + 2) & ~1;
    weights.assign(static_cast<std::size_t>(out_size) * stride, 0);
    std::uniform_int_distribution<std::int32_t> weight(-(1 << 16), 1 << 18);
    for (int x = 0; x < out_size; ++x) {
      const int n = std::uniform_int_distribution<int>(0, max_count)(random);
      count.push_back(n);
      first.push_back(std::uniform_int_distribution<int>(0, in_size - n)(random));
      for (int t = 0; t < n; ++t)
        weights[static_cast<std::size_t>(x) * stride + t] = weight(random);
    }
  }
};

std::vector<std::uint8_t> random_bytes(std::mt19937& random, std::size_t size) {
  std::vector<std::uint8_t> bytes(size);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
  return bytes;
}

TEST(ResampleKernels, SimdHorizontalPassMatchesPortable) {
  if (&resample_kernels() == &portable_resample_kernels()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 random(7);
  for (int trial = 0; trial < 400; ++trial) {
    const int channels = 1 + trial % 4;
    const int in_width = std::uniform_int_distribution<int>(1, 300)(random);
    const int out_width = std::uniform_int_distribution<int>(1, 150)(random);
    const int rows = std::uniform_int_distribution<int>(1, 5)(random);
    const RandomTaps taps(random, in_width, out_width);
    const std::size_t in_stride = std::size_t(in_width) * channels;
    const std::size_t out_stride = std::size_t(out_width) * channels;
    const std::vector<std::uint8_t> in = random_bytes(random, in_stride * rows);
    std::vector<std::uint8_t> want(out_stride * rows), got(out_stride * rows);
    HorizontalJob job;
    job.in = in.data();
    job.in_stride = in_stride;
    job.in_width = in_width;
    job.out_stride = out_stride;
    job.out_width = out_width;
    job.rows = rows;
    job.taps = {taps.first.data(), taps.count.data(), taps.weights.data(), taps.stride};
    std::vector<std::int32_t> scratch;
    job.scratch = &scratch;
    job.out = want.data();
    portable_resample_kernels().horizontal[channels - 1](job);
    job.out = got.data();
    resample_kernels().horizontal[channels - 1](job);
    ASSERT_EQ(got, want) << "trial " << trial << ": " << in_width << " -> " << out_width << " x"
                         << channels;
  }
}

TEST(ResampleKernels, SimdVerticalPassMatchesPortable) {
  if (&resample_kernels() == &portable_resample_kernels()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 random(8);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t bytes = std::uniform_int_distribution<std::size_t>(1, 700)(random);
    const int count = std::uniform_int_distribution<int>(0, 12)(random);
    const std::size_t stride = bytes + std::uniform_int_distribution<std::size_t>(0, 9)(random);
    const std::vector<std::uint8_t> rows =
        random_bytes(random, count == 0 ? 1 : stride * (count - 1) + bytes);
    std::vector<std::int32_t> weights(static_cast<std::size_t>(count));
    std::uniform_int_distribution<std::int32_t> weight(-(1 << 16), 1 << 18);
    for (auto& w : weights) w = weight(random);
    std::vector<std::uint8_t> want(bytes), got(bytes);
    portable_resample_kernels().vertical(rows.data(), stride, weights.data(), count, want.data(),
                                         bytes);
    resample_kernels().vertical(rows.data(), stride, weights.data(), count, got.data(), bytes);
    ASSERT_EQ(got, want) << "trial " << trial << ": " << count << " rows of " << bytes;
  }
}

}  // namespace
}  // namespace gpufeed::testing
