#include "h5pack/file_layout.hpp"

#include <hdf5.h>

#include "gpufeed/formats/schema.hpp"

namespace gpufeed::tools::h5pack {

namespace {

bool has_link(hid_t file, const char* path) {
  // Each parent group must exist before H5Lexists may be asked about its child.
  const std::string text = path;
  for (std::size_t at = text.find('/', 1); at != std::string::npos; at = text.find('/', at + 1)) {
    if (H5Lexists(file, text.substr(0, at).c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(file, path, H5P_DEFAULT) > 0;
}

}  // namespace

FileLayout file_layout(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return FileLayout::raw;
  const bool jpeg =
      has_link(file, formats::schema::kJpegBytes) && !has_link(file, formats::schema::kImages);
  H5Fclose(file);
  return jpeg ? FileLayout::jpeg : FileLayout::raw;
}

}  // namespace gpufeed::tools::h5pack
