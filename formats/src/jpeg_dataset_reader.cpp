#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "hdf5/dataset_meta.hpp"
#include "hdf5/h5.hpp"
#include "jpeg_index.hpp"

namespace gpufeed::formats {

namespace {

constexpr const char* kRecreate = "; copy it again or re-create it with h5pack convert";

// The bytes dataset: 1-D uint8. A raw-layout file gets a message that says so.
h5::Id open_bytes(hid_t file, const std::string& path) {
  h5::Id bytes = h5::open_dataset_if_exists(file, schema::kJpegBytes);
  if (!bytes) {
    const bool raw = h5::exists(file, schema::kImages);
    throw FormatError(path + " has no dataset " + schema::kJpegBytes +
                      (raw ? "; it holds /images (the raw layout): read it as a raw file"
                           : "; re-create it with h5pack convert --store jpeg"));
  }
  const std::string where = std::string(schema::kJpegBytes) + " in " + path;
  h5::Id type = h5::check_id(H5Dget_type(bytes.get()), "cannot inspect " + where);
  const std::vector<std::uint64_t> dims = h5::dims(bytes.get());
  if (!h5::is_uint8(type.get()) || dims.size() != 1) {
    throw FormatError(where + " is " + h5::type_name(type.get()) + " " + h5::shape_text(dims) +
                      "; expected 1-D uint8; re-create it with h5pack convert --store jpeg");
  }
  return bytes;
}

std::optional<ChannelStats> read_stats(hid_t file) {
  std::optional<ChannelStats> stats = detail::read_channel_stats(file, 3);
  return stats ? stats : detail::read_channel_stats(file, 1);
}

}  // namespace

struct JpegDatasetReader::Impl {
  std::string path;
  std::shared_ptr<const storage::ByteSource> source;  // before `file`, which may read through it
  h5::Id file;
  h5::Id bytes;
  JpegReadPath read_path = JpegReadPath::hyperslab;
  std::uint64_t total_bytes = 0;
  std::uint64_t file_bytes = 0;  ///< the file's size when it was opened
  std::uint64_t base = 0;        ///< absolute file offset of /jpeg/bytes (contiguous path)
  std::vector<std::uint64_t> offsets;
  std::vector<JpegShape> shapes;
  std::vector<std::uint32_t> checksums;
  std::uint64_t block = 1;  ///< images of a block

  [[nodiscard]] std::string describe(std::uint64_t sample) const {
    return "sample " + std::to_string(sample) + " of " + schema::kJpegBytes + " in " + path;
  }
  void choose_read_path();
  void check_sample(std::uint64_t sample) const;
  void read_contiguous(std::uint64_t sample, std::span<std::uint8_t> out) const;
  void read_hyperslab(std::uint64_t sample, std::span<std::uint8_t> out) const;
  void check_not_truncated(std::uint64_t sample) const;
};

void JpegDatasetReader::Impl::choose_read_path() {
  h5::Id dcpl = h5::check_id(H5Dget_create_plist(bytes.get()), "cannot inspect " + path);
  const haddr_t offset =
      H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS ? H5Dget_offset(bytes.get()) : HADDR_UNDEF;
  if (offset == HADDR_UNDEF) {  // chunked, compact, external or never written: HDF5 reads it
    h5::take_error_stack();
    read_path = JpegReadPath::hyperslab;
    return;
  }
  if (offset > file_bytes || total_bytes > file_bytes - offset) {
    throw FormatError(path + " is truncated: " + schema::kJpegBytes + " needs " +
                      std::to_string(total_bytes) + " bytes from byte " + std::to_string(offset) +
                      " but the file has " + std::to_string(file_bytes) + " bytes" + kRecreate);
  }
  base = offset;
  read_path = JpegReadPath::contiguous;
}

void JpegDatasetReader::Impl::check_sample(std::uint64_t sample) const {
  if (sample >= shapes.size()) {
    throw UsageError(describe(sample) + " does not exist: the file has " +
                     std::to_string(shapes.size()) + " samples");
  }
  if (offsets[sample] == offsets[sample + 1]) {
    throw FormatError(describe(sample) + " is empty (" + schema::kJpegOffsets + " gives it 0 " +
                      "bytes); skip bad samples (the on_error setting) or re-create the file with "
                      "h5pack convert");
  }
}

void JpegDatasetReader::Impl::read_contiguous(std::uint64_t sample,
                                              std::span<std::uint8_t> out) const {
  source->read(out, base + offsets[sample], [&] { return describe(sample); });
}

void JpegDatasetReader::Impl::read_hyperslab(std::uint64_t sample,
                                             std::span<std::uint8_t> out) const {
  h5::silence_errors();
  const std::string context = "cannot read " + describe(sample);
  const hsize_t start[1] = {offsets[sample]};
  const hsize_t count[1] = {out.size()};
  h5::Id file_space = h5::check_id(H5Dget_space(bytes.get()), context);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
            context);
  h5::Id memory_space = h5::check_id(H5Screate_simple(1, count, nullptr), context);
  if (H5Dread(bytes.get(), H5T_NATIVE_UINT8, memory_space.get(), file_space.get(), H5P_DEFAULT,
              out.data()) < 0) {
    check_not_truncated(sample);  // the clearer reason, when it is the reason
    h5::fail(context, kRecreate);
  }
  // HDF5 reads the bytes past the end of a file that shrank after it was opened as zeros.
  check_not_truncated(sample);
}

