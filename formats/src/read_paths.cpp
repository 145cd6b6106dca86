// The four ways read_chunk() fetches a chunk. A read leases its scratch buffers from the
// reader's pool: in steady state a read allocates nothing, and the buffers die with the reader.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "deflate.hpp"
#include "gpufeed/formats/error.hpp"
#include "reader_state.hpp"

namespace gpufeed::formats::detail {

namespace {

std::span<std::uint8_t> scratch(std::vector<std::uint8_t>& buffer, std::uint64_t bytes) {
  if (buffer.size() < bytes) buffer.resize(bytes);
  return {buffer.data(), bytes};
}

std::string recovery_advice() {
  return "; re-create the file or restore it from a copy";
}

void read_exact(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out,
                std::uint64_t offset) {
  state.source->read(out, offset, [&] { return state.describe_chunk(chunk); });
}

[[noreturn]] void damaged(const ReaderState& state, std::uint64_t chunk, const std::string& why) {
  throw FormatError(state.describe_chunk(chunk) + " is damaged: " + why + recovery_advice());
}

void inflate(const ReaderState& state, std::uint64_t chunk, std::span<const std::uint8_t> in,
             std::span<std::uint8_t> out) {
  if (const char* why = deflate::zlib_decompress(in, out)) damaged(state, chunk, why);
}

void read_by_index(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out) {
  const std::span<std::uint8_t> full = out.first(state.layout.chunk_buffer_bytes());
  const std::uint64_t address = state.chunk_addr[chunk];
  if (state.layout.deflate_stage < 0) {
    read_exact(state, chunk, full, address);  // validated at open: stored size == full size
    return;
  }
  const auto buffer = state.scratch.lease();  // the chunk's bytes as stored in the file
  const std::span<std::uint8_t> stored = scratch(*buffer, state.chunk_size[chunk]);
  read_exact(state, chunk, stored, address);
  inflate(state, chunk, stored, full);
}

// Fetches the HDF5 chunk at `offset` under HDF5's lock and decodes it outside it.
void fetch_hdf5_chunk(const ReaderState& state, std::uint64_t chunk,
                      const std::array<hsize_t, 4>& offset, std::span<std::uint8_t> out) {
  const hid_t images = state.images.get();
  hsize_t stored_bytes = 0;
  if (H5Dget_chunk_storage_size(images, offset.data(), &stored_bytes) < 0) {
    h5::fail("cannot read " + state.describe_chunk(chunk), recovery_advice());
  }
  if (stored_bytes == 0) {  // never written: HDF5 would return the fill value
    std::memset(out.data(), state.layout.fill_value, out.size());
    return;
  }
  if (stored_bytes > state.file_bytes) {
    damaged(state, chunk,
            "HDF5's chunk index gives it " + std::to_string(stored_bytes) +
                " bytes, more than the file's " + std::to_string(state.file_bytes));
  }
  const bool maybe_deflated = state.layout.deflate_stage >= 0;
  const auto buffer = state.scratch.lease();
  const std::span<std::uint8_t> stored =
      maybe_deflated || stored_bytes != out.size() ? scratch(*buffer, stored_bytes) : out;
  std::uint32_t mask = 0;
  if (H5Dread_chunk(images, H5P_DEFAULT, offset.data(), &mask, stored.data()) < 0) {
    h5::fail("cannot read " + state.describe_chunk(chunk), recovery_advice());
  }
  // A set mask bit means that filter was skipped for this chunk (an optional filter failed).
  if (maybe_deflated && (mask & (1u << state.layout.deflate_stage)) == 0) {
    inflate(state, chunk, stored, out);
  } else if (stored.size() != out.size()) {
    damaged(state, chunk,
            "it stores " + std::to_string(stored.size()) + " bytes uncompressed instead of " +
                std::to_string(out.size()));
  } else if (stored.data() != out.data()) {
    std::memcpy(out.data(), stored.data(), out.size());
  }
}

// Copies the part of an HDF5 chunk that lies inside the dataset into the dense output.
void scatter(const ImagesLayout& layout, const std::array<hsize_t, 4>& offset, std::uint64_t count,
             std::span<const std::uint8_t> decoded, std::span<std::uint8_t> out) {
  const auto& d = layout.dims;
  const auto& c = layout.chunk;
  const std::uint64_t n1 = std::min<std::uint64_t>(c[1], d[1] - offset[1]);
  const std::uint64_t n2 = std::min<std::uint64_t>(c[2], d[2] - offset[2]);
  const std::uint64_t n3 = std::min<std::uint64_t>(c[3], d[3] - offset[3]);
  for (std::uint64_t s = 0; s < count; ++s) {
    for (std::uint64_t i = 0; i < n1; ++i) {
      for (std::uint64_t j = 0; j < n2; ++j) {
        const std::uint64_t from = ((s * c[1] + i) * c[2] + j) * c[3];
        const std::uint64_t to = ((s * d[1] + offset[1] + i) * d[2] + offset[2] + j) * d[3];
        std::memcpy(out.data() + to + offset[3], decoded.data() + from, n3);
      }
    }
  }
}

void read_direct(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out) {
  h5::silence_errors();
  const ImagesLayout& layout = state.layout;
  std::array<hsize_t, 4> offset = {state.first_sample(chunk), 0, 0, 0};
  if (layout.whole_sample_chunks) {
    fetch_hdf5_chunk(state, chunk, offset, out.first(layout.chunk_buffer_bytes()));
    return;
  }
  const auto buffer = state.scratch.lease();  // one HDF5 chunk, which splits samples
  const std::span<std::uint8_t> decoded = scratch(*buffer, layout.hdf5_chunk_bytes());
  const std::uint64_t count = state.sample_count(chunk);
  for (offset[1] = 0; offset[1] < layout.dims[1]; offset[1] += layout.chunk[1]) {
    for (offset[2] = 0; offset[2] < layout.dims[2]; offset[2] += layout.chunk[2]) {
      for (offset[3] = 0; offset[3] < layout.dims[3]; offset[3] += layout.chunk[3]) {
        fetch_hdf5_chunk(state, chunk, offset, decoded);
        scatter(layout, offset, count, decoded, out);
      }
    }
  }
}

void read_hyperslab(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out) {
  h5::silence_errors();
  const auto& d = state.layout.dims;
  const hsize_t start[4] = {state.first_sample(chunk), 0, 0, 0};
  const hsize_t count[4] = {state.sample_count(chunk), d[1], d[2], d[3]};
  const hsize_t total[1] = {count[0] * state.layout.sample_bytes};
  const std::string context = "cannot read " + state.describe_chunk(chunk);
  h5::Id file_space = h5::check_id(H5Dget_space(state.images.get()), context);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
            context);
  h5::Id memory_space = h5::check_id(H5Screate_simple(1, total, nullptr), context);
  if (H5Dread(state.images.get(), H5T_NATIVE_UINT8, memory_space.get(), file_space.get(),
              H5P_DEFAULT, out.data()) < 0) {
    h5::fail(context, recovery_advice());
  }
}

// HDF5 reads the bytes past the end of a file that shrank after it was opened as zeros, without
// an error; the paths through HDF5 look at the file's size after each read.
void check_not_truncated(const ReaderState& state, std::uint64_t chunk) {
  const std::uint64_t now = state.source->current_size();
  if (now >= state.file_bytes) return;
  throw FormatError(state.path + " is truncated: it had " + std::to_string(state.file_bytes) +
                    " bytes when it was opened and has " + std::to_string(now) + " now (reading " +
                    state.describe_chunk(chunk) +
                    "); copy it again or re-create it with h5pack convert");
}

template <typename Read>
void read_through_hdf5(const ReaderState& state, std::uint64_t chunk, const Read& read) {
  try {
    read();
  } catch (const FormatError&) {
    check_not_truncated(state, chunk);  // the clearer reason, when it is the reason
    throw;
  }
  check_not_truncated(state, chunk);
}

}  // namespace

