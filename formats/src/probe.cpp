#include "gpufeed/formats/probe.hpp"

#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "hdf5/h5.hpp"

namespace gpufeed::formats {

namespace {

std::string layout_attribute(hid_t file) {
  if (H5Aexists(file, schema::kLayoutAttr) <= 0) return {};
  h5::Id attribute(H5Aopen(file, schema::kLayoutAttr, H5P_DEFAULT));
  if (!attribute) return {};
  h5::Id type(H5Aget_type(attribute.get()));
  if (!type || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    return {};
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > 64) return {};
  std::vector<char> text(size + 1, '\0');
  if (H5Aread(attribute.get(), type.get(), text.data()) < 0) return {};
  return text.data();
}

}  // namespace

FileLayout probe_layout(const std::string& path, const std::string& images) {
  h5::silence_errors();
  h5::Id file;
  try {
    file = storage::is_object_url(path) ? h5::open_file(path, storage::open_source(path))
                                        : h5::open_file(path);
  } catch (const IoError&) {
    throw;  // the disk failed: guessing would only give a misleading message later
  } catch (const FormatError&) {
    h5::take_error_stack();
    return FileLayout::raw;  // the reader of the raw layout says what is wrong with it
  }
  const std::string layout = layout_attribute(file.get());
  if (const h5::StackError error = h5::take_error_stack(); error.os_error != 0) {
    h5::fail_os("cannot read " + path, error);
  }
  if (layout == schema::kLayoutJpeg) return FileLayout::jpeg;
  if (layout == schema::kLayoutRaw) return FileLayout::raw;
  const bool jpeg = h5::exists(file.get(), schema::kJpegBytes) && !h5::exists(file.get(), images);
  return jpeg ? FileLayout::jpeg : FileLayout::raw;
}

}  // namespace gpufeed::formats
