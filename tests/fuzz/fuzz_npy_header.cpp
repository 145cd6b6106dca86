// libFuzzer target: any bytes as the start of a .npy file. A FormatError is the expected answer
// to a bad header; a header that parses must describe data inside the file it came from.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "gpufeed/formats/error.hpp"
#include "npy_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto header = gpufeed::formats::detail::parse_npy_header(
        std::span<const std::uint8_t>(data, size), "fuzz.npy");
    std::uint64_t elements = 1;
    for (std::uint64_t d : header.shape) elements *= d;
    if (elements != header.element_count || header.data_offset > size || header.item_size == 0) {
      std::abort();  // parsed, but inconsistent
    }
  } catch (const gpufeed::formats::FormatError&) {
  }
  return 0;
}
