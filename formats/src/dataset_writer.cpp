#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/base/errors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "deflate.hpp"
#include "gpufeed/formats/channel_sums.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/storage/file_io.hpp"
#include "gpufeed/storage/pending_files.hpp"
#include "hdf5/dataset_meta.hpp"
#include "hdf5/h5.hpp"

namespace gpufeed::formats {

std::uint64_t samples_per_chunk_for(std::uint64_t asked, std::uint64_t sample_bytes) {
  return asked != 0 ? asked
                    : std::max<std::uint64_t>(
                          1, schema::kTargetChunkBytes / std::max<std::uint64_t>(1, sample_bytes));
}

namespace {

std::uint64_t choose_samples_per_chunk(std::uint64_t asked, std::uint64_t num_samples,
                                       std::uint64_t sample_bytes) {
  return std::min(samples_per_chunk_for(asked, sample_bytes), num_samples);
}

void check_arguments(const std::string& path, std::uint64_t num_samples, const SampleShape& shape,
                     const WriterOptions& options) {
  if (shape.layout != Layout::nhwc) {
    throw UsageError("DatasetWriter writes NHWC samples, not " + to_string(shape));
  }
  if (options.gzip_level < 0 || options.gzip_level > 9) {
    throw UsageError("gzip level must be 0-9, not " + std::to_string(options.gzip_level));
  }
  if (num_samples == 0) throw FormatError("cannot write " + path + ": there are no samples");
  if (shape.channels < 1 || shape.channels > 4 || shape.height == 0 || shape.width == 0 ||
      shape.bytes() > schema::kMaxSampleBytes) {
    throw FormatError("cannot write " + path + ": samples of " + to_string(shape) +
                      " are not supported (1-4 channels, at most 256 MiB a sample)");
  }
}

h5::Id create_images(hid_t file, const std::array<hsize_t, 4>& dims, hsize_t samples_per_chunk,
                     int gzip_level, const std::string& context) {
  const hsize_t chunk[4] = {samples_per_chunk, dims[1], dims[2], dims[3]};
  h5::Id space = h5::check_id(H5Screate_simple(4, dims.data(), nullptr), context);
  h5::Id dcpl = h5::check_id(H5Pcreate(H5P_DATASET_CREATE), context);
  h5::check(H5Pset_chunk(dcpl.get(), 4, chunk), context);
  if (gzip_level > 0)
    h5::check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(gzip_level)), context);
  // Every chunk is written whole with H5Dwrite_chunk: pre-filling would only cost time.
  h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_INCR), context);
  h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), context);
  return h5::check_id(H5Dcreate2(file, schema::kImages, H5T_STD_U8LE, space.get(), H5P_DEFAULT,
                                 dcpl.get(), H5P_DEFAULT),
                      context);
}

}  // namespace

struct DatasetWriter::Impl {
  std::string path;
  std::string temporary_path;
  std::uint64_t num_samples = 0;
  SampleShape shape;
  WriterOptions options;
  std::uint64_t samples_per_chunk = 0;
  std::uint64_t num_chunks = 0;
  h5::Id file;
  h5::Id images;
  std::vector<bool> written;
  std::uint64_t written_count = 0;
  std::vector<double> channel_sum;
  std::vector<double> channel_sum_sq;
  bool labels_written = false;
  bool committed = false;
  std::optional<storage::PendingFile> pending;  // temporary_path, until committed

  [[nodiscard]] std::uint64_t chunk_bytes() const { return samples_per_chunk * shape.bytes(); }
  [[nodiscard]] std::string context() const { return "cannot write " + temporary_path; }
  void write_statistics();
  void write_chunk_index();
  void close_file();

  // Without commit() the temporary file is incomplete: it must not outlive the writer.
  ~Impl() {
    if (committed) return;
    if (file) h5::discard_writes(file.get());
    images.reset();
    file.reset();
    if (!temporary_path.empty()) ::unlink(temporary_path.c_str());
  }
};

