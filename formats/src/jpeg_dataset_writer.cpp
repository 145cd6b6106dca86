#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/storage/file_io.hpp"
#include "gpufeed/storage/pending_files.hpp"
#include "hdf5/dataset_meta.hpp"
#include "hdf5/h5.hpp"

namespace gpufeed::formats {

namespace {

// The staging file is unlinked as soon as it is open: it never outlives the process.
UniqueFd open_staging_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) storage::throw_errno("cannot create the staging file " + path);
  ::unlink(path.c_str());
  return fd;
}

// A contiguous dataset allocated at creation and never pre-filled: every byte is written.
h5::Id create_bytes_dataset(hid_t group, std::uint64_t total, const std::string& context) {
  const hsize_t extent[1] = {total};
  h5::Id space = h5::check_id(H5Screate_simple(1, extent, nullptr), context);
  h5::Id dcpl = h5::check_id(H5Pcreate(H5P_DATASET_CREATE), context);
  h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), context);
  h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), context);
  h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), context);
  return h5::check_id(
      H5Dcreate2(group, "bytes", H5T_STD_U8LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      context);
}

void write_block(hid_t dataset, std::uint64_t offset, std::span<const std::uint8_t> block,
                 const std::string& context) {
  const hsize_t start[1] = {offset};
  const hsize_t count[1] = {block.size()};
  h5::Id file_space = h5::check_id(H5Dget_space(dataset), context);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
            context);
  h5::Id memory_space = h5::check_id(H5Screate_simple(1, count, nullptr), context);
  h5::check(H5Dwrite(dataset, H5T_NATIVE_UINT8, memory_space.get(), file_space.get(), H5P_DEFAULT,
                     block.data()),
            context);
}

void write_shapes(hid_t group, const std::vector<JpegShape>& shapes, const std::string& context) {
  std::vector<std::uint16_t> flat;
  flat.reserve(shapes.size() * 3);
  for (const JpegShape& s : shapes) flat.insert(flat.end(), {s.height, s.width, s.channels});
  const hsize_t extent[2] = {shapes.size(), 3};
  h5::Id space = h5::check_id(H5Screate_simple(2, extent, nullptr), context);
  h5::Id dataset = h5::check_id(H5Dcreate2(group, "shapes", H5T_STD_U16LE, space.get(), H5P_DEFAULT,
                                           H5P_DEFAULT, H5P_DEFAULT),
                                context);
  h5::check(H5Dwrite(dataset.get(), H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()),
            context);
}

}  // namespace

struct JpegDatasetWriter::Impl {
  std::string path;
  std::string temporary_path;
  JpegWriterOptions options;
  UniqueFd staging_file;
  std::vector<std::uint8_t> staging;
  std::vector<std::uint64_t> offsets{0};
  std::vector<JpegShape> shapes;
  std::vector<std::uint32_t> checksums;
  std::vector<std::int64_t> labels;
  std::vector<std::string> class_names;
  std::vector<std::uint64_t> source_index;
  std::optional<ChannelStats> channel_stats;
  h5::Id file;
  bool committed = false;
  std::optional<storage::PendingFile> pending;  // temporary_path, until committed

  [[nodiscard]] std::string context() const { return "cannot write " + temporary_path; }
  void flush_staging();
  void copy_bytes(hid_t group);
  void write_index(hid_t group);
  void write_meta();

  ~Impl() {
    if (committed) return;
    if (file) h5::discard_writes(file.get());
    file.reset();
    if (!temporary_path.empty()) ::unlink(temporary_path.c_str());
  }
};

void JpegDatasetWriter::Impl::flush_staging() {
  storage::write_all(staging_file.get(), staging, "cannot write the staging file of " + path);
  staging.clear();
}

void JpegDatasetWriter::Impl::copy_bytes(hid_t group) {
  const std::uint64_t total = offsets.back();
  const std::string where = context() + " (" + schema::kJpegBytes + ")";
  h5::Id bytes = create_bytes_dataset(group, total, where);
  std::vector<std::uint8_t> block(std::min<std::uint64_t>(total, options.copy_block_bytes));
  for (std::uint64_t done = 0; done < total; done += block.size()) {
    const std::span<std::uint8_t> part(block.data(),
                                       std::min<std::uint64_t>(block.size(), total - done));
    const storage::ReadResult got = storage::pread_full(staging_file.get(), part, done);
    if (got.error != 0 || got.bytes != part.size()) {
      errno = got.error != 0 ? got.error : EIO;
      storage::throw_errno("cannot read back the staging file of " + path);
    }
    write_block(bytes.get(), done, part, where);
  }
}

void JpegDatasetWriter::Impl::write_index(hid_t group) {
  const std::string where = context() + " (/jpeg)";
  h5::write_vector(group, "offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, offsets.data(),
                   offsets.size(), where);
  write_shapes(group, shapes, where);
  h5::write_vector(group, "crc32", H5T_STD_U32LE, H5T_NATIVE_UINT32, checksums.data(),
                   checksums.size(), where);
}

