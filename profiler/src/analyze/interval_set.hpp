#pragma once
// Sorted, disjoint half-open time intervals and the set algebra the gap analysis needs.
#include <cstdint>
#include <vector>

namespace gpufeed::profiler::detail {

struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t length() const noexcept { return end - begin; }
};

/// Invariant: sorted by begin, non-empty, neither overlapping nor touching.
using IntervalSet = std::vector<Interval>;

/// The union of arbitrary intervals (empty ones dropped).
IntervalSet make_union(std::vector<Interval> intervals);
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);
IntervalSet clip(const IntervalSet& a, Interval window);
/// [window] minus `a`: the holes.
IntervalSet complement(const IntervalSet& a, Interval window);
std::int64_t total_length(const IntervalSet& a) noexcept;
/// Length of `x` covered by `a` (binary search; O(log n + k)).
std::int64_t covered(const IntervalSet& a, Interval x) noexcept;

}  // namespace gpufeed::profiler::detail
