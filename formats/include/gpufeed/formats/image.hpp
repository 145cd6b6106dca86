#pragma once
// Interleaved uint8 images (HWC): views into memory someone else owns, and an owning image.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufeed::formats {

/// A writable HWC image in someone else's memory, e.g. one sample's place in a batch slot.
/// Rows are `stride` bytes apart (at least width * channels).
struct ImageView {
  std::uint8_t* data = nullptr;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t channels = 0;
  std::size_t stride = 0;

  [[nodiscard]] std::uint8_t* row(std::uint32_t y) const { return data + y * stride; }
};

/// A read-only HWC image in someone else's memory. Rows are `stride` bytes apart.
struct ConstImageView {
  const std::uint8_t* data = nullptr;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t channels = 0;
  std::size_t stride = 0;

  ConstImageView() = default;
  ConstImageView(const std::uint8_t* pixels, std::uint32_t w, std::uint32_t h, std::uint32_t c,
                 std::size_t row_stride = 0)
      : data(pixels),
        width(w),
        height(h),
        channels(c),
        stride(row_stride != 0 ? row_stride : std::size_t{w} * c) {}
  ConstImageView(const ImageView& v)  // NOLINT(google-explicit-constructor): a view converts
      : data(v.data), width(v.width), height(v.height), channels(v.channels), stride(v.stride) {}

  [[nodiscard]] const std::uint8_t* row(std::uint32_t y) const { return data + y * stride; }
};

/// A rectangle of whole pixels: columns [x, x + width), rows [y, y + height).
struct PixelRect {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;

  friend bool operator==(const PixelRect&, const PixelRect&) = default;
};

/// An HWC image that owns its pixels, rows packed (stride = width * channels).
struct Image {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t channels = 0;
  std::vector<std::uint8_t> pixels;

  Image() = default;
  Image(std::uint32_t w, std::uint32_t h, std::uint32_t c)
      : width(w), height(h), channels(c), pixels(std::size_t{w} * h * c) {}

  [[nodiscard]] std::size_t stride() const { return std::size_t{width} * channels; }
  [[nodiscard]] ImageView view() { return {pixels.data(), width, height, channels, stride()}; }
  [[nodiscard]] ConstImageView view() const {
    return {pixels.data(), width, height, channels, stride()};
  }
};

}  // namespace gpufeed::formats
