#pragma once
// Normalize specs, random augments and the comparison with normalize_reference(), shared by the
// tests of the CUDA normalize kernels on a GPU (tests/gpu) and of their threads run on the CPU
// (tests/pipeline/normalize_emulation_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpufeed/pipeline/normalize_spec.hpp"

namespace gpufeed {
namespace formats {
// Readable test parameters in gtest (and ctest) output.
inline void PrintTo(const SampleShape& shape, std::ostream* os) {  // the layout is apart
  *os << shape.height << "x" << shape.width << "x" << shape.channels;
}
inline void PrintTo(Layout layout, std::ostream* os) {
  *os << to_string(layout);
}
}  // namespace formats
inline void PrintTo(DType dtype, std::ostream* os) {
  *os << to_string(dtype);
}

namespace testing {

using pipeline::normalize_reference;
using pipeline::NormalizeParams;
using pipeline::NormalizeSpec;
using pipeline::SampleAugment;

/// ImageNet-like constants for 1-4 channels; `crop` takes a window of 3/4 of each side. For
/// uint8 output, integer means and powers of two as stds: exact in float and in double, so the
/// rounding of the kernels and of the reference agree, and each channel's differ.
inline NormalizeSpec make_normalize_spec(formats::SampleShape in, bool crop,
                                         formats::Layout out_layout, DType dtype) {
  const bool exact = dtype == DType::uint8;
  const std::vector<float> mean = exact ? std::vector<float>{0.0f, 10.0f, 20.0f, 30.0f}
                                        : std::vector<float>{123.675f, 116.28f, 103.53f, 99.1f};
  const std::vector<float> sd = exact ? std::vector<float>{1.0f, 1.0f, 2.0f, 0.5f}
                                      : std::vector<float>{58.395f, 57.12f, 57.375f, 41.7f};
  NormalizeSpec spec;
  spec.in = in;
  spec.out_height = crop ? std::max(1u, in.height * 3 / 4) : in.height;
  spec.out_width = crop ? std::max(1u, in.width * 3 / 4) : in.width;
  spec.out_layout = out_layout;
  spec.dtype = dtype;
  spec.params =
      NormalizeParams::make({mean.data(), in.channels}, {sd.data(), in.channels}, in.channels);
  return spec;
}

/// Sample shapes for the kernels' tests (the layout is a separate parameter): widths that are
/// no multiple of a vector (4, 8, 16 elements), rows of one pixel, samples whose size misaligns
/// the next one, and rows wider than a tile of the row kernel (cut into pieces).
inline std::vector<formats::SampleShape> normalize_test_shapes() {
  using formats::Layout;
  return {{64, 64, 3, Layout::nhwc}, {7, 5, 3, Layout::nhwc},  {13, 11, 1, Layout::nhwc},
          {9, 9, 4, Layout::nhwc},   {17, 1, 3, Layout::nhwc}, {5, 37, 2, Layout::nhwc},
          {2, 4001, 3, Layout::nhwc}};
}

/// Every case: shape, input layout, output layout, element type, with crop and flip or not.
using NormalizeParam =
    std::tuple<formats::SampleShape, formats::Layout, formats::Layout, DType, bool>;

inline auto normalize_params() {
  using formats::Layout;
  return ::testing::Combine(
      ::testing::ValuesIn(normalize_test_shapes()), ::testing::Values(Layout::nhwc, Layout::nchw),
      ::testing::Values(Layout::nchw, Layout::nhwc),
      ::testing::Values(DType::float32, DType::float16, DType::bfloat16, DType::uint8),
      ::testing::Bool());
}

inline std::string normalize_param_name(const ::testing::TestParamInfo<NormalizeParam>& info) {
  const auto& [shape, in_layout, out_layout, dtype, augment] = info.param;
  return std::to_string(shape.height) + "x" + std::to_string(shape.width) + "x" +
         std::to_string(shape.channels) + "_" + formats::to_string(in_layout) + "_to_" +
         formats::to_string(out_layout) + "_" + to_string(dtype) + (augment ? "_cropflip" : "");
}

/// The spec of a case; its crop-flip is std::get<4>(param).
inline NormalizeSpec normalize_param_spec(const NormalizeParam& param) {
  const auto& [shape, in_layout, out_layout, dtype, augment] = param;
  formats::SampleShape in = shape;
  in.layout = in_layout;
  return make_normalize_spec(in, augment, out_layout, dtype);
}

/// A crop inside the sample and a flip for each of `count` samples.
inline std::vector<SampleAugment> random_augments(const NormalizeSpec& spec, std::uint32_t count,
                                                  std::mt19937& rng) {
  std::vector<SampleAugment> a(count);
  for (auto& x : a) {
    x.crop_y = static_cast<std::uint32_t>(rng() % (spec.in.height - spec.out_height + 1));
    x.crop_x = static_cast<std::uint32_t>(rng() % (spec.in.width - spec.out_width + 1));
    x.flip = static_cast<std::uint32_t>(rng() % 2);
  }
  return a;
}

/// Random augments for `count` samples when `augment`, else none.
inline std::vector<SampleAugment> augments_for(const NormalizeSpec& spec, std::uint32_t count,
                                               bool augment, std::uint32_t seed) {
  std::mt19937 rng(seed);
  return augment ? random_augments(spec, count, rng) : std::vector<SampleAugment>{};
}

inline constexpr formats::Layout kNormalizeLayouts[] = {formats::Layout::nhwc,
                                                        formats::Layout::nchw};
inline constexpr DType kNormalizeDTypes[] = {DType::float32, DType::float16, DType::bfloat16,
                                             DType::uint8};

/// Runs `check(spec, augments)` for every layout pair, element type and crop-flip or not.
inline void for_every_case(
    formats::SampleShape shape, std::uint32_t count,
    const std::function<void(const NormalizeSpec&, const std::vector<SampleAugment>&)>& check) {
  for (const formats::Layout in_layout : kNormalizeLayouts) {
    for (const formats::Layout out_layout : kNormalizeLayouts) {
      for (const DType dtype : kNormalizeDTypes) {
        for (const bool crop : {false, true}) {
          shape.layout = in_layout;
          const NormalizeSpec spec = make_normalize_spec(shape, crop, out_layout, dtype);
          SCOPED_TRACE(formats::to_string(in_layout) + " -> " + formats::to_string(out_layout) +
                       " " + to_string(dtype) + (crop ? " crop-flip" : ""));
          check(spec, augments_for(spec, count, crop, count + shape.width));
        }
      }
    }
  }
}

inline std::vector<std::uint8_t> random_samples(const NormalizeSpec& spec, std::uint32_t count,
                                                std::uint32_t seed) {
  std::vector<std::uint8_t> in(count * spec.in.bytes());
  std::mt19937 rng(seed);
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  return in;
}

/// Bits of a half or bfloat16 as an integer that orders like the value.
inline int ordered_half_bits(std::uint16_t b) {
  return (b & 0x8000) != 0 ? 0x8000 - (b & 0x7FFF) : 0x8000 + b;
}

/// Compares `got` with the reference for `count` samples: the output at byte `before`, every
/// other byte of `got` still the poison 0xFF. float32 within 1e-6 relative, half and bfloat16
/// within one unit in the last place (the kernels round a float, the reference a double),
/// uint8 exactly.
inline void expect_matches(const NormalizeSpec& spec, std::uint32_t count,
                           const std::vector<std::uint8_t>& in, const SampleAugment* augment,
                           const std::vector<unsigned char>& got, std::size_t before) {
  const std::size_t n = count * spec.out_elements();
  const std::size_t size = dtype_size(spec.dtype);
  std::vector<unsigned char> want(n * size);
  normalize_reference(spec, in.data(), count, augment, want.data());
  for (std::size_t i = 0; i < before; ++i) ASSERT_EQ(got[i], 0xFF) << "guard byte before " << i;
  for (std::size_t i = before + n * size; i < got.size(); ++i) {
    ASSERT_EQ(got[i], 0xFF) << "written past the output: byte " << i - before - n * size;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (spec.dtype == DType::float32) {
      float g, w;
      std::memcpy(&g, &got[before + 4 * i], 4);
      std::memcpy(&w, &want[4 * i], 4);
      ASSERT_FALSE(std::isnan(w)) << i;
      ASSERT_LE(std::fabs(g - w), 1e-6f * std::max(1.0f, std::fabs(w))) << "element " << i;
    } else if (spec.dtype == DType::uint8) {
      ASSERT_EQ(got[before + i], want[i]) << "element " << i;
    } else {
      std::uint16_t g, w;
      std::memcpy(&g, &got[before + 2 * i], 2);
      std::memcpy(&w, &want[2 * i], 2);
      ASSERT_LE(std::abs(ordered_half_bits(g) - ordered_half_bits(w)), 1)
          << "element " << i << ": got 0x" << std::hex << g << ", want 0x" << w;
    }
  }
}

}  // namespace testing
}  // namespace gpufeed
