#pragma once
// Integers as file formats store them: little-endian, whatever the machine's order.
#include <cstdint>

namespace gpufeed {

/// The 4-byte little-endian unsigned integer at `p`.
inline std::uint32_t load_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

}  // namespace gpufeed