std::optional<storage::Extent> chunk_extent(const ReaderState& state, std::uint64_t chunk) {
  switch (state.read_path) {
    case ReadPath::index:
      return storage::Extent{state.chunk_addr[chunk], state.chunk_size[chunk]};
    case ReadPath::contiguous:
      return storage::Extent{
          state.contiguous_offset + state.first_sample(chunk) * state.layout.sample_bytes,
          state.sample_count(chunk) * state.layout.sample_bytes};
    default:
      return std::nullopt;
  }
}

storage::SharedBytes view_chunk(const ReaderState& state, std::uint64_t chunk) {
  const bool whole = state.read_path == ReadPath::contiguous ||
                     (state.read_path == ReadPath::index && state.layout.deflate_stage < 0);
  if (!whole) return {};
  const storage::Extent at = *chunk_extent(state, chunk);
  if (at.length != state.layout.chunk_buffer_bytes()) return {};  // a short last chunk
  return state.source->view(at, [&] { return state.describe_chunk(chunk); });
}

void read_chunk(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out) {
  switch (state.read_path) {
    case ReadPath::index:
      return read_by_index(state, chunk, out);
    case ReadPath::direct_chunk:
      return read_through_hdf5(state, chunk, [&] { read_direct(state, chunk, out); });
    case ReadPath::contiguous: {
      const storage::Extent at = *chunk_extent(state, chunk);
      return read_exact(state, chunk, out.first(at.length), at.offset);
    }
    case ReadPath::hyperslab:
      return read_through_hdf5(state, chunk, [&] { read_hyperslab(state, chunk, out); });
  }
}

}  // namespace gpufeed::formats::detail
