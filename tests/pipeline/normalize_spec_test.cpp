#include "gpufeed/pipeline/normalize_spec.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "half_bits.hpp"

namespace gpufeed::pipeline {
namespace {

using formats::Layout;
using formats::SampleShape;

NormalizeSpec make_spec(SampleShape in, std::uint32_t oh, std::uint32_t ow, Layout out_layout,
                        DType dtype, const std::vector<float>& mean, const std::vector<float>& sd) {
  NormalizeSpec spec;
  spec.in = in;
  spec.out_height = oh;
  spec.out_width = ow;
  spec.out_layout = out_layout;
  spec.dtype = dtype;
  spec.params = NormalizeParams::make(mean, sd, in.channels);
  return spec;
}

std::vector<float> run_float(const NormalizeSpec& spec, const std::vector<std::uint8_t>& in,
                             std::uint32_t count, const SampleAugment* augment = nullptr) {
  std::vector<float> out(count * spec.out_elements(), std::numeric_limits<float>::quiet_NaN());
  normalize_reference(spec, in.data(), count, augment, out.data());
  return out;
}

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(HalfBits, Float16KnownPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half_bits(0.1f), 0x2E66);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00);  // the tie rounds to even: infinity
  EXPECT_EQ(float_to_half_bits(1e9f), 0x7C00);
  EXPECT_EQ(float_to_half_bits(-INFINITY), 0xFC00);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3C00);      // tie to even (down)
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * 0x1p-11f), 0x3C02);  // tie to even (up)
  EXPECT_EQ(float_to_half_bits(2049.0f), 0x6800);
  EXPECT_EQ(float_to_half_bits(2051.0f), 0x6802);
  EXPECT_EQ(float_to_half_bits(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half_bits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(0x1p-25f), 0x0000);  // tie to even zero
  EXPECT_EQ(float_to_half_bits(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(float_to_half_bits(3 * 0x1p-25f), 0x0002);  // tie between 1 and 2 subnormal units
  EXPECT_EQ(float_to_half_bits(0x1.ffcp-15f), 0x0400);  // tie above the largest subnormal
  EXPECT_EQ(float_to_half_bits(1e-30f), 0x0000);
  const std::uint16_t nan = float_to_half_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  const std::uint16_t snan = float_to_half_bits(from_bits(0x7F800001u));  // payload below bit 13
  EXPECT_TRUE(std::isnan(half_bits_to_float(snan)));
  EXPECT_EQ(half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(half_bits_to_float(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(half_bits_to_float(0xFC00), -INFINITY);
}

TEST(HalfBits, Float16RoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = half_bits_to_float(static_cast<std::uint16_t>(h));
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(f)))) << h;
    } else {
      ASSERT_EQ(float_to_half_bits(f), h) << h;
    }
  }
}

TEST(HalfBits, BFloat16KnownPatterns) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(1.00390625f), 0x3F80);  // 1 + 2^-8: tie to even (down)
  EXPECT_EQ(float_to_bf16_bits(1.01171875f), 0x3F82);  // 1 + 3 * 2^-8: tie to even (up)
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.00390625f, 2.0f)), 0x3F81);
  EXPECT_EQ(float_to_bf16_bits(-3.0f), 0xC040);
  EXPECT_EQ(float_to_bf16_bits(FLT_MAX), 0x7F80);  // rounds up to infinity
  EXPECT_EQ(float_to_bf16_bits(INFINITY), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x00012345u)), 0x0001);  // a float subnormal
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(from_bits(0x7F800001u)))));
  EXPECT_EQ(bf16_bits_to_float(0x3F81), 1.0078125f);
  EXPECT_EQ(bf16_bits_to_float(0xFF80), -INFINITY);
}

