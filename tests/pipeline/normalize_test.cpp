#include "gpufeed/pipeline/normalize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {
namespace {

using formats::Layout;
using formats::SampleShape;

struct Case {
  SampleShape shape;
  std::vector<float> mean, std;
};

class NormalizeCpu : public ::testing::TestWithParam<Case> {};

TEST_P(NormalizeCpu, MatchesTheReferenceOnRandomData) {
  const Case& c = GetParam();
  const std::uint64_t count = 5;
  std::mt19937 rng(123);
  std::vector<std::uint8_t> in(count * c.shape.bytes());
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> got(in.size(), nan), want(in.size(), nan);  // poisoned outputs

  normalize_cpu(in.data(), c.shape, count, NormalizeParams::make(c.mean, c.std, c.shape.channels),
                got.data());
  normalize_reference(in.data(), c.shape, count, c.mean, c.std, want.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(want[i])) << i;
    ASSERT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
  }
}

TEST_P(NormalizeCpu, PlanarKeepsEveryByteInTheReferencesPlace) {
  // uint8 NCHW out: the reference's transpose with mean 0 and std 1, byte for byte. 37
  // samples of odd sizes: the vector loops' bodies and their tails.
  const Case& c = GetParam();
  const std::uint64_t count = 37;
  std::mt19937 rng(7);
  std::vector<std::uint8_t> in(count * c.shape.bytes());
  for (auto& x : in) x = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> got(in.size(), 0xA5);
  planar_cpu(in.data(), c.shape, count, got.data());
  const std::vector<float> zero(c.shape.channels, 0.0f), one(c.shape.channels, 1.0f);
  std::vector<float> want(in.size());
  normalize_reference(in.data(), c.shape, count, zero, one, want.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(static_cast<float>(got[i]), want[i]) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, NormalizeCpu,
    ::testing::Values(
        Case{{7, 5, 3, Layout::nhwc}, {123.7f, 116.3f, 103.5f}, {58.4f, 57.1f, 57.4f}},
        Case{{7, 5, 3, Layout::nchw}, {123.7f, 116.3f, 103.5f}, {58.4f, 57.1f, 57.4f}},
        Case{{9, 4, 1, Layout::nhwc}, {33.3f}, {78.6f}},
        Case{{3, 6, 4, Layout::nhwc}, {1, 2, 3, 4}, {5, 6, 7, 8}},
        Case{{3, 6, 2, Layout::nchw}, {100, 50}, {2, 3}},
        Case{{64, 64, 3, Layout::nhwc}, {0.5f, 0.5f, 0.5f}, {0.2f, 0.2f, 0.2f}},
        Case{{11, 13, 3, Layout::nhwc}, {1, 2, 3}, {4, 5, 6}}));

TEST(NormalizeCpu, ReferenceTransposesNhwcToNchw) {
  // One 1x2 image with 3 channels: pixels (1,2,3) and (4,5,6).
  const std::uint8_t in[] = {1, 2, 3, 4, 5, 6};
  const std::vector<float> mean{0, 0, 0}, std{1, 1, 1};
  float out[6];
  normalize_reference(in, {1, 2, 3, Layout::nhwc}, 1, mean, std, out);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  float fast[6];
  normalize_cpu(in, {1, 2, 3, Layout::nhwc}, 1, NormalizeParams::make(mean, std, 3), fast);
  EXPECT_EQ(std::vector<float>(fast, fast + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(NormalizeParams, RejectsBadConstants) {
  const std::vector<float> m{0, 0, 0}, s{1, 0, 1}, short_s{1, 1};
  EXPECT_THROW(NormalizeParams::make(m, s, 3), UsageError);
  EXPECT_THROW(NormalizeParams::make(m, short_s, 3), UsageError);
  EXPECT_THROW(NormalizeParams::make(m, m, 5), UsageError);
  const std::vector<float> inf{1, std::numeric_limits<float>::infinity(), 1};
  EXPECT_THROW(NormalizeParams::make(m, inf, 3), UsageError);
}

}  // namespace
}  // namespace gpufeed::pipeline
