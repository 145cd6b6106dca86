#include "gpufeed/formats/dataset.hpp"

#include <vector>

namespace gpufeed::formats {

void Dataset::plan_sample_reads(std::span<const std::uint64_t> samples,
                                const storage::ReadAhead& settings) const {
  const std::uint64_t k = samples_per_chunk() == 0 ? 1 : samples_per_chunk();
  std::vector<bool> planned(num_chunks(), false);
  std::vector<std::uint64_t> units;
  for (const std::uint64_t sample : samples) {
    const std::uint64_t unit = sample / k;
    if (unit < planned.size() && !planned[unit]) {
      planned[unit] = true;
      units.push_back(unit);
    }
  }
  plan_reads(units, settings);
}

}  // namespace gpufeed::formats
