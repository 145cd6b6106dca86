#pragma once
// Builders for the HDF5 files the formats tests read: packed with DatasetWriter, or made
// with the raw HDF5 C API the way other tools (h5py, HDF5 utilities) would make them.
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {

/// Owns one HDF5 id in a test.
class H5Handle {
 public:
  explicit H5Handle(hid_t id) : id_(id) {}
  ~H5Handle() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  [[nodiscard]] hid_t get() const { return id_; }

 private:
  hid_t id_;
};

/// Non-zero, somewhat compressible bytes, the same for the same seed.
std::vector<std::uint8_t> test_pixels(std::size_t count, std::uint32_t seed);

/// What write_packed_file() stored, to compare a reader against.
struct PackedFile {
  std::vector<std::uint8_t> pixels;  ///< every sample, NHWC, back to back
  std::vector<std::int64_t> labels;
  std::vector<std::string> class_names;
};

/// Writes a schema v1 file with DatasetWriter: chunks encoded and written in `order`
/// (empty: 0, 1, 2, ...).
PackedFile write_packed_file(const std::string& path, std::uint64_t num_samples,
                             formats::SampleShape shape, formats::WriterOptions options,
                             std::vector<std::uint64_t> order = {});

/// How a user's file is laid out, for write_user_file().
struct UserDataset {
  std::string name = "/images";
  std::vector<hsize_t> dims;
  std::vector<hsize_t> chunk;                 ///< empty: not chunked
  H5D_layout_t layout = H5D_CHUNKED;          ///< used when `chunk` is empty
  hid_t type = H5T_NATIVE_UINT8;              ///< the file's element type
  std::function<void(hid_t dcpl)> configure;  ///< adds filters, fill values, ...
  hsize_t user_block = 0;
  bool unlimited_first_dim = false;
};

/// Creates `path` with one dataset as described and writes `data` into it (H5Dwrite of the
/// whole dataset, as uint8) unless `data` is empty.
void write_user_file(const std::string& path, const UserDataset& dataset,
                     const std::vector<std::uint8_t>& data);

/// A file of one dataset (`dims` in chunks of `chunk`; no chunk: `dataset.layout`) in a folder
/// of its own: set `dataset`'s other fields, then write() creates the file.
struct UserFile {
  UserFile(const std::string& name, std::vector<hsize_t> dims, std::vector<hsize_t> chunk = {})
      : path(dir.file(name)) {
    dataset.dims = std::move(dims);
    dataset.chunk = std::move(chunk);
  }
  void write(const std::vector<std::uint8_t>& data) const { write_user_file(path, dataset, data); }
  TempDir dir;
  std::string path;
  UserDataset dataset;
};

/// Adds (or replaces) an integer dataset `name` holding `values` as `type`, shape `dims`.
void add_int_dataset(const std::string& path, const std::string& name,
                     const std::vector<std::int64_t>& values, hid_t type,
                     std::vector<hsize_t> dims = {});

/// Copies a file.
void copy_file(const std::string& from, const std::string& to);
/// Overwrites bytes of a file at `offset`.
void overwrite(const std::string& path, std::uint64_t offset,
               const std::vector<std::uint8_t>& bytes);

/// Reader options for a file without labels, of the given layout (none: the file's).
formats::ReaderOptions no_labels(std::optional<formats::Layout> layout = std::nullopt);

/// The first message of the FormatError `action` throws ("" when it throws none).
std::string format_error_of(const std::function<void()>& action);

}  // namespace gpufeed::testing
