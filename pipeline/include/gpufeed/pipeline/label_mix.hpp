#pragma once
// How well an order mixes a file's labels into batches: what batch statistics (BatchNorm) and
// gradients see, measured against what a random permutation of the same labels gives.
#include <cstdint>
#include <span>
#include <string>

namespace gpufeed::pipeline {

/// Distinct labels per batch along an order, against a random order of the same labels.
struct LabelMix {
  double median_distinct = 0;  ///< the median batch's count of distinct labels
  double random_distinct = 0;  ///< the expected count in a batch of a random permutation
  std::uint64_t batches = 0;   ///< full batches measured; 0: not measured (no labels)

  /// median_distinct / random_distinct (1 when not measured).
  [[nodiscard]] double ratio() const;
  /// Batches noticeably less mixed than a random order's: under 0.9 of its distinct labels.
  [[nodiscard]] bool poor() const { return batches > 0 && ratio() < 0.9; }
};

/// The mix of `labels` (one per sample; negative: unlabeled, then nothing is measured) in the
/// full batches of `batch_size` along `order` (sample indices). O(order size).
LabelMix label_mix(std::span<const std::int64_t> labels, std::span<const std::uint64_t> order,
                   std::uint32_t batch_size);

/// The expected distinct labels in a batch of `batch_size` drawn without replacement from
/// `labels`: the sum over labels of 1 - C(N - n, B) / C(N, B).
double random_distinct_labels(std::span<const std::int64_t> labels, std::uint32_t batch_size);

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::LabelMix;
}  // namespace gpufeed
