#pragma once
// Real JPEG files for the h5pack tests: smooth random images of mixed sizes, encoded with
// formats::JpegEncoder, laid out as an image folder.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "file_bytes.hpp"
#include "gpufeed/formats/image.hpp"

namespace gpufeed::testing {

/// A smooth random image (gradients and waves plus a little noise): photo-like enough that
/// JPEG encodes it well. `channels` 1 or 3.
formats::Image smooth_image(std::uint32_t width, std::uint32_t height, std::uint32_t channels,
                            std::uint64_t seed);

std::vector<std::uint8_t> encode_jpeg(const formats::Image& image, int quality = 90,
                                      bool progressive = false);

/// One image of a generated folder, in the order h5pack packs them.
struct FolderImage {
  std::string path;
  std::int64_t label = 0;
  std::vector<std::uint8_t> bytes;
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  std::uint32_t channels = 0;
};

/// The class names make_image_folder() uses, sorted as h5pack sorts them.
std::vector<std::string> fixture_classes();

/// Writes an image folder under `root`: classes "Moose", "ant", "zebra" (created in another
/// order), 3-4 images each of sizes 17x23 .. 150x120, two grayscale, one progressive, one in a
/// nested folder, one with a .JPEG extension, and a README.txt that is not an image.
/// Returns the images in label, then torchvision path order.
std::vector<FolderImage> make_image_folder(const std::filesystem::path& root);

}  // namespace gpufeed::testing
