#include "gpufeed/pipeline/label_mix.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

namespace gpufeed::pipeline {

double LabelMix::ratio() const {
  if (batches == 0 || random_distinct <= 0) return 1.0;
  return median_distinct / random_distinct;
}

double random_distinct_labels(std::span<const std::int64_t> labels, std::uint32_t batch_size) {
  std::unordered_map<std::int64_t, std::uint64_t> counts;
  for (const std::int64_t l : labels) ++counts[l];
  const auto n = static_cast<double>(labels.size());
  const double b = std::min<double>(batch_size, n);
  // log C(N - k, B) - log C(N, B) = lgamma(N-k+1) - lgamma(N-k-B+1) - lgamma(N+1) + lgamma(N-B+1)
  const double base = std::lgamma(n - b + 1) - std::lgamma(n + 1);
  double expected = 0;
  for (const auto& [label, count] : counts) {
    const double k = static_cast<double>(count);
    if (n - k < b) {
      expected += 1.0;  // every batch holds it
      continue;
    }
    expected += 1.0 - std::exp(std::lgamma(n - k + 1) - std::lgamma(n - k - b + 1) + base);
  }
  return expected;
}

LabelMix label_mix(std::span<const std::int64_t> labels, std::span<const std::uint64_t> order,
                   std::uint32_t batch_size) {
  LabelMix mix;
  if (labels.empty() || batch_size == 0 || order.size() < batch_size) return mix;
  if (std::any_of(labels.begin(), labels.end(), [](std::int64_t l) { return l < 0; })) return mix;
  std::vector<double> distinct;
  std::vector<std::int64_t> batch(batch_size);
  for (std::size_t first = 0; first + batch_size <= order.size(); first += batch_size) {
    for (std::uint32_t i = 0; i < batch_size; ++i) batch[i] = labels[order[first + i]];
    std::sort(batch.begin(), batch.end());
    distinct.push_back(
        static_cast<double>(std::unique(batch.begin(), batch.end()) - batch.begin()));
  }
  const auto middle = distinct.begin() + static_cast<std::ptrdiff_t>(distinct.size() / 2);
  std::nth_element(distinct.begin(), middle, distinct.end());
  mix.median_distinct = *middle;
  mix.random_distinct = random_distinct_labels(labels, batch_size);
  mix.batches = distinct.size();
  return mix;
}

}  // namespace gpufeed::pipeline
