// inspect_images(): what the reader accepts as an image dataset, and how it splits it.
#include <algorithm>
#include <string>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "reader_state.hpp"

namespace gpufeed::formats::detail {

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

std::string mib(std::uint64_t bytes) {
  return std::to_string(bytes / kMiB) + " MiB";
}

void check_type_and_rank(hid_t images, const std::string& where,
                         const std::vector<std::uint64_t>& dims) {
  h5::Id type = h5::check_id(H5Dget_type(images), "cannot read the type of " + where);
  if (!h5::is_uint8(type.get())) {
    throw FormatError(where + " is " + h5::type_name(type.get()) +
                      "; gpufeed reads uint8 images (convert with h5pack)");
  }
  if (dims.size() != 4) {
    throw FormatError(where + " has shape " + h5::shape_text(dims) +
                      "; gpufeed reads 4-D images [N,H,W,C] or [N,C,H,W] (convert with h5pack)");
  }
  if (dims[0] == 0) {
    throw FormatError(where + " has no samples (shape " + h5::shape_text(dims) +
                      "); re-create it with h5pack convert");
  }
}

// Refuses absurd declared dimensions before anything is sized from them; each factor is
// checked first so that the products below cannot overflow.
SampleShape sample_shape(const std::string& where, const std::vector<std::uint64_t>& dims,
                         Layout layout) {
  const bool nchw = layout == Layout::nchw;
  const std::uint64_t c = nchw ? dims[1] : dims[3];
  const std::uint64_t h = nchw ? dims[2] : dims[1];
  const std::uint64_t w = nchw ? dims[3] : dims[2];
  const std::string shape = h5::shape_text(dims) + " read as " + to_string(layout);
  if (c < 1 || c > 4) {
    throw FormatError(where + " has " + std::to_string(c) + " channels (shape " + shape +
                      "); gpufeed reads 1-4 channels: check the layout option (nhwc or nchw)");
  }
  if (h == 0 || w == 0) throw FormatError(where + " holds empty images (shape " + shape + ")");
  constexpr std::uint64_t limit = schema::kMaxSampleBytes;
  if (h > limit || w > limit || h * w * c > limit) {
    throw FormatError(where + " declares images of shape " + shape + ", more than the " +
                      mib(limit) + " a sample may hold; the file is damaged or not an image set");
  }
  return SampleShape{static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(w),
                     static_cast<std::uint32_t>(c), layout};
}

std::string filter_name(H5Z_filter_t id, const char* stored_name) {
  switch (id) {
    case H5Z_FILTER_DEFLATE:
      return "gzip";
    case H5Z_FILTER_SHUFFLE:
      return "shuffle";
    case H5Z_FILTER_FLETCHER32:
      return "fletcher32";
    case H5Z_FILTER_SZIP:
      return "szip";
    case H5Z_FILTER_NBIT:
      return "nbit";
    case H5Z_FILTER_SCALEOFFSET:
      return "scaleoffset";
    case 307:
      return "bzip2";
    case 32001:
      return "blosc";
    case 32004:
      return "lz4";
    case 32008:
      return "bitshuffle";
    case 32015:
      return "zstd";
    default:
      return stored_name[0] != '\0' ? std::string(stored_name) : "filter " + std::to_string(id);
  }
}

void read_filters(hid_t dcpl, const std::string& where, ImagesLayout& layout) {
  const int count = H5Pget_nfilters(dcpl);
  if (count < 0) h5::fail("cannot read the filters of " + where);
  std::string names;
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    unsigned config = 0;
    std::size_t values = 0;
    char name[80] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &values, nullptr,
                                           sizeof name, name, &config);
    if (id < 0) h5::fail("cannot read the filters of " + where);
    if (id == H5Z_FILTER_DEFLATE && layout.deflate_stage < 0) {
      layout.deflate_stage = i;
    } else if (id != H5Z_FILTER_SHUFFLE) {
      layout.decodable = false;  // shuffle of 1-byte elements leaves the bytes as they are
    }
    names += (names.empty() ? "" : "+") + filter_name(id, name);
  }
  if (!names.empty()) layout.compression = names;
}

void read_chunking(hid_t dcpl, const std::string& where, ImagesLayout& layout) {
  hsize_t chunk[4] = {};
  if (H5Pget_chunk(dcpl, 4, chunk) != 4) h5::fail("cannot read the chunk shape of " + where);
  std::copy(std::begin(chunk), std::end(chunk), layout.chunk.begin());
  const std::uint64_t sample = layout.sample_bytes;
  constexpr std::uint64_t limit = schema::kMaxChunkBytes;
  // HDF5 keeps chunk dimensions below 2^32 and chunks below 4 GiB, so this cannot overflow.
  const std::uint64_t rows = layout.chunk[0];
  if (rows > limit / sample || std::max(rows * sample, layout.hdf5_chunk_bytes()) > limit) {
    throw FormatError(where + " has chunks of " + std::to_string(rows) +
                      " samples, more than the " + mib(limit) +
                      " a chunk row may hold; re-chunk it with h5pack convert --chunk");
  }
  layout.samples_per_chunk = rows;
  layout.whole_sample_chunks =
      std::equal(layout.chunk.begin() + 1, layout.chunk.end(), layout.dims.begin() + 1);
  read_filters(dcpl, where, layout);
  H5D_fill_value_t defined{};
  if (H5Pfill_value_defined(dcpl, &defined) >= 0 && defined == H5D_FILL_VALUE_USER_DEFINED) {
    H5Pget_fill_value(dcpl, H5T_NATIVE_UINT8, &layout.fill_value);
  }
}

}  // namespace

ImagesLayout inspect_images(hid_t images, const std::string& where, const ReaderOptions& options) {
  const std::vector<std::uint64_t> dims = h5::dims(images);
  check_type_and_rank(images, where, dims);
  ImagesLayout layout;
  std::copy(dims.begin(), dims.end(), layout.dims.begin());
  layout.shape = sample_shape(where, dims, options.layout.value_or(Layout::nhwc));
  layout.sample_bytes = layout.shape.bytes();
  h5::Id dcpl = h5::check_id(H5Dget_create_plist(images), "cannot inspect " + where);
  layout.storage = H5Pget_layout(dcpl.get());
  if (layout.storage == H5D_CHUNKED) {
    read_chunking(dcpl.get(), where, layout);
  } else {
    // Contiguous and compact data are split into virtual chunks of about the asked size.
    const std::uint64_t per_chunk = options.contiguous_chunk_bytes / layout.sample_bytes;
    layout.samples_per_chunk = std::clamp<std::uint64_t>(per_chunk, 1, dims[0]);
  }
  layout.num_chunks = (dims[0] + layout.samples_per_chunk - 1) / layout.samples_per_chunk;
  return layout;
}

}  // namespace gpufeed::formats::detail
