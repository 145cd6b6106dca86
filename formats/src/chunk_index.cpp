// The /index chunk table: lets read_chunk() find a chunk with one array lookup instead of an
// HDF5 call under HDF5's global lock. Checked on open, because a wrong table would silently
// feed wrong bytes to training (or fail only deep into an epoch).
#include <string>
#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "reader_state.hpp"

namespace gpufeed::formats::detail {

namespace {

[[noreturn]] void inconsistent(const ReaderState& state, const std::string& why) {
  throw FormatError("the chunk index /index in " + state.path + " is inconsistent with " +
                    state.images_name + " (" + why +
                    "); re-create the file with h5pack convert, or open it with use_index off");
}

std::vector<std::uint64_t> read_table(const ReaderState& state, const char* name) {
  h5::Id dataset = h5::open_dataset_if_exists(state.file.get(), name);
  h5::Id type = h5::check_id(H5Dget_type(dataset.get()), std::string("cannot inspect ") + name);
  const std::vector<std::uint64_t> dims = h5::dims(dataset.get());
  if (!h5::is_integer(type.get()) || dims.size() != 1) {
    inconsistent(state, std::string(name) + " is " + h5::type_name(type.get()) + " " +
                            h5::shape_text(dims) + ", not a list of integers");
  }
  if (dims[0] != state.layout.num_chunks) {
    inconsistent(state, std::string(name) + " has " + std::to_string(dims[0]) + " entries for " +
                            std::to_string(state.layout.num_chunks) + " chunks");
  }
  std::vector<std::uint64_t> table(dims[0]);
  h5::read_prefix(dataset.get(), H5T_NATIVE_UINT64, dims[0], table.data(),
                  std::string("cannot read ") + name + " in " + state.path);
  return table;
}

// Chunk addresses in HDF5 are relative to the base address, which a user block moves.
std::uint64_t base_address(hid_t file) {
  h5::Id fcpl = h5::check_id(H5Fget_create_plist(file), "cannot inspect the file");
  hsize_t user_block = 0;
  h5::check(H5Pget_userblock(fcpl.get(), &user_block), "cannot inspect the file");
  return user_block;
}

// Spot-checks one entry against HDF5's own chunk index.
void compare_with_hdf5(const ReaderState& state, std::uint64_t chunk) {
  const hsize_t offset[4] = {state.first_sample(chunk), 0, 0, 0};
  unsigned mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  h5::check(H5Dget_chunk_info_by_coord(state.images.get(), offset, &mask, &address, &size),
            "cannot look up " + state.describe_chunk(chunk));
  if (address != state.chunk_addr[chunk] || size != state.chunk_size[chunk] || mask != 0) {
    inconsistent(state, "entry " + std::to_string(chunk) + " says " +
                            std::to_string(state.chunk_size[chunk]) + " bytes at " +
                            std::to_string(state.chunk_addr[chunk]) + ", HDF5 says " +
                            std::to_string(size) + " bytes at " + std::to_string(address));
  }
}

void check_entries(ReaderState& state, std::uint64_t base) {
  const std::uint64_t full = state.layout.chunk_buffer_bytes();
  const bool deflated = state.layout.deflate_stage >= 0;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < state.chunk_addr.size(); ++i) {
    const std::uint64_t size = state.chunk_size[i];
    const std::uint64_t address = state.chunk_addr[i];
    if (size == 0 || size > state.file_bytes || (!deflated && size != full) ||
        address > state.file_bytes - size || base > state.file_bytes - size - address) {
      inconsistent(state, "entry " + std::to_string(i) + " says " + std::to_string(size) +
                              " bytes at " + std::to_string(address) + " in a file of " +
                              std::to_string(state.file_bytes) + " bytes");
    }
    total += size;
  }
  if (state.size_from_index) {
    state.stored_bytes = total;
  } else if (total != state.stored_bytes) {
    inconsistent(state, "its chunk sizes add up to " + std::to_string(total) + " bytes, " +
                            state.images_name + " stores " + std::to_string(state.stored_bytes));
  }
}

}  // namespace

bool chunk_index_applies(const ReaderState& state) {
  const std::string& name = state.images_name;
  const bool schema_images = name == schema::kImages || "/" + name == schema::kImages;
  return schema_images && state.layout.storage == H5D_CHUNKED && state.layout.whole_sample_chunks &&
         state.layout.decodable && h5::exists(state.file.get(), schema::kChunkAddr) &&
         h5::exists(state.file.get(), schema::kChunkSize);
}

void load_chunk_index(ReaderState& state) {
  state.chunk_addr = read_table(state, schema::kChunkAddr);
  state.chunk_size = read_table(state, schema::kChunkSize);
  const std::uint64_t base = base_address(state.file.get());
  check_entries(state, base);
  if (!state.size_from_index) {  // a B-tree walk each in HDF5 1.10: not over the network
    compare_with_hdf5(state, 0);
    compare_with_hdf5(state, state.layout.num_chunks - 1);
  }
  for (std::uint64_t& address : state.chunk_addr) address += base;
}

}  // namespace gpufeed::formats::detail
