#include "jpeg_index.hpp"

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "hdf5/dataset_meta.hpp"
#include "hdf5/h5.hpp"

namespace gpufeed::formats::detail {

namespace {

constexpr const char* kRecreate = "; re-create the file with h5pack convert";

std::string where(const char* dataset, const std::string& path) {
  return std::string(dataset) + " in " + path;
}

// Opens an integer dataset of `rank` dimensions or throws naming it.
h5::Id open_integers(hid_t file, const char* name, const std::string& path, int rank) {
  h5::Id dataset = h5::open_dataset_if_exists(file, name);
  if (!dataset) {
    throw FormatError(path + " has no dataset " + name +
                      "; it is not a jpeg-layout file (re-create it with h5pack convert "
                      "--store jpeg)");
  }
  h5::Id type = h5::check_id(H5Dget_type(dataset.get()), "cannot inspect " + where(name, path));
  const std::size_t dims = h5::dims(dataset.get()).size();
  if (!h5::is_integer(type.get()) || dims != static_cast<std::size_t>(rank)) {
    throw FormatError(where(name, path) + " is " + h5::type_name(type.get()) + " " +
                      h5::shape_text(h5::dims(dataset.get())) + "; expected " +
                      std::to_string(rank) + "-D integers" + kRecreate);
  }
  return dataset;
}

[[noreturn]] void bad_offsets(const std::string& path, std::uint64_t sample,
                              const std::string& why) {
  throw FormatError(where(schema::kJpegOffsets, path) + " is damaged at sample " +
                    std::to_string(sample) + ": " + why + kRecreate);
}

void check_offsets(const std::vector<std::uint64_t>& offsets, const std::string& path,
                   std::uint64_t total_bytes) {
  if (offsets.front() != 0) {
    bad_offsets(path, 0, "it starts at byte " + std::to_string(offsets.front()) + ", not 0");
  }
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::uint64_t begin = offsets[i];
    const std::uint64_t end = offsets[i + 1];
    if (end < begin) {
      bad_offsets(path, i,
                  "offsets decrease from " + std::to_string(begin) + " to " + std::to_string(end));
    }
    if (end > total_bytes) {
      bad_offsets(path, i,
                  "it ends at byte " + std::to_string(end) + ", past the end of " +
                      schema::kJpegBytes + " (" + std::to_string(total_bytes) + " bytes)");
    }
    if (end - begin > schema::kMaxSampleBytes) {
      bad_offsets(path, i, "it is " + std::to_string(end - begin) + " bytes, more than 256 MiB");
    }
  }
  if (offsets.back() != total_bytes) {
    bad_offsets(path, offsets.size() - 2,
                "the last sample ends at byte " + std::to_string(offsets.back()) + " but " +
                    schema::kJpegBytes + " holds " + std::to_string(total_bytes) + " bytes");
  }
}

}  // namespace

std::vector<std::uint64_t> read_jpeg_offsets(hid_t file, const std::string& path,
                                             std::uint64_t total_bytes) {
  h5::Id dataset = open_integers(file, schema::kJpegOffsets, path, 1);
  const std::uint64_t entries = h5::dims(dataset.get())[0];
  if (entries < 2 || entries - 1 > schema::kMaxSamples) {
    throw FormatError(where(schema::kJpegOffsets, path) + " has " + std::to_string(entries) +
                      " entries; a file of N samples has N+1 (1 <= N <= " +
                      std::to_string(schema::kMaxSamples) + ")" + kRecreate);
  }
  check_declared_bytes(
      file, entries * sizeof(std::uint64_t),
      where(schema::kJpegOffsets, path) + " declares " + std::to_string(entries) + " offsets");
  std::vector<std::uint64_t> offsets(entries);
  h5::read_prefix(dataset.get(), H5T_NATIVE_UINT64, entries, offsets.data(),
                  "cannot read " + where(schema::kJpegOffsets, path));
  check_offsets(offsets, path, total_bytes);
  return offsets;
}

std::vector<JpegShape> read_jpeg_shapes(hid_t file, const std::string& path,
                                        std::uint64_t samples) {
  h5::Id dataset = open_integers(file, schema::kJpegShapes, path, 2);
  const std::vector<std::uint64_t> dims = h5::dims(dataset.get());
  if (dims[0] != samples || dims[1] != 3) {
    throw FormatError(where(schema::kJpegShapes, path) + " has shape " + h5::shape_text(dims) +
                      " but " + schema::kJpegOffsets + " holds " + std::to_string(samples) +
                      " samples; expected (" + std::to_string(samples) + ", 3)" + kRecreate);
  }
  std::vector<std::uint16_t> flat(samples * 3);
  h5::check(H5Dread(dataset.get(), H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()),
            "cannot read " + where(schema::kJpegShapes, path));
  std::vector<JpegShape> shapes(samples);
  for (std::uint64_t i = 0; i < samples; ++i) {
    shapes[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
  }
  return shapes;
}

std::vector<std::uint32_t> read_jpeg_checksums(hid_t file, const std::string& path,
                                               std::uint64_t samples) {
  if (!h5::exists(file, schema::kJpegCrc32)) return {};
  h5::Id dataset = open_integers(file, schema::kJpegCrc32, path, 1);
  const std::uint64_t entries = h5::dims(dataset.get())[0];
  if (entries != samples) {
    throw FormatError(where(schema::kJpegCrc32, path) + " has " + std::to_string(entries) +
                      " entries for " + std::to_string(samples) + " samples" + kRecreate);
  }
  std::vector<std::uint32_t> checksums(samples);
  h5::read_prefix(dataset.get(), H5T_NATIVE_UINT32, samples, checksums.data(),
                  "cannot read " + where(schema::kJpegCrc32, path));
  return checksums;
}

}  // namespace gpufeed::formats::detail
