#pragma once
#include <cstdint>

namespace gpufeed {

/// What normalization does to one sample beyond (x - mean) / std: take the output window at
/// (crop_y, crop_x) of the stored image, and mirror it left-right when `flip` is set.
struct SampleAugment {
  std::uint32_t crop_y = 0;
  std::uint32_t crop_x = 0;
  std::uint32_t flip = 0;  ///< 0 or 1 (a 32-bit field keeps the struct 12 bytes, no padding)
};

}  // namespace gpufeed
