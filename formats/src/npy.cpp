#include "gpufeed/formats/npy.hpp"

#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/storage/file_io.hpp"
#include "npy_header.hpp"

namespace gpufeed::formats {

NpyArray::NpyArray(const std::string& path) : file_(path, "a .npy file") {
  const std::span<const std::uint8_t> bytes = file_.bytes();
  const detail::NpyHeader header = detail::parse_npy_header(bytes, path);
  dtype_ = header.dtype;
  shape_ = header.shape;
  item_size_ = header.item_size;
  data_offset_ = header.data_offset;
  const std::uint64_t data_bytes = header.element_count * header.item_size;
  if (data_bytes > bytes.size() - data_offset_) {
    throw FormatError(path + " is truncated: its header describes " + std::to_string(data_bytes) +
                      " bytes of data but only " + std::to_string(bytes.size() - data_offset_) +
                      " follow; save the array again");
  }
}

std::uint64_t NpyArray::element_count() const {
  std::uint64_t count = 1;
  for (std::uint64_t d : shape_) count *= d;
  return count;
}

std::span<const std::uint8_t> NpyArray::bytes() const {
  if (file_.bytes().empty()) return {};  // moved from
  return file_.bytes().subspan(data_offset_, element_count() * item_size_);
}

std::vector<std::int64_t> NpyArray::to_int64() const {
  const char kind = dtype_.size() >= 2 ? dtype_[1] : '?';
  if (kind != 'u' && kind != 'i' && kind != 'b') {
    throw FormatError(path() + " holds " + dtype_ + " values; integers are needed here");
  }
  const std::span<const std::uint8_t> data = bytes();
  std::vector<std::int64_t> values(element_count());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = detail::npy_integer(data.data() + i * item_size_, kind, item_size_);
  }
  return values;
}

void write_npy(const std::string& path, const std::string& dtype,
               const std::vector<std::uint64_t>& shape, std::span<const std::uint8_t> bytes) {
  const std::string header = detail::format_npy_header(dtype, shape, bytes.size());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) storage::throw_errno("cannot create " + path);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) storage::throw_errno("cannot write " + path);
}

}  // namespace gpufeed::formats
