#include "decode_split.hpp"

#include <algorithm>
#include <cmath>

namespace gpufeed::pipeline::detail {

double DecodeSplit::Ring::quantile(double q) const {
  const std::size_t n = std::min(count, kWindow);
  if (n == 0) return 0;
  std::array<double, kWindow> sorted = values;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  const auto at = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n))) - 1;
  return sorted[std::min(at, n - 1)];
}

void DecodeSplit::record_engines(std::uint32_t images, std::int64_t device_ns, unsigned lanes) {
  if (images == 0 || device_ns <= 0) return;
  const std::lock_guard lock(mutex_);
  engine_.push(static_cast<double>(device_ns) / images / std::max(1u, lanes));
}

void DecodeSplit::record_cpu(std::uint32_t images, std::int64_t busy_ns) {
  if (images == 0 || busy_ns <= 0) return;
  const std::lock_guard lock(mutex_);
  cpu_.push(static_cast<double>(busy_ns) / images);
}

void DecodeSplit::record_consumer(std::uint32_t images, std::int64_t interval_ns,
                                  std::int64_t wait_ns) {
  if (images == 0 || interval_ns <= 0) return;
  const std::lock_guard lock(mutex_);
  consumer_.push(static_cast<double>(std::max<std::int64_t>(0, interval_ns - wait_ns)) / images);
}

DecodeSplit::Rates DecodeSplit::rates() const {
  const std::lock_guard lock(mutex_);
  // The engines' slow batches (p90) decide whether they keep up; the others' medians.
  return {engine_.quantile(0.9), cpu_.quantile(0.5), consumer_.quantile(0.5)};
}

std::uint32_t DecodeSplit::cpu_share(std::uint32_t decodable, unsigned workers) const {
  const Rates r = rates();
  if (r.engine_ns <= 0 || r.consumer_ns <= 0 || decodable == 0) return 0;
  // The engines alone take engine_ns an image; the consumer takes an image every consumer_ns.
  const double need = 1.0 - kHeadroom * r.consumer_ns / r.engine_ns;
  if (need <= 0) return 0;
  double share = need;
  if (r.cpu_ns > 0) {
    // Both sides finish a batch together at this share; past it the workers are the bottleneck.
    const double cpu_rate = std::max(1u, workers) / r.cpu_ns, engine_rate = 1.0 / r.engine_ns;
    share = std::min(share, cpu_rate / (cpu_rate + engine_rate));
  }
  return static_cast<std::uint32_t>(std::lround(share * decodable));
}

}  // namespace gpufeed::pipeline::detail