DatasetWriter::DatasetWriter(std::string path, std::uint64_t num_samples, SampleShape shape,
                             WriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  check_arguments(path, num_samples, shape, options);
  Impl& w = *impl_;
  w.path = std::move(path);
  w.num_samples = num_samples;
  w.shape = shape;
  w.options = options;
  w.samples_per_chunk =
      choose_samples_per_chunk(options.samples_per_chunk, num_samples, shape.bytes());
  if (w.samples_per_chunk > schema::kMaxChunkBytes / shape.bytes()) {
    throw FormatError("cannot write " + w.path + ": chunks of " +
                      std::to_string(w.samples_per_chunk) + " samples exceed the 1024 MiB limit");
  }
  w.num_chunks = (num_samples + w.samples_per_chunk - 1) / w.samples_per_chunk;
  w.written.assign(w.num_chunks, false);
  w.channel_sum.assign(shape.channels, 0.0);
  w.channel_sum_sq.assign(shape.channels, 0.0);
  w.temporary_path = w.path + ".tmp." + std::to_string(::getpid());
  w.pending.emplace(w.temporary_path);  // before the file exists: an interrupt removes it
  w.file = h5::create_file(w.temporary_path);
  const std::array<hsize_t, 4> dims = {num_samples, shape.height, shape.width, shape.channels};
  w.images =
      create_images(w.file.get(), dims, w.samples_per_chunk, options.gzip_level, w.context());
}

DatasetWriter::~DatasetWriter() = default;

const std::string& DatasetWriter::path() const {
  return impl_->path;
}
const std::string& DatasetWriter::temporary_path() const {
  return impl_->temporary_path;
}
std::uint64_t DatasetWriter::num_samples() const {
  return impl_->num_samples;
}
SampleShape DatasetWriter::sample_shape() const {
  return impl_->shape;
}
std::uint64_t DatasetWriter::samples_per_chunk() const {
  return impl_->samples_per_chunk;
}
std::uint64_t DatasetWriter::num_chunks() const {
  return impl_->num_chunks;
}

std::uint64_t DatasetWriter::chunk_sample_count(std::uint64_t index) const {
  const std::uint64_t first = index * impl_->samples_per_chunk;
  if (first >= impl_->num_samples) return 0;
  return std::min(impl_->samples_per_chunk, impl_->num_samples - first);
}

EncodedChunk DatasetWriter::encode(std::uint64_t index, std::span<const std::uint8_t> raw) const {
  const Impl& w = *impl_;
  if (index >= w.num_chunks) {
    throw UsageError("chunk " + std::to_string(index) + " does not exist: " + w.path + " has " +
                     std::to_string(w.num_chunks) + " chunks");
  }
  const std::uint64_t expected = chunk_sample_count(index) * w.shape.bytes();
  if (raw.size() != expected) {
    throw UsageError("chunk " + std::to_string(index) + " needs " + std::to_string(expected) +
                     " bytes, got " + std::to_string(raw.size()));
  }
  EncodedChunk chunk;
  chunk.index = index;
  ChannelSums sums;
  add_pixels(raw, w.shape.channels, sums);
  for (std::uint32_t c = 0; c < w.shape.channels; ++c) {
    chunk.channel_sum.push_back(static_cast<double>(sums.sum[c]));
    chunk.channel_sum_sq.push_back(static_cast<double>(sums.sum_sq[c]));
  }
  if (raw.size() == w.chunk_bytes() && w.options.gzip_level > 0) {
    chunk.bytes = deflate::zlib_compress(raw, w.options.gzip_level);
    return chunk;
  }
  // HDF5 stores every chunk at full size, the last one too: pad it with zeros.
  std::vector<std::uint8_t> whole(raw.begin(), raw.end());
  whole.resize(w.chunk_bytes(), 0);
  chunk.bytes = w.options.gzip_level > 0 ? deflate::zlib_compress(whole, w.options.gzip_level)
                                         : std::move(whole);
  return chunk;
}

void DatasetWriter::write(const EncodedChunk& chunk) {
  h5::silence_errors();  // pack_images() calls this from its own threads
  Impl& w = *impl_;
  if (chunk.index >= w.num_chunks || chunk.channel_sum.size() != w.shape.channels ||
      chunk.channel_sum_sq.size() != w.shape.channels ||
      (w.options.gzip_level == 0 && chunk.bytes.size() != w.chunk_bytes())) {
    throw UsageError("chunk " + std::to_string(chunk.index) +
                     " was not made by this writer's encode()");
  }
  if (w.written[chunk.index]) {
    throw FormatError("cannot write chunk " + std::to_string(chunk.index) + " of " + w.path +
                      " twice");
  }
  const hsize_t offset[4] = {chunk.index * w.samples_per_chunk, 0, 0, 0};
  h5::check(H5Dwrite_chunk(w.images.get(), H5P_DEFAULT, 0, offset, chunk.bytes.size(),
                           chunk.bytes.data()),
            w.context() + " (chunk " + std::to_string(chunk.index) + ")");
  w.written[chunk.index] = true;
  ++w.written_count;
  for (std::size_t c = 0; c < w.channel_sum.size(); ++c) {
    w.channel_sum[c] += chunk.channel_sum[c];
    w.channel_sum_sq[c] += chunk.channel_sum_sq[c];
  }
}

