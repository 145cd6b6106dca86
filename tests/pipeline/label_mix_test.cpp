// How an order mixes a file's labels into batches, and the loader's word about a sorted file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/pipeline/label_mix.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;

TEST(LabelMix, RandomDistinctLabelsIsTheHypergeometricExpectation) {
  // Two classes of 50: a batch of 10 misses one with probability C(50,10)/C(100,10).
  std::vector<std::int64_t> labels(100);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = i < 50 ? 0 : 1;
  EXPECT_NEAR(random_distinct_labels(labels, 10), 2 * (1 - 0.000593), 1e-5);
  EXPECT_DOUBLE_EQ(random_distinct_labels(labels, 100), 2.0);
}

TEST(LabelMix, ASortedOrderIsPoorAndAShuffledOneIsNot) {
  std::vector<std::int64_t> labels(2000);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int64_t>(i / 100);
  std::vector<std::uint64_t> order(labels.size());
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  const LabelMix sorted = label_mix(labels, order, 50);
  EXPECT_EQ(sorted.batches, 40u);
  EXPECT_DOUBLE_EQ(sorted.median_distinct, 1.0);
  EXPECT_GT(sorted.random_distinct, 18.0);
  EXPECT_TRUE(sorted.poor());
  // A stride through the classes: every batch holds all 20.
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = (i % 20) * 100 + i / 20;
  const LabelMix strided = label_mix(labels, order, 50);
  EXPECT_DOUBLE_EQ(strided.median_distinct, 20.0);
  EXPECT_FALSE(strided.poor());
  // Unlabeled samples (-1): nothing is measured.
  labels[7] = -1;
  EXPECT_EQ(label_mix(labels, order, 50).batches, 0u);
}

TEST(LabelMix, TheLoaderSaysOnceThatAClassSortedFileInChunkOrderMixesPoorly) {
  testing::TempDir dir;
  const std::string path = dir.file("sorted.h5");
  formats::WriterOptions w;
  w.samples_per_chunk = 32;
  testing::write_dataset_with(
      path, 1024, {4, 4, 3, formats::Layout::nhwc}, w, testing::pixel,
      [](std::uint64_t i) { return static_cast<std::int64_t>(i / 64); }, 2);
  LoaderOptions o = testing::random_order_options(path, 64, 1);
  o.sampling.order = Order::chunk;
  const Loader chunked(o);
  ASSERT_EQ(chunked.notices().size(), 1u);
  EXPECT_THAT(chunked.notices()[0], HasSubstr("{order}=random"));
  EXPECT_TRUE(chunked.label_mix().poor());
  o.sampling.order = Order::random;
  const Loader shuffled(o);
  EXPECT_TRUE(shuffled.notices().empty());
  EXPECT_FALSE(shuffled.label_mix().poor());
}

}  // namespace
}  // namespace gpufeed::pipeline