void JpegDatasetReader::Impl::check_not_truncated(std::uint64_t sample) const {
  const std::uint64_t now = source->current_size();
  if (now >= file_bytes) return;
  throw FormatError(path + " is truncated: it had " + std::to_string(file_bytes) +
                    " bytes when it was opened and has " + std::to_string(now) + " now (reading " +
                    describe(sample) + ")" + kRecreate);
}

JpegDatasetReader::JpegDatasetReader(const std::string& path, JpegReaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  Impl& r = *impl_;
  r.path = path;
  r.source = storage::open_source(path);
  r.file_bytes = r.source->size();
  r.file = h5::open_file(path, r.source);
  const hid_t file = r.file.get();
  r.bytes = open_bytes(file, path);
  r.total_bytes = h5::dims(r.bytes.get())[0];
  r.offsets = detail::read_jpeg_offsets(file, path, r.total_bytes);
  const std::uint64_t samples = r.offsets.size() - 1;
  r.shapes = detail::read_jpeg_shapes(file, path, samples);
  r.checksums = detail::read_jpeg_checksums(file, path, samples);
  const double mean = samples == 0 ? 1.0 : double(r.total_bytes) / double(samples);
  r.block = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::llround(double(kJpegBlockBytes) / std::max(mean, 1.0))), 1,
      std::max<std::uint64_t>(samples, 1));
  r.choose_read_path();
  meta_.labels = detail::read_labels(file, path, options.labels, schema::kJpegOffsets, samples);
  meta_.channel_stats = read_stats(file);
  meta_.class_names = detail::read_class_names(file, path, *r.source);
  meta_.schema_version = detail::read_schema_version(file);
}

JpegDatasetReader::~JpegDatasetReader() = default;
JpegDatasetReader::JpegDatasetReader(JpegDatasetReader&&) noexcept = default;
JpegDatasetReader& JpegDatasetReader::operator=(JpegDatasetReader&&) noexcept = default;

const std::string& JpegDatasetReader::path() const {
  return impl_->path;
}
std::uint64_t JpegDatasetReader::num_samples() const {
  return impl_->shapes.size();
}
std::uint64_t JpegDatasetReader::samples_per_chunk() const {
  return impl_->block;
}
std::uint64_t JpegDatasetReader::num_chunks() const {
  return (num_samples() + impl_->block - 1) / impl_->block;
}
std::uint64_t JpegDatasetReader::total_bytes() const {
  return impl_->total_bytes;
}
JpegReadPath JpegDatasetReader::read_path() const {
  return impl_->read_path;
}
std::string JpegDatasetReader::read_path_name() const {
  return impl_->read_path == JpegReadPath::contiguous ? "jpeg contiguous (pread)"
                                                      : "jpeg hyperslab";
}
const std::vector<std::uint64_t>& JpegDatasetReader::offsets() const {
  return impl_->offsets;
}
JpegShape JpegDatasetReader::shape(std::uint64_t sample) const {
  return impl_->shapes.at(sample);
}
std::uint64_t JpegDatasetReader::sample_size(std::uint64_t sample) const {
  return impl_->offsets.at(sample + 1) - impl_->offsets.at(sample);
}
bool JpegDatasetReader::has_checksums() const {
  return !impl_->checksums.empty();
}

