#pragma once
// Pillow as the reference for resize and decode: tests/formats/pillow_reference.py run by the
// Python 3 with Pillow that CMake found (none: the comparisons skip).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/resize.hpp"

namespace gpufeed::testing {

/// Why Pillow cannot be used here, or "" when it can.
std::string pillow_unavailable_reason();

/// Writes make_codec_images.py's images of every kind, their manifest.json and Pillow's RGB
/// reading of each into `dir`.
void make_codec_images(const std::string& dir);

/// Writes make_engine_jpegs.py's collection (every kind of file that decides whether the GPU's
/// JPEG engines take it) and its manifest.json into `dir`.
void make_engine_jpegs(const std::string& dir);

/// Pillow's image.resize((width, height), filter, box).
formats::Image pillow_resize(const formats::Image& source, std::uint32_t width,
                             std::uint32_t height, formats::ResizeFilter filter,
                             const std::optional<formats::SourceBox>& box = std::nullopt);

/// Pillow's Image.open(jpeg).convert("RGB"), resized to `width` x `height` with `filter` when
/// `resized` (otherwise `width` x `height` must be the image's size).
formats::Image pillow_decode(const std::vector<std::uint8_t>& jpeg, std::uint32_t width,
                             std::uint32_t height, bool resized = false,
                             formats::ResizeFilter filter = formats::ResizeFilter::bilinear);

}  // namespace gpufeed::testing
