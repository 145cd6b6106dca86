#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/ordered_map.hpp"
#include "gpufeed/formats/synthetic.hpp"

namespace gpufeed::tools {
namespace {

TEST(SyntheticSpec, ParsesAndPrints) {
  const formats::SyntheticSpec spec = formats::parse_synthetic_spec("20000:64x32x3");
  EXPECT_EQ(spec.samples, 20000u);
  EXPECT_EQ(spec.shape.height, 64u);
  EXPECT_EQ(spec.shape.width, 32u);
  EXPECT_EQ(spec.shape.channels, 3u);
  EXPECT_EQ(to_string(spec), "20000:64x32x3");
  EXPECT_TRUE(formats::looks_like_synthetic_spec("1:1x1x1"));
  EXPECT_FALSE(formats::looks_like_synthetic_spec("data.npy"));
}

TEST(SyntheticSpec, RejectsBadSpecs) {
  for (const char* text : {"", "10", "10:64x64", "0:8x8x3", "10:0x8x3", "10:8x8x5", "a:8x8x3",
                           "10:8x8x3x", "99999999999999:8x8x3", "1:70000x70000x4"}) {
    EXPECT_THROW(formats::parse_synthetic_spec(text), UsageError) << text;
  }
}

// N is refused before anything is sized from it (the labels of 10^11 samples are 800 GB).
TEST(SyntheticSpec, RejectsMoreSamplesThanADatasetHolds) {
  EXPECT_EQ(formats::parse_synthetic_spec("4294967296:1x1x1").samples, 4294967296u);
  try {
    (void)formats::parse_synthetic_spec("99999999999:1x1x1");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "synthetic dataset '99999999999:1x1x1': 99999999999 samples are more than the "
                 "4294967296 a dataset may hold; use a smaller N");
  }
}

TEST(Synthetic, DeterministicPerSampleAndSeed) {
  const formats::SampleShape shape{16, 12, 3, formats::Layout::nhwc};
  const std::size_t bytes = shape.bytes();
  std::vector<std::uint8_t> all(4 * bytes);
  formats::fill_synthetic(shape, 7, 0, 4, all);
  // Any range on its own gives the same bytes as the whole run.
  std::vector<std::uint8_t> third(bytes);
  formats::fill_synthetic(shape, 7, 2, 1, third);
  EXPECT_TRUE(std::equal(third.begin(), third.end(), all.begin() + 2 * bytes));
  // Samples differ from each other, and seeds change the data.
  EXPECT_FALSE(std::equal(all.begin(), all.begin() + bytes, all.begin() + bytes));
  std::vector<std::uint8_t> other(bytes);
  formats::fill_synthetic(shape, 8, 0, 1, other);
  EXPECT_FALSE(std::equal(other.begin(), other.end(), all.begin()));
}

TEST(Synthetic, ImageLikeNotConstant) {
  const formats::SampleShape shape{32, 32, 1, formats::Layout::nhwc};
  std::vector<std::uint8_t> pixels(shape.bytes());
  formats::fill_synthetic(shape, 1, 5, 1, pixels);
  const auto [lo, hi] = std::minmax_element(pixels.begin(), pixels.end());
  EXPECT_GT(*hi - *lo, 20);
  // Neighbouring pixels are close (a gradient plus small noise), unlike white noise.
  double step = 0;
  for (std::size_t i = 1; i < pixels.size(); ++i) step += std::abs(pixels[i] - pixels[i - 1]);
  EXPECT_LT(step / static_cast<double>(pixels.size()), 40.0);
}

TEST(Synthetic, LabelsInRangeAndNamed) {
  const auto labels = formats::synthetic_labels(1000, 3, 7);
  ASSERT_EQ(labels.size(), 1000u);
  std::vector<int> seen(7, 0);
  for (const auto l : labels) {
    ASSERT_GE(l, 0);
    ASSERT_LT(l, 7);
    ++seen[static_cast<std::size_t>(l)];
  }
  for (const int count : seen) EXPECT_GT(count, 0);
  EXPECT_EQ(formats::synthetic_labels(1000, 3, 7), labels);
  EXPECT_NE(formats::synthetic_labels(1000, 4, 7), labels);
  EXPECT_EQ(formats::synthetic_class_names(3),
            (std::vector<std::string>{"class0", "class1", "class2"}));
  EXPECT_THROW(formats::synthetic_labels(10, 0, 0), UsageError);
}

TEST(Cli, OneLine) {
  EXPECT_EQ(one_line("a\nb\n"), "a; b");
  EXPECT_EQ(one_line("plain"), "plain");
  EXPECT_EQ(one_line("\n"), "unknown error");
}

TEST(Cli, RunGuardedMapsExceptionsToExitCodes) {
  EXPECT_EQ(run_guarded("t", [] { return 0; }), kExitOk);
  EXPECT_EQ(run_guarded("t", []() -> int { throw std::invalid_argument("x"); }), kExitUsage);
  EXPECT_EQ(run_guarded("t", []() -> int { throw std::runtime_error("x"); }), kExitFailure);
  EXPECT_EQ(run_guarded("t", []() -> int { throw 42; }), kExitFailure);
}

TEST(Progress, RendersCountsRateAndEta) {
  const ProgressBar bar("packing", 200, 1000000, false);
  const std::string text = bar.render(50, 2.0);
  EXPECT_NE(text.find("50/200"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0 MB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("ETA 6.0 s"), std::string::npos) << text;
  EXPECT_EQ(format_duration(125), "2m05s");
}

}  // namespace
}  // namespace gpufeed::tools

namespace gpufeed::tools {
namespace {

// Results own memory: under AddressSanitizer's leak check, an item left between the filters of
// a cancelled pipeline would be reported.
TEST(OrderedParallelMap, AnErrorInConsumeStopsInOrderAndLeavesNothingBehind) {
  std::vector<std::uint64_t> consumed;
  try {
    formats::ordered_parallel_map(
        1000, 2, [](std::uint64_t i) { return std::vector<std::uint64_t>(100, i); },
        [&](std::uint64_t i, std::vector<std::uint64_t> v) {
          if (i == 10) throw std::runtime_error("item 10 is bad");
          EXPECT_EQ(v[99], i);
          consumed.push_back(i);
        });
    FAIL() << "the error did not come out";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 10 is bad");
  }
  ASSERT_EQ(consumed.size(), 10u) << "nothing is consumed after the error";
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(consumed[i], i);
}

TEST(OrderedParallelMap, AnErrorInWorkComesOutAfterTheItemsBeforeIt) {
  std::uint64_t consumed = 0;
  EXPECT_THROW(formats::ordered_parallel_map(
                   500, 2,
                   [](std::uint64_t i) {
                     if (i == 37) throw std::invalid_argument("cannot work on 37");
                     return std::string(64, 'x');
                   },
                   [&](std::uint64_t i, const std::string&) { consumed = i + 1; }),
               std::invalid_argument);
  EXPECT_EQ(consumed, 37u);
}

}  // namespace
}  // namespace gpufeed::tools
