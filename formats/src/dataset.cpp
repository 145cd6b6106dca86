#include "gpufeed/formats/dataset.hpp"

#include <vector>

namespace gpufeed::formats {

namespace {

/// Each sample's unit, once, in first-use order.
std::vector<std::uint64_t> units_of(const Dataset& d, std::span<const std::uint64_t> samples) {
  const std::uint64_t k = d.samples_per_chunk() == 0 ? 1 : d.samples_per_chunk();
  std::vector<bool> planned(d.num_chunks(), false);
  std::vector<std::uint64_t> units;
  for (const std::uint64_t sample : samples) {
    const std::uint64_t unit = sample / k;
    if (unit < planned.size() && !planned[unit]) {
      planned[unit] = true;
      units.push_back(unit);
    }
  }
  return units;
}

void plan(const Dataset& d, std::vector<storage::Extent> extents,
          const storage::ReadAhead& settings) {
  const std::shared_ptr<const storage::ByteSource> source = d.byte_source();
  if (source && source->remote()) source->plan(std::move(extents), settings);
}

}  // namespace

void Dataset::plan_reads(std::span<const std::uint64_t> units,
                         const storage::ReadAhead& settings) const {
  plan(*this, unit_extents(units), settings);
}

void Dataset::plan_sample_reads(std::span<const std::uint64_t> samples,
                                const storage::ReadAhead& settings) const {
  plan(*this, sample_extents(samples), settings);
}

std::vector<storage::Extent> Dataset::sample_extents(std::span<const std::uint64_t> samples) const {
  return unit_extents(units_of(*this, samples));
}

}  // namespace gpufeed::formats