TEST(HalfBits, DoublesRoundOnce) {
  // Just above a tie: rounding through float first would land on the tie and round to even.
  EXPECT_EQ(double_to_half_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
  EXPECT_EQ(double_to_half_bits(1.0 + 0x1p-11 - 0x1p-40), 0x3C00);
  EXPECT_EQ(double_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3F81);
  EXPECT_EQ(double_to_bf16_bits(-(1.0 + 0x1p-8)), 0xBF80);
  EXPECT_EQ(double_to_half_bits(1e300), 0x7C00);
  EXPECT_EQ(double_to_bf16_bits(-1e300), 0xFF80);
  // Random doubles: the result is a nearest value, and an even one on ties.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-70000.0, 70000.0);
  for (int i = 0; i < 20000; ++i) {
    const double d = dist(rng) * std::pow(2.0, -static_cast<int>(rng() % 30));
    for (const bool bf16 : {false, true}) {
      const std::uint16_t b = bf16 ? double_to_bf16_bits(d) : double_to_half_bits(d);
      const auto value = [&](std::uint32_t bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        return static_cast<double>(bf16 ? bf16_bits_to_float(h) : half_bits_to_float(h));
      };
      if (std::isinf(value(b))) {  // only past the half overflow threshold
        ASSERT_GE(std::fabs(d), 65520.0) << d;
        continue;
      }
      const double err = std::fabs(value(b) - d);
      for (const std::uint32_t n : {b + 1u, b - 1u}) {
        const double v = value(n & 0xFFFFu);
        if (std::isnan(v) || std::isinf(v)) continue;
        ASSERT_LE(err, std::fabs(v - d)) << d;
        if (err == std::fabs(v - d)) {
          ASSERT_EQ(b & 1u, 0u) << d;
        }
      }
    }
  }
}

TEST(NormalizeSpec, ReferenceMatchesTheFloat32NchwReference) {
  std::mt19937 rng(11);
  const std::uint32_t count = 4;
  const SampleShape shapes[] = {{7, 5, 3, Layout::nhwc},
                                {7, 5, 3, Layout::nchw},
                                {9, 4, 1, Layout::nhwc},
                                {3, 6, 4, Layout::nhwc}};
  for (const SampleShape& shape : shapes) {
    std::vector<std::uint8_t> in(count * shape.bytes());
    for (auto& x : in) x = static_cast<std::uint8_t>(1 + rng() % 255);
    const std::vector<float> mean{123.7f, 116.3f, 103.5f, 7.0f}, sd{58.4f, 57.1f, 57.4f, 3.3f};
    const std::vector<float> pow2_sd{64.0f, 0.5f, 32.0f, 1.0f};  // 1/std exact: equal results
    for (const auto* s : {&sd, &pow2_sd}) {
      const std::vector<float> m(mean.begin(), mean.begin() + shape.channels);
      const std::vector<float> d(s->begin(), s->begin() + shape.channels);
      const NormalizeSpec spec =
          make_spec(shape, shape.height, shape.width, Layout::nchw, DType::float32, m, d);
      const std::vector<float> got = run_float(spec, in, count);
      std::vector<float> want(got.size(), std::numeric_limits<float>::quiet_NaN());
      normalize_reference(in.data(), shape, count, m, d, want.data());
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_FALSE(std::isnan(want[i]));
        if (s == &pow2_sd) {
          ASSERT_EQ(got[i], want[i]) << formats::to_string(shape) << " element " << i;
        } else {  // 1/std is rounded to float in NormalizeParams: at most one ulp apart
          ASSERT_LE(std::fabs(got[i] - want[i]),
                    std::fabs(std::nextafter(want[i], INFINITY) - want[i]))
              << formats::to_string(shape) << " element " << i;
        }
      }
    }
  }
}

TEST(NormalizeSpec, CropAndFlipPickTheWindow) {
  // One 3x4 single-channel image holding 1..12, window 2x2 at (1, 1): 6 7 / 10 11.
  std::vector<std::uint8_t> in(12);
  for (std::uint8_t i = 0; i < 12; ++i) in[i] = static_cast<std::uint8_t>(i + 1);
  const NormalizeSpec spec =
      make_spec({3, 4, 1, Layout::nchw}, 2, 2, Layout::nchw, DType::float32, {1.0f}, {2.0f});
  const SampleAugment crop{1, 1, 0}, flip{1, 1, 1}, corner{0, 2, 1};
  EXPECT_EQ(run_float(spec, in, 1, &crop), (std::vector<float>{2.5f, 3.0f, 4.5f, 5.0f}));
  EXPECT_EQ(run_float(spec, in, 1, &flip), (std::vector<float>{3.0f, 2.5f, 5.0f, 4.5f}));
  EXPECT_EQ(run_float(spec, in, 1, &corner), (std::vector<float>{1.5f, 1.0f, 3.5f, 3.0f}));
  // No augment: the window at (0, 0).
  EXPECT_EQ(run_float(spec, in, 1), (std::vector<float>{0.0f, 0.5f, 2.0f, 2.5f}));
  // Two samples, each with its own augment.
  std::vector<std::uint8_t> two(in);
  for (std::uint8_t i = 0; i < 12; ++i) two.push_back(static_cast<std::uint8_t>(101 + i));
  const SampleAugment per_sample[] = {{0, 0, 1}, {1, 2, 0}};
  EXPECT_EQ(run_float(spec, two, 2, per_sample),
            (std::vector<float>{0.5f, 0.0f, 2.5f, 2.0f, 53.0f, 53.5f, 55.0f, 55.5f}));
}

