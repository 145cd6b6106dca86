#include "channel_sums.hpp"

#include <array>

namespace gpufeed::formats::detail {

namespace {

using Histograms = std::array<std::array<std::uint64_t, 256>, 4>;

// The channel count is a template argument so the inner loop unrolls for each of 1-4.
template <std::uint32_t C>
void count_values(std::span<const std::uint8_t> pixels, Histograms& counts) {
  const std::uint8_t* p = pixels.data();
  const std::uint8_t* end = p + pixels.size() / C * C;
  for (; p != end; p += C) {
    for (std::uint32_t c = 0; c < C; ++c) ++counts[c][p[c]];
  }
}

}  // namespace

void channel_sums(std::span<const std::uint8_t> pixels, std::uint32_t channels,
                  std::vector<double>& sum, std::vector<double>& sum_sq) {
  Histograms counts{};
  switch (channels) {
    case 1:
      count_values<1>(pixels, counts);
      break;
    case 2:
      count_values<2>(pixels, counts);
      break;
    case 3:
      count_values<3>(pixels, counts);
      break;
    default:
      count_values<4>(pixels, counts);
      break;
  }
  sum.assign(channels, 0.0);
  sum_sq.assign(channels, 0.0);
  for (std::uint32_t c = 0; c < channels; ++c) {
    std::uint64_t s = 0;
    std::uint64_t s2 = 0;
    for (std::uint64_t v = 0; v < 256; ++v) {
      s += v * counts[c][v];
      s2 += v * v * counts[c][v];
    }
    sum[c] = static_cast<double>(s);
    sum_sq[c] = static_cast<double>(s2);
  }
}

}  // namespace gpufeed::formats::detail
