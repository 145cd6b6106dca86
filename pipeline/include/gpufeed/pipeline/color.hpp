#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gpufeed::pipeline {

/// One step of a per-sample colour program on a planar float RGB image (3 x H x W, values in
/// [0, 1] before the blends): torchvision's ColorJitter adjustments and Normalize, with their
/// arithmetic (each blend is `factor * x + (1 - factor) * other` in float32, clamped to [0, 1];
/// the grayscale is 0.2989 R + 0.587 G + 0.114 B; Normalize is (x - mean) / std).
enum class ColorOp : std::uint8_t {
  skip = 0,        ///< nothing (an adjustment the op does not make)
  brightness = 1,  ///< blend with black
  contrast = 2,    ///< blend with the mean of the image's grayscale
  saturation = 3,  ///< blend with each pixel's grayscale
  normalize = 4,   ///< (x - mean[c]) / std[c], per channel
};

struct ColorStep {
  ColorOp op = ColorOp::skip;
  double factor = 1.0;  ///< the blend's factor (a Python float, as torchvision is given it)
  std::array<float, 3> mean{};
  std::array<float, 3> stddev{1.0f, 1.0f, 1.0f};
};

/// Runs `steps` in order on one image of `pixels` pixels per plane: reads `src`, writes `dst`
/// (both 3 * pixels floats; they may be the same memory). One pass over the image a step (two
/// for contrast), in cache, on the calling thread.
void color_program(std::span<const float> src, std::span<float> dst, std::size_t pixels,
                   std::span<const ColorStep> steps);

}  // namespace gpufeed::pipeline
