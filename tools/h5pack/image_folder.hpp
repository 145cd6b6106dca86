#pragma once
// An image folder in torchvision's ImageFolder convention: one subfolder per class, classes
// sorted by name, label = class index, the files of a class found recursively (folders in
// sorted order, files sorted by name within each).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gpufeed::tools::h5pack {

struct ImageFile {
  std::string path;
  std::int64_t label = 0;
  std::uint64_t bytes = 0;  ///< size when listed (0 when it could not be read)
};

struct ImageFolder {
  std::string root;
  std::vector<std::string> class_names;
  std::vector<ImageFile> files;            ///< the JPEG candidates, in label then path order
  std::uint64_t other_files = 0;           ///< files without a .jpg/.jpeg extension: not packed
  std::vector<std::string> empty_classes;  ///< class folders without a JPEG file
  std::uint64_t total_bytes = 0;
};

/// .jpg or .jpeg, in any case.
bool has_jpeg_extension(const std::filesystem::path& path);

/// True when `path` is a folder with at least one subfolder (a plausible image folder).
bool looks_like_image_folder(const std::string& path);

/// Lists the folder. Throws FormatError (one line, naming the folder) when it is not a folder,
/// has no class folders, or holds no JPEG file at all.
ImageFolder scan_image_folder(const std::string& root);

}  // namespace gpufeed::tools::h5pack
