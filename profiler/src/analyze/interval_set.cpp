#include "analyze/interval_set.hpp"

#include <algorithm>

namespace gpufeed::profiler::detail {

IntervalSet make_union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.begin; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  IntervalSet out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin, b[j].begin);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  std::size_t j = 0;
  for (Interval cur : a) {
    while (j < b.size() && b[j].end <= cur.begin) ++j;
    for (std::size_t k = j; k < b.size() && b[k].begin < cur.end; ++k) {
      if (b[k].begin > cur.begin) out.push_back({cur.begin, b[k].begin});
      cur.begin = std::max(cur.begin, b[k].end);
    }
    if (cur.begin < cur.end) out.push_back(cur);
  }
  return out;
}

IntervalSet clip(const IntervalSet& a, Interval window) {
  return intersect(a, {window});
}

IntervalSet complement(const IntervalSet& a, Interval window) {
  if (window.end <= window.begin) return {};
  return subtract({window}, a);
}

std::int64_t total_length(const IntervalSet& a) noexcept {
  std::int64_t sum = 0;
  for (const Interval& i : a) sum += i.length();
  return sum;
}

std::int64_t covered(const IntervalSet& a, Interval x) noexcept {
  auto it = std::upper_bound(a.begin(), a.end(), x.begin,
                             [](std::int64_t t, const Interval& i) { return t < i.end; });
  std::int64_t sum = 0;
  for (; it != a.end() && it->begin < x.end; ++it) {
    sum += std::min(it->end, x.end) - std::max(it->begin, x.begin);
  }
  return sum;
}

}  // namespace gpufeed::profiler::detail