void JpegDatasetWriter::Impl::write_meta() {
  h5::write_vector(file.get(), schema::kLabels, H5T_STD_I64LE, H5T_NATIVE_INT64, labels.data(),
                   labels.size(), context() + " (labels)");
  if (!class_names.empty()) {
    detail::write_class_names(file.get(), class_names, context() + " (class names)");
  }
  if (!source_index.empty()) {
    detail::write_source_index(file.get(), source_index, context() + " (source index)");
  }
  if (channel_stats) {
    detail::write_channel_stats(file.get(), *channel_stats, context() + " (mean and std)");
  }
}

JpegDatasetWriter::JpegDatasetWriter(std::string path, JpegWriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  if (options.staging_bytes == 0 || options.copy_block_bytes == 0) {
    throw UsageError("JpegDatasetWriter needs non-zero staging and copy block sizes");
  }
  Impl& w = *impl_;
  w.path = std::move(path);
  w.options = options;
  const std::string pid = std::to_string(::getpid());
  w.staging_file = open_staging_file(w.path + ".bytes.tmp." + pid);
  w.staging.reserve(options.staging_bytes);
  w.temporary_path = w.path + ".tmp." + pid;
  w.pending.emplace(w.temporary_path);  // before the file exists: an interrupt removes it
  w.file = h5::create_file(w.temporary_path);
}

JpegDatasetWriter::~JpegDatasetWriter() = default;

const std::string& JpegDatasetWriter::path() const {
  return impl_->path;
}
const std::string& JpegDatasetWriter::temporary_path() const {
  return impl_->temporary_path;
}
std::uint64_t JpegDatasetWriter::num_samples() const {
  return impl_->shapes.size();
}
std::uint64_t JpegDatasetWriter::total_bytes() const {
  return impl_->offsets.back();
}

std::uint64_t JpegDatasetWriter::append(std::span<const std::uint8_t> bytes, JpegShape shape,
                                        std::int64_t label) {
  Impl& w = *impl_;
  const std::uint64_t sample = w.shapes.size();
  const std::string what = "cannot append sample " + std::to_string(sample) + " to " + w.path;
  if (w.committed) throw FormatError(what + ": the file was already committed");
  if (bytes.empty() || bytes.size() > schema::kMaxSampleBytes) {
    throw FormatError(what + ": it has " + std::to_string(bytes.size()) +
                      " bytes (a sample needs 1 byte to 256 MiB); skip the image");
  }
  if (shape.height == 0 || shape.width == 0 || shape.channels < 1 || shape.channels > 4) {
    throw UsageError(what + ": its shape must be non-empty with 1-4 channels");
  }
  if (w.staging.size() + bytes.size() > w.options.staging_bytes) w.flush_staging();
  if (bytes.size() >= w.options.staging_bytes) {
    storage::write_all(w.staging_file.get(), bytes, "cannot write the staging file of " + w.path);
  } else {
    w.staging.insert(w.staging.end(), bytes.begin(), bytes.end());
  }
  w.offsets.push_back(w.offsets.back() + bytes.size());
  w.shapes.push_back(shape);
  w.checksums.push_back(
      static_cast<std::uint32_t>(libdeflate_crc32(0, bytes.data(), bytes.size())));
  w.labels.push_back(label);
  return sample;
}

void JpegDatasetWriter::set_class_names(std::vector<std::string> names) {
  impl_->class_names = std::move(names);
}

void JpegDatasetWriter::set_source_index(std::vector<std::uint64_t> index) {
  impl_->source_index = std::move(index);
}

void JpegDatasetWriter::set_channel_stats(ChannelStats stats) {
  if (stats.mean.size() != stats.stddev.size() || stats.mean.empty() || stats.mean.size() > 4) {
    throw UsageError("channel statistics need 1-4 means and as many deviations");
  }
  impl_->channel_stats = std::move(stats);
}

void JpegDatasetWriter::commit() {
  h5::silence_errors();  // HDF5 reports errors to stderr on threads that did not silence it
  Impl& w = *impl_;
  if (w.committed || !w.file) throw FormatError(w.path + " was already committed");
  if (w.shapes.empty()) throw FormatError("cannot commit " + w.path + ": there are no samples");
  w.flush_staging();
  {
    h5::Id group = h5::open_or_create_group(w.file.get(), "/jpeg", w.context());
    w.copy_bytes(group.get());
    w.write_index(group.get());
  }
  w.write_meta();
  h5::write_string_attribute(w.file.get(), schema::kLayoutAttr, schema::kLayoutJpeg, w.context());
  h5::write_int_attribute(w.file.get(), schema::kSchemaAttr, schema::kVersion, w.context());
  // H5Fclose is where buffered metadata reaches the disk, so its failure must be seen.
  if (H5Fclose(w.file.release()) < 0) h5::fail(w.context());
  storage::sync_file(w.temporary_path);
  if (std::rename(w.temporary_path.c_str(), w.path.c_str()) != 0) {
    storage::throw_errno("cannot move " + w.temporary_path + " to " + w.path);
  }
  w.committed = true;
  w.pending.reset();
  w.staging_file.reset();
}

}  // namespace gpufeed::formats
