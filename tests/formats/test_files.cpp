#include "test_files.hpp"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::testing {

namespace {

void ok(herr_t status, const char* what) {
  if (status < 0) throw std::runtime_error(std::string("HDF5 call failed in test: ") + what);
}

hid_t ok_id(hid_t id, const char* what) {
  if (id < 0) throw std::runtime_error(std::string("HDF5 call failed in test: ") + what);
  return id;
}

}  // namespace

std::vector<std::uint8_t> test_pixels(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> pixels(count);
  for (std::size_t i = 0; i < count; ++i) {
    pixels[i] = static_cast<std::uint8_t>(1 + rng() % 16 + (i % 3) * 60);
  }
  return pixels;
}

PackedFile write_packed_file(const std::string& path, std::uint64_t num_samples,
                             formats::SampleShape shape, formats::WriterOptions options,
                             std::vector<std::uint64_t> order) {
  PackedFile file;
  file.pixels = test_pixels(num_samples * shape.bytes(), static_cast<std::uint32_t>(num_samples));
  file.labels.resize(num_samples);
  for (std::uint64_t i = 0; i < num_samples; ++i) {
    file.labels[i] = static_cast<std::int64_t>(i * 7 % 10) - 2;
  }
  file.class_names = {"cat", "dog", "zebra \xc3\xa9"};
  formats::DatasetWriter writer(path, num_samples, shape, options);
  if (order.empty()) {
    order.resize(writer.num_chunks());
    std::iota(order.begin(), order.end(), 0);
  }
  for (std::uint64_t chunk : order) {
    const std::uint64_t first = chunk * writer.samples_per_chunk() * shape.bytes();
    const std::uint64_t bytes = writer.chunk_sample_count(chunk) * shape.bytes();
    writer.write(writer.encode(chunk, {file.pixels.data() + first, bytes}));
  }
  writer.write_labels(file.labels);
  writer.write_class_names(file.class_names);
  writer.commit();
  return file;
}

void write_user_file(const std::string& path, const UserDataset& dataset,
                     const std::vector<std::uint8_t>& data) {
  H5Handle fcpl(ok_id(H5Pcreate(H5P_FILE_CREATE), "fcpl"));
  if (dataset.user_block > 0) ok(H5Pset_userblock(fcpl.get(), dataset.user_block), "userblock");
  H5Handle file(ok_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT), "create"));
  std::vector<hsize_t> max_dims = dataset.dims;
  if (dataset.unlimited_first_dim) max_dims[0] = H5S_UNLIMITED;
  const int rank = static_cast<int>(dataset.dims.size());
  H5Handle space(ok_id(H5Screate_simple(rank, dataset.dims.data(), max_dims.data()), "space"));
  H5Handle dcpl(ok_id(H5Pcreate(H5P_DATASET_CREATE), "dcpl"));
  if (!dataset.chunk.empty()) {
    ok(H5Pset_chunk(dcpl.get(), rank, dataset.chunk.data()), "chunk");
  } else {
    ok(H5Pset_layout(dcpl.get(), dataset.layout), "layout");
  }
  if (dataset.configure) dataset.configure(dcpl.get());
  H5Handle lcpl(ok_id(H5Pcreate(H5P_LINK_CREATE), "lcpl"));
  ok(H5Pset_create_intermediate_group(lcpl.get(), 1), "intermediate groups");
  H5Handle created(ok_id(H5Dcreate2(file.get(), dataset.name.c_str(), dataset.type, space.get(),
                                    lcpl.get(), dcpl.get(), H5P_DEFAULT),
                         "dataset"));
  if (!data.empty()) {
    ok(H5Dwrite(created.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
       "write");
  }
}

void add_int_dataset(const std::string& path, const std::string& name,
                     const std::vector<std::int64_t>& values, hid_t type,
                     std::vector<hsize_t> dims) {
  if (dims.empty()) dims = {values.size()};
  H5Handle file(ok_id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "open"));
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0) {
    ok(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT), "delete");
  }
  H5Handle lcpl(ok_id(H5Pcreate(H5P_LINK_CREATE), "lcpl"));
  ok(H5Pset_create_intermediate_group(lcpl.get(), 1), "intermediate groups");
  H5Handle space(
      ok_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "space"));
  H5Handle dataset(ok_id(
      H5Dcreate2(file.get(), name.c_str(), type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      "dataset"));
  ok(H5Dwrite(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
     "write");
}

void copy_file(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

void overwrite(const std::string& path, std::uint64_t offset,
               const std::vector<std::uint8_t>& bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot overwrite " + path);
}

formats::ReaderOptions no_labels(std::optional<formats::Layout> layout) {
  formats::ReaderOptions options;
  options.labels = "";
  options.layout = layout;
  return options;
}

std::string format_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const formats::FormatError& error) {
    return error.what();
  }
  return "";
}

}  // namespace gpufeed::testing
