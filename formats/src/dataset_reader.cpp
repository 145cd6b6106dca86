#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/names.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "hdf5/dataset_meta.hpp"
#include "reader_state.hpp"

namespace gpufeed::formats {

std::string to_string(ReadPath path) {
  return name_of(kReadPathNames, path, "unknown");
}

namespace detail {

std::uint64_t ReaderState::sample_count(std::uint64_t chunk) const {
  const std::uint64_t first = first_sample(chunk);
  const std::uint64_t total = layout.dims[0];
  return first >= total ? 0 : std::min(layout.samples_per_chunk, total - first);
}

std::string ReaderState::where() const {
  return images_name + " in " + path;
}

std::string ReaderState::describe_chunk(std::uint64_t chunk) const {
  const std::uint64_t first = first_sample(chunk);
  const std::uint64_t last = first + std::max<std::uint64_t>(sample_count(chunk), 1) - 1;
  return "chunk " + std::to_string(chunk) + " of " + where() + " (samples " +
         std::to_string(first) + "-" + std::to_string(last) + ")";
}

}  // namespace detail

namespace {

void use_contiguous(detail::ReaderState& state) {
  const haddr_t offset = H5Dget_offset(state.images.get());
  if (offset == HADDR_UNDEF) {  // never written, or kept in external files: let HDF5 read it
    h5::take_error_stack();
    state.read_path = ReadPath::hyperslab;
    return;
  }
  const std::uint64_t samples = state.layout.dims[0];
  const std::uint64_t sample_bytes = state.layout.sample_bytes;
  if (offset > state.file_bytes || samples > (state.file_bytes - offset) / sample_bytes) {
    throw FormatError(state.path + " is truncated: " + state.where() + " needs " +
                      std::to_string(samples) + " samples of " + std::to_string(sample_bytes) +
                      " bytes from byte " + std::to_string(offset) + " but the file has " +
                      std::to_string(state.file_bytes) +
                      " bytes; copy it again or re-create it with h5pack convert");
  }
  state.contiguous_offset = offset;
  state.read_path = ReadPath::contiguous;
}

void choose_read_path(detail::ReaderState& state, const ReaderOptions& options) {
  switch (state.layout.storage) {
    case H5D_CHUNKED:
      if (!state.layout.decodable) {
        state.read_path = ReadPath::hyperslab;
      } else if (options.use_index && detail::chunk_index_applies(state)) {
        detail::load_chunk_index(state);
        state.read_path = ReadPath::index;
      } else {
        state.read_path = ReadPath::direct_chunk;
      }
      return;
    case H5D_CONTIGUOUS:
      return use_contiguous(state);
    default:  // compact (inside the object header) and virtual datasets
      state.read_path = ReadPath::hyperslab;
      return;
  }
}

}  // namespace

struct DatasetReader::Impl {
  ReaderOptions options;
  detail::ReaderState state;
};

DatasetReader::DatasetReader(const std::string& path, ReaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  impl_->options = std::move(options);
  detail::ReaderState& state = impl_->state;
  state.path = path;
  state.images_name = impl_->options.images;
  state.source = storage::open_source(path);
  state.file_bytes = state.source->size();
  state.file = h5::open_file(path, state.source);
  // Without HDF5's chunk cache: the loader caches chunks itself, and after the file shrank
  // under a read, HDF5's cache would keep serving the zeros it read past the end.
  const h5::Id access = h5::check_id(H5Pcreate(H5P_DATASET_ACCESS), "cannot open " + path);
  h5::check(H5Pset_chunk_cache(access.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0,
                               H5D_CHUNK_CACHE_W0_DEFAULT),
            "cannot open " + path);
  state.images = h5::open_dataset_if_exists(state.file.get(), state.images_name, access.get());
  if (!state.images) {
    throw FormatError(path + " has no dataset " + state.images_name +
                      "; give the images dataset's path (the images setting)");
  }
  state.layout = detail::inspect_images(state.images.get(), state.where(), impl_->options);
  const std::uint64_t samples = state.layout.dims[0];
  if (samples > schema::kMaxSamples) {
    throw FormatError(state.where() + " declares " + std::to_string(samples) +
                      " samples, more than the " + std::to_string(schema::kMaxSamples) +
                      " a dataset may hold; the file is damaged");
  }
  detail::check_declared_bytes(state.file.get(), samples * state.layout.sample_bytes,
                               state.where() + " declares " + std::to_string(samples) +
                                   " samples of " + to_string(state.layout.shape));
  // HDF5 1.10 walks the whole chunk B-tree for the storage size (and to answer about any one
  // chunk). In object storage its nodes lie among the chunks, a GET each, one after another (27
  // of them for 1563 chunks): a file with gpufeed's /index takes the size from there, each entry
  // checked against the file's size, not against HDF5's index.
  state.size_from_index =
      state.source->remote() && impl_->options.use_index && detail::chunk_index_applies(state);
  if (!state.size_from_index) {
    state.stored_bytes = H5Dget_storage_size(state.images.get());
    if (state.stored_bytes == 0) {  // nothing written yet, or the chunk index could not be read
      const h5::StackError error = h5::take_error_stack();
      if (error.os_error != 0) h5::fail_os("cannot inspect " + state.where(), error);
    }
  }
  choose_read_path(state, impl_->options);
  const hid_t file = state.file.get();
  meta_.labels = detail::read_labels(file, path, impl_->options.labels, state.images_name, samples);
  meta_.channel_stats = detail::read_channel_stats(file, state.layout.shape.channels);
  meta_.class_names = detail::read_class_names(file, path, *state.source);
  meta_.schema_version = detail::read_schema_version(file);
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;
DatasetReader& DatasetReader::operator=(DatasetReader&&) noexcept = default;

const std::string& DatasetReader::path() const {
  return impl_->state.path;
}
const ReaderOptions& DatasetReader::options() const {
  return impl_->options;
}
std::uint64_t DatasetReader::num_samples() const {
  return impl_->state.layout.dims[0];
}
SampleShape DatasetReader::sample_shape() const {
  return impl_->state.layout.shape;
}
std::uint64_t DatasetReader::samples_per_chunk() const {
  return impl_->state.layout.samples_per_chunk;
}
std::uint64_t DatasetReader::num_chunks() const {
  return impl_->state.layout.num_chunks;
}
std::uint64_t DatasetReader::chunk_buffer_bytes() const {
  return impl_->state.layout.chunk_buffer_bytes();
}
std::uint64_t DatasetReader::chunk_first_sample(std::uint64_t chunk) const {
  return impl_->state.first_sample(chunk);
}
std::uint64_t DatasetReader::chunk_sample_count(std::uint64_t chunk) const {
  return impl_->state.sample_count(chunk);
}
ReadPath DatasetReader::read_path() const {
  return impl_->state.read_path;
}
std::string DatasetReader::read_path_name() const {
  return to_string(read_path());
}

std::string DatasetReader::compression() const {
  return impl_->state.layout.compression;
}
std::uint64_t DatasetReader::stored_bytes() const {
  return impl_->state.stored_bytes;
}

bool DatasetReader::remote() const {
  return impl_->state.source->remote();
}

storage::ObjectStoreStats DatasetReader::network() const {
  return impl_->state.source->network();
}

std::vector<storage::Extent> DatasetReader::unit_extents(
    std::span<const std::uint64_t> chunks) const {
  const detail::ReaderState& state = impl_->state;
  std::vector<storage::Extent> extents;
  extents.reserve(chunks.size());
  for (const std::uint64_t chunk : chunks) {
    if (chunk >= state.layout.num_chunks) continue;
    const std::optional<storage::Extent> at = detail::chunk_extent(state, chunk);
    if (!at) return {};  // read through HDF5: nothing to plan
    extents.push_back(*at);
  }
  return extents;
}

std::shared_ptr<const storage::ByteSource> DatasetReader::byte_source() const {
  return impl_->state.source;
}

namespace {

void check_chunk(const detail::ReaderState& state, std::uint64_t chunk) {
  if (chunk >= state.layout.num_chunks) {
    throw UsageError("chunk " + std::to_string(chunk) + " of " + state.where() +
                     " does not exist: it has " + std::to_string(state.layout.num_chunks) +
                     " chunks");
  }
}

}  // namespace

storage::SharedBytes DatasetReader::view_chunk(std::uint64_t chunk) const {
  const detail::ReaderState& state = impl_->state;
  check_chunk(state, chunk);
  return detail::view_chunk(state, chunk);
}

void DatasetReader::read_chunk(std::uint64_t chunk, std::span<std::uint8_t> out) const {
  const detail::ReaderState& state = impl_->state;
  check_chunk(state, chunk);
  if (out.size() < state.layout.chunk_buffer_bytes()) {
    throw UsageError("read_chunk needs a buffer of " +
                     std::to_string(state.layout.chunk_buffer_bytes()) + " bytes, got " +
                     std::to_string(out.size()));
  }
  detail::read_chunk(state, chunk, out);
}

}  // namespace gpufeed::formats
