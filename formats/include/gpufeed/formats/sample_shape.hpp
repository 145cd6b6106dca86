#pragma once
#include <cstdint>
#include <string>

namespace gpufeed::formats {

/// How the pixels of one uint8 image are ordered in a file or buffer.
enum class Layout { nhwc, nchw };

std::string to_string(Layout layout);
/// Parses "nhwc" / "nchw"; throws UsageError otherwise.
Layout parse_layout(const std::string& text);

/// The shape of one sample (one image) and its storage order.
struct SampleShape {
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  std::uint32_t channels = 0;
  Layout layout = Layout::nhwc;

  [[nodiscard]] std::uint64_t pixels() const { return std::uint64_t{height} * width; }
  [[nodiscard]] std::uint64_t bytes() const { return pixels() * channels; }
  friend bool operator==(const SampleShape&, const SampleShape&) = default;
};

/// "64x64x3 nhwc"
std::string to_string(const SampleShape& shape);

}  // namespace gpufeed::formats
