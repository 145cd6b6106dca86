#pragma once
// uint8 images to float32 NCHW: out = (x - mean[c]) / std[c]; and to uint8 NCHW as they are.
#include <cstdint>
#include <span>

#include "gpufeed/formats/sample_shape.hpp"

namespace gpufeed::pipeline {

/// Per-channel constants prepared once: mean and 1/std.
struct NormalizeParams {
  float mean[4] = {0, 0, 0, 0};
  float inv_std[4] = {1, 1, 1, 1};
  std::uint32_t channels = 0;
  /// Throws UsageError unless sizes match `channels` (1-4) and every std is finite and > 0.
  static NormalizeParams make(std::span<const float> mean, std::span<const float> std,
                              std::uint32_t channels);
};

/// Normalizes `count` images of `shape` (NHWC or NCHW uint8, densely packed) into float32 NCHW.
/// Vectorized; computes (x - mean) * inv_std, within 2 ulp of normalize_reference().
void normalize_cpu(const std::uint8_t* in, const formats::SampleShape& shape, std::uint64_t count,
                   const NormalizeParams& params, float* out);

/// `count` uint8 images of `shape` (NHWC or NCHW, densely packed) as uint8 NCHW, unnormalized:
/// a vectorized de-interleave of NHWC samples, a copy of NCHW ones.
void planar_cpu(const std::uint8_t* in, const formats::SampleShape& shape, std::uint64_t count,
                std::uint8_t* out);

/// The plain reference: (x - mean) / std in double precision, rounded once to float.
void normalize_reference(const std::uint8_t* in, const formats::SampleShape& shape,
                         std::uint64_t count, std::span<const float> mean,
                         std::span<const float> std, float* out);

}  // namespace gpufeed::pipeline
