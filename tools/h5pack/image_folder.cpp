#include "h5pack/image_folder.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::tools::h5pack {

namespace {

namespace fs = std::filesystem;
using formats::FormatError;

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';
}

std::vector<std::string> class_folders(const fs::path& root, std::uint64_t& hidden_count) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    std::error_code ec;
    if (!entry.is_directory(ec)) continue;
    if (hidden(entry.path())) {
      ++hidden_count;  // .ipynb_checkpoints, .git: not a class
      continue;
    }
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Every regular file under `folder` as (its folder, its name), sorted the way Python's
/// sorted(os.walk(folder)) visits them; hidden files and folders are left out and counted.
std::vector<std::pair<std::string, std::string>> files_under(const fs::path& folder,
                                                             std::uint64_t& hidden_count) {
  std::vector<std::pair<std::string, std::string>> files;
  const auto options = fs::directory_options::follow_directory_symlink |
                       fs::directory_options::skip_permission_denied;
  for (auto it = fs::recursive_directory_iterator(folder, options);
       it != fs::recursive_directory_iterator(); ++it) {
    std::error_code ec;
    if (hidden(it->path())) {
      ++hidden_count;
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec)) continue;
    files.emplace_back(it->path().parent_path().string(), it->path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void add_class(ImageFolder& folder, const fs::path& dir, std::int64_t label) {
  std::uint64_t found = 0;
  for (const auto& [parent, name] : files_under(dir, folder.hidden)) {
    const fs::path path = fs::path(parent) / name;
    if (!has_image_extension(path)) {
      ++folder.other_files;
      continue;
    }
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    const std::uint64_t bytes = ec ? 0 : static_cast<std::uint64_t>(size);
    folder.files.push_back({path.string(), label, bytes});
    folder.total_bytes += bytes;
    ++found;
  }
  if (found == 0) folder.empty_classes.push_back(dir.filename().string());
}

}  // namespace

bool has_image_extension(const fs::path& path) {
  const std::string extension = lower(path.extension().string());
  for (const char* image :
       {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".ppm", ".pgm", ".tif", ".tiff"}) {
    if (extension == image) return true;
  }
  return false;
}

bool looks_like_image_folder(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return false;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
    std::error_code type_ec;
    if (entry.is_directory(type_ec)) return true;
  }
  return false;
}

ImageFolder scan_image_folder(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw FormatError(root + " is not a folder; an image folder holds one subfolder of images " +
                      "per class");
  }
  ImageFolder folder;
  folder.root = root;
  folder.class_names = class_folders(root, folder.hidden);
  if (folder.class_names.empty()) {
    throw FormatError(root + " has no class folders; put the images of each class in a " +
                      "subfolder named after the class");
  }
  for (std::size_t k = 0; k < folder.class_names.size(); ++k) {
    add_class(folder, fs::path(root) / folder.class_names[k], static_cast<std::int64_t>(k));
  }
  if (folder.files.empty()) {
    throw FormatError(root + " holds no images (.jpg, .jpeg, .png, .webp, in any case) in its " +
                      std::to_string(folder.class_names.size()) + " class folders (" +
                      std::to_string(folder.other_files) + " other files, " +
                      std::to_string(folder.hidden) + " hidden); put the images of each class " +
                      "in its folder");
  }
  return folder;
}

}  // namespace gpufeed::tools::h5pack