TEST(NormalizeSpec, LayoutsInAndOut) {
  // A 1x2 image with 3 channels: pixels (1,2,3) and (4,5,6); mean 1, std 1.
  const std::vector<std::uint8_t> hwc{1, 2, 3, 4, 5, 6}, chw{1, 4, 2, 5, 3, 6};
  const std::vector<float> m{1, 1, 1}, s{1, 1, 1};
  const auto spec = [&](Layout in, Layout out) {
    return make_spec({1, 2, 3, in}, 1, 2, out, DType::float32, m, s);
  };
  const std::vector<float> nhwc_out{0, 1, 2, 3, 4, 5}, nchw_out{0, 3, 1, 4, 2, 5};
  EXPECT_EQ(run_float(spec(Layout::nhwc, Layout::nhwc), hwc, 1), nhwc_out);
  EXPECT_EQ(run_float(spec(Layout::nhwc, Layout::nchw), hwc, 1), nchw_out);
  EXPECT_EQ(run_float(spec(Layout::nchw, Layout::nhwc), chw, 1), nhwc_out);
  EXPECT_EQ(run_float(spec(Layout::nchw, Layout::nchw), chw, 1), nchw_out);
  const SampleAugment flip{0, 0, 1};
  EXPECT_EQ(run_float(spec(Layout::nchw, Layout::nhwc), chw, 1, &flip),
            (std::vector<float>{3, 4, 5, 0, 1, 2}));
}

TEST(NormalizeSpec, HalfOutputsRoundOnce) {
  const std::vector<std::uint8_t> in{1, 2, 255, 100};
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    const NormalizeSpec spec =
        make_spec({1, 4, 1, Layout::nhwc}, 1, 4, Layout::nchw, dtype, {0.0f}, {0.25f});
    std::vector<std::uint16_t> out(4, 0xFFFF);
    normalize_reference(spec, in.data(), 1, nullptr, out.data());
    if (dtype == DType::float16) {  // 4, 8, 1020, 400
      EXPECT_EQ(out, (std::vector<std::uint16_t>{0x4400, 0x4800, 0x63F8, 0x5E40}));
    } else {
      EXPECT_EQ(out, (std::vector<std::uint16_t>{0x4080, 0x4100, 0x447F, 0x43C8}));
    }
  }
}

TEST(NormalizeSpec, ValidationNamesTheProblem) {
  const auto base = [] {
    return make_spec({8, 6, 3, Layout::nhwc}, 8, 6, Layout::nchw, DType::float16, {1, 2, 3},
                     {4, 5, 6});
  };
  EXPECT_NO_THROW(base().validate());
  EXPECT_EQ(base().out_elements(), 8u * 6 * 3);
  EXPECT_EQ(base().out_bytes(), 8u * 6 * 3 * 2);
  NormalizeSpec s = base();
  s.out_height = 9;
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.out_width = 0;
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.in.channels = 5;
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.in.channels = 1;  // params are for 3 channels
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.in.height = 0;
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.params.inv_std[1] = 0.0f;
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.params.mean[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(s.validate(), UsageError);
  s = base();
  s.out_height = 5;
  std::vector<std::uint8_t> in(8 * 6 * 3, 7);
  std::vector<std::uint16_t> out(5 * 6 * 3);
  const SampleAugment inside{3, 0, 1}, outside{4, 0, 0}, bad_flip{0, 0, 2};
  EXPECT_NO_THROW(normalize_reference(s, in.data(), 1, &inside, out.data()));
  EXPECT_THROW(normalize_reference(s, in.data(), 1, &outside, out.data()), UsageError);
  EXPECT_THROW(normalize_reference(s, in.data(), 1, &bad_flip, out.data()), UsageError);
  try {
    s.out_width = 7;
    s.validate();
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the stored sample"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpufeed::pipeline