void JpegDatasetReader::read_sample(std::uint64_t sample, std::span<std::uint8_t> out) const {
  const Impl& r = *impl_;
  r.check_sample(sample);
  if (out.size() != sample_size(sample)) {
    throw UsageError("read_sample needs " + std::to_string(sample_size(sample)) + " bytes for " +
                     r.describe(sample) + ", got " + std::to_string(out.size()));
  }
  if (r.read_path == JpegReadPath::contiguous) {
    r.read_contiguous(sample, out);
  } else {
    r.read_hyperslab(sample, out);
  }
}

bool JpegDatasetReader::remote() const {
  return impl_->source->remote();
}

storage::ObjectStoreStats JpegDatasetReader::network() const {
  return impl_->source->network();
}

std::vector<storage::Extent> JpegDatasetReader::unit_extents(
    std::span<const std::uint64_t> blocks) const {
  const Impl& r = *impl_;
  if (r.read_path != JpegReadPath::contiguous) return {};
  const std::uint64_t n = r.shapes.size();
  std::vector<storage::Extent> extents;
  extents.reserve(blocks.size());
  for (const std::uint64_t block : blocks) {
    const std::uint64_t first = block * r.block;
    if (first >= n) continue;
    const std::uint64_t end = std::min(n, first + r.block);
    extents.push_back({r.base + r.offsets[first], r.offsets[end] - r.offsets[first]});
  }
  return extents;
}

std::vector<storage::Extent> JpegDatasetReader::sample_extents(
    std::span<const std::uint64_t> samples) const {
  const Impl& r = *impl_;
  if (r.read_path != JpegReadPath::contiguous) return {};
  std::vector<storage::Extent> extents;
  extents.reserve(samples.size());
  for (const std::uint64_t sample : samples) {
    if (sample < r.shapes.size()) {
      extents.push_back({r.base + r.offsets[sample], r.offsets[sample + 1] - r.offsets[sample]});
    }
  }
  return extents;
}

std::shared_ptr<const storage::ByteSource> JpegDatasetReader::byte_source() const {
  return impl_->source;
}

ImageFormat JpegDatasetReader::sample_format(std::uint64_t sample) const {
  const Impl& r = *impl_;
  r.check_sample(sample);
  std::array<std::uint8_t, 16> head{};
  const std::span<std::uint8_t> out(head.data(),
                                    std::min<std::uint64_t>(head.size(), sample_size(sample)));
  if (r.read_path == JpegReadPath::contiguous) {
    r.read_contiguous(sample, out);
  } else {
    r.read_hyperslab(sample, out);
  }
  return sniff_image_format(out);
}

void JpegDatasetReader::sample_bytes(std::uint64_t sample, std::vector<std::uint8_t>& out) const {
  impl_->check_sample(sample);
  out.resize(sample_size(sample));
  read_sample(sample, out);
}

bool JpegDatasetReader::verify_checksum(std::uint64_t sample,
                                        std::span<const std::uint8_t> bytes) const {
  const Impl& r = *impl_;
  if (r.checksums.empty()) {
    throw FormatError(r.path + " has no " + schema::kJpegCrc32 +
                      " to verify against; re-create it with h5pack convert to store checksums");
  }
  const auto crc = static_cast<std::uint32_t>(libdeflate_crc32(0, bytes.data(), bytes.size()));
  return crc == r.checksums.at(sample);
}

bool JpegDatasetReader::verify_checksum(std::uint64_t sample) const {
  std::vector<std::uint8_t> bytes;  // verification reads each sample once
  sample_bytes(sample, bytes);
  return verify_checksum(sample, bytes);
}

}  // namespace gpufeed::formats
