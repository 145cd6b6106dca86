#include "gpufeed/pipeline/stats.hpp"

namespace gpufeed::pipeline {

double LoaderStats::busy_fraction(Stage s) const {
  if (wall_ns <= 0) return 0.0;
  const bool consumer_side = s == Stage::wait || s == Stage::step || s == Stage::transform;
  const double capacity =
      static_cast<double>(wall_ns) * (consumer_side || workers == 0 ? 1.0 : workers);
  return static_cast<double>((*this)[s].busy_ns) / capacity;
}

std::optional<Stage> LoaderStats::bottleneck() const {
  std::optional<Stage> best;
  double best_busy = 0.0;
  for (Stage s : {Stage::read, Stage::decode, Stage::assemble, Stage::h2d, Stage::normalize,
                  Stage::transform}) {
    const double busy = busy_fraction(s);
    if ((*this)[s].items > 0 && busy > best_busy) {
      best = s;
      best_busy = busy;
    }
  }
  return best;
}

LoaderStats LoaderStats::since(const LoaderStats& earlier) const {
  LoaderStats d = *this;
  for (std::size_t i = 0; i < kStageCount; ++i) {
    d.stages[i].busy_ns -= earlier.stages[i].busy_ns;
    d.stages[i].items -= earlier.stages[i].items;
  }
  d.wall_ns -= earlier.wall_ns;
  d.batches -= earlier.batches;
  d.samples -= earlier.samples;
  d.fresh_batches -= earlier.fresh_batches;
  d.echoed_batches -= earlier.echoed_batches;
  d.reaugmented_batches -= earlier.reaugmented_batches;
  d.chunk_reads -= earlier.chunk_reads;
  d.bytes_read -= earlier.bytes_read;
  d.cache_hits -= earlier.cache_hits;
  d.cache_misses -= earlier.cache_misses;
  d.skipped_samples -= earlier.skipped_samples;
  d.decode = decode.since(earlier.decode);
  if (d.network && earlier.network) {
    static_cast<storage::ObjectStoreStats&>(*d.network) = d.network->since(*earlier.network);
  }
  return d;
}

DecodeStats DecodeStats::since(const DecodeStats& earlier) const {
  DecodeStats d = *this;
  d.engine_images -= earlier.engine_images;
  d.cpu_images -= earlier.cpu_images;
  d.failed_parts -= earlier.failed_parts;
  d.engine_device_ns -= earlier.engine_device_ns;
  d.cpu_reasons.clear();
  for (const auto& [reason, count] : cpu_reasons) {
    std::uint64_t before = 0;
    for (const auto& [r, c] : earlier.cpu_reasons) {
      if (r == reason) before = c;
    }
    if (count > before) d.cpu_reasons.emplace_back(reason, count - before);
  }
  return d;
}

void StageCounters::reset() noexcept {
  for (auto& b : busy_ns) b.store(0, std::memory_order_relaxed);
  for (auto& i : items) i.store(0, std::memory_order_relaxed);
}

}  // namespace gpufeed::pipeline
