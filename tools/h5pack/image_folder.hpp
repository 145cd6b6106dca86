#pragma once
// An image folder in torchvision's ImageFolder convention: one subfolder per class, classes
// sorted by name, label = class index, the files of a class found recursively (folders in
// sorted order, files sorted by name within each, symbolic links followed). Image files are
// recognized by torchvision's extensions, in any case; what they hold is told by their bytes
// when they are decoded, so a PNG named .jpg is read as the PNG it is.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::tools::h5pack {

struct ImageFile {
  std::string path;
  std::int64_t label = 0;
  std::uint64_t bytes = 0;   ///< size when listed (0 when it could not be read)
  std::uint64_t source = 0;  ///< position in the sorted listing (files keep it when shuffled)
  /// Where the image lies in the folder's staging file (tar shards), when it has one.
  std::uint64_t offset = 0;
};

struct ImageFolder {
  std::string root;
  std::vector<std::string> class_names;
  std::vector<ImageFile> files;            ///< the image files, in label then path order
  std::uint64_t other_files = 0;           ///< files without an image extension: not packed
  std::uint64_t hidden = 0;                ///< hidden files and folders (".name"): not packed
  std::vector<std::string> empty_classes;  ///< class folders without an image file
  std::uint64_t total_bytes = 0;
  /// Tar shards' images (webdataset.hpp): the unlinked file they were staged in, each file's
  /// `offset` and `bytes` there. Null for a folder of files.
  std::shared_ptr<const UniqueFd> staging;
};

/// The extensions torchvision's ImageFolder takes as images, in any case: .jpg .jpeg .png
/// .webp .bmp .ppm .pgm .tif .tiff (gpufeed decodes JPEG, PNG and WebP; the others are
/// reported as bad files naming their format).
bool has_image_extension(const std::filesystem::path& path);

/// True when `path` is a folder with at least one subfolder (a plausible image folder).
bool looks_like_image_folder(const std::string& path);

/// Lists the folder. Throws FormatError (one line, naming the folder) when it is not a folder,
/// has no class folders, or holds no image file at all.
ImageFolder scan_image_folder(const std::string& root);

}  // namespace gpufeed::tools::h5pack