void DatasetWriter::write_labels(std::span<const std::int64_t> labels) {
  h5::silence_errors();
  Impl& w = *impl_;
  if (labels.size() != w.num_samples) {
    throw FormatError("cannot write " + w.path + ": " + std::to_string(labels.size()) +
                      " labels for " + std::to_string(w.num_samples) + " samples");
  }
  if (w.labels_written) throw FormatError("cannot write the labels of " + w.path + " twice");
  h5::write_vector(w.file.get(), schema::kLabels, H5T_STD_I64LE, H5T_NATIVE_INT64, labels.data(),
                   labels.size(), w.context() + " (labels)");
  w.labels_written = true;
}

void DatasetWriter::write_class_names(const std::vector<std::string>& names) {
  h5::silence_errors();
  detail::write_class_names(impl_->file.get(), names, impl_->context() + " (class names)");
}

void DatasetWriter::write_source_index(std::span<const std::uint64_t> index) {
  h5::silence_errors();
  detail::write_source_index(impl_->file.get(), index, impl_->context() + " (source index)");
}

void DatasetWriter::Impl::write_statistics() {
  const double pixels = static_cast<double>(num_samples) * static_cast<double>(shape.pixels());
  std::vector<float> mean(shape.channels);
  std::vector<float> deviation(shape.channels);
  for (std::size_t c = 0; c < mean.size(); ++c) {
    const double m = channel_sum[c] / pixels;
    mean[c] = static_cast<float>(m);
    deviation[c] = static_cast<float>(std::sqrt(std::max(0.0, channel_sum_sq[c] / pixels - m * m)));
  }
  detail::write_channel_stats(file.get(), {mean, deviation}, context() + " (mean and std)");
}

// One B-tree lookup per chunk (O(log n)); H5Dget_chunk_info by position would rescan the
// whole index on every call in HDF5 1.10.
void DatasetWriter::Impl::write_chunk_index() {
  std::vector<std::uint64_t> addresses(num_chunks);
  std::vector<std::uint64_t> sizes(num_chunks);
  for (std::uint64_t i = 0; i < num_chunks; ++i) {
    const hsize_t offset[4] = {i * samples_per_chunk, 0, 0, 0};
    unsigned mask = 0;
    haddr_t address = 0;
    hsize_t size = 0;
    h5::check(H5Dget_chunk_info_by_coord(images.get(), offset, &mask, &address, &size),
              context() + " (chunk index)");
    addresses[i] = address;
    sizes[i] = size;
  }
  h5::Id group = h5::open_or_create_group(file.get(), "/index", context());
  h5::write_vector(group.get(), "chunk_addr", H5T_STD_U64LE, H5T_NATIVE_UINT64, addresses.data(),
                   num_chunks, context() + " (chunk index)");
  h5::write_vector(group.get(), "chunk_size", H5T_STD_U64LE, H5T_NATIVE_UINT64, sizes.data(),
                   num_chunks, context() + " (chunk index)");
}

void DatasetWriter::Impl::close_file() {
  images.reset();
  // H5Fclose is where buffered metadata reaches the disk, so its failure must be seen.
  if (H5Fclose(file.release()) < 0) h5::fail(context());
}

void DatasetWriter::commit() {
  h5::silence_errors();
  Impl& w = *impl_;
  if (w.committed || !w.file) throw FormatError(w.path + " was already committed");
  if (w.written_count != w.num_chunks) {
    const auto missing = std::find(w.written.begin(), w.written.end(), false);
    throw FormatError("cannot commit " + w.path + ": " +
                      std::to_string(w.num_chunks - w.written_count) + " of " +
                      std::to_string(w.num_chunks) + " chunks were not written (first: chunk " +
                      std::to_string(missing - w.written.begin()) + ")");
  }
  if (!w.labels_written) {
    throw FormatError("cannot commit " + w.path + ": labels not written (call write_labels)");
  }
  w.write_statistics();
  w.write_chunk_index();
  h5::write_string_attribute(w.file.get(), schema::kLayoutAttr, schema::kLayoutRaw, w.context());
  h5::write_int_attribute(w.file.get(), schema::kSchemaAttr, schema::kVersion, w.context());
  w.close_file();
  storage::sync_file(w.temporary_path);
  if (std::rename(w.temporary_path.c_str(), w.path.c_str()) != 0) {
    storage::throw_errno("cannot move " + w.temporary_path + " to " + w.path);
  }
  w.committed = true;
  w.pending.reset();
}

}  // namespace gpufeed::formats
