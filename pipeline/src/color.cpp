// torchvision's colour adjustments on one planar RGB float image, with its float32 arithmetic:
// a blend is `ratio * img1 + (1.0 - ratio) * img2` where ratio and 1 - ratio (Python floats)
// become float32 scalars, then clamp(0, 1) (torchvision's functional_tensor._blend); the
// grayscale is ((0.2989 R + 0.587 G) + 0.114 B) in float32 (rgb_to_grayscale). The tests compare
// the result with torchvision's ops (tests/python/test_transform.py).
#include "gpufeed/pipeline/color.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

namespace {

inline float clamp01(float v) {
  return std::min(std::max(v, 0.0f), 1.0f);
}

inline float gray(float r, float g, float b) {
  // Each product and sum rounded to float32 as torch computes the expression op by op.
  const float rr = 0.2989f * r;
  const float gg = 0.587f * g;
  const float bb = 0.114f * b;
  const float rg = rr + gg;
  return rg + bb;
}

/// out[i] = f(in[i], i): two loops the compiler vectorizes, one for separate memory and one in
/// place (the same element read, then written), so no aliasing check stands in its way.
template <class F>
void map_restrict(const float* __restrict in, float* __restrict out, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) out[i] = f(in[i], i);
}
template <class F>
void map_in_place(float* x, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) x[i] = f(x[i], i);
}
template <class F>
void map(const float* in, float* out, std::size_t n, F f) {
  if (in == out) {
    map_in_place(out, n, f);
  } else {
    map_restrict(in, out, n, f);
  }
}

/// The mean of the image's grayscale, summed in double (torch sums in float32 in another
/// order: the two differ in the last bits of the mean).
float gray_mean(const float* r, const float* g, const float* b, std::size_t pixels) {
  double sum = 0.0;
  for (std::size_t i = 0; i < pixels; ++i) sum += gray(r[i], g[i], b[i]);
  return static_cast<float>(sum / static_cast<double>(pixels));
}

/// Blend with each pixel's grayscale, a block of pixels at a time: the block's
/// (1 - factor) * gray first (it reads all three planes before any is written), then each plane.
void saturation(const float* in, float* out, std::size_t pixels, float ratio, float rest) {
  constexpr std::size_t kBlock = 1024;
  std::array<float, kBlock> term;
  for (std::size_t begin = 0; begin < pixels; begin += kBlock) {
    const std::size_t n = std::min(kBlock, pixels - begin);
    const float* r = in + begin;
    const float* g = r + pixels;
    const float* b = g + pixels;
    for (std::size_t i = 0; i < n; ++i) term[i] = rest * gray(r[i], g[i], b[i]);
    for (std::size_t c = 0; c < 3; ++c) {
      map(in + c * pixels + begin, out + c * pixels + begin, n,
          [&](float x, std::size_t i) { return clamp01(ratio * x + term[i]); });
    }
  }
}

}  // namespace

void color_program(std::span<const float> src, std::span<float> dst, std::size_t pixels,
                   std::span<const ColorStep> steps) {
  const std::size_t n = 3 * pixels;
  if (src.size() < n || dst.size() < n) {
    throw UsageError("color program: an image of " + std::to_string(pixels) +
                     " pixels needs 3 planes of floats");
  }
  const float* in = src.data();
  float* out = dst.data();
  for (const ColorStep& step : steps) {
    const auto ratio = static_cast<float>(step.factor);
    const auto rest = static_cast<float>(1.0 - step.factor);
    switch (step.op) {
      case ColorOp::skip:
        continue;
      case ColorOp::brightness:  // a blend with black: ratio * x + (1 - ratio) * 0
        map(in, out, n, [=](float x, std::size_t) { return clamp01(ratio * x); });
        break;
      case ColorOp::contrast: {
        const float term = rest * gray_mean(in, in + pixels, in + 2 * pixels, pixels);
        map(in, out, n, [=](float x, std::size_t) { return clamp01(ratio * x + term); });
        break;
      }
      case ColorOp::saturation:
        saturation(in, out, pixels, ratio, rest);
        break;
      case ColorOp::normalize:
        for (std::size_t c = 0; c < 3; ++c) {
          const float m = step.mean[c];
          const float s = step.stddev[c];
          map(in + c * pixels, out + c * pixels, pixels,
              [=](float x, std::size_t) { return (x - m) / s; });
        }
        break;
    }
    in = out;  // the next step works in place on the output
  }
  if (in != out) std::copy_n(in, n, out);  // every step skipped
}

}  // namespace gpufeed::pipeline
