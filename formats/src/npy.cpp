#include "gpufeed/formats/npy.hpp"

#include <sys/mman.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>

#include "file_io.hpp"
#include "gpufeed/formats/error.hpp"
#include "npy_header.hpp"

namespace gpufeed::formats {

namespace {

// Owns a read-only mapping until the array takes it, so a refused file is unmapped.
struct Mapping {
  void* data = nullptr;
  std::size_t size = 0;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping(void* d, std::size_t s) : data(d), size(s) {}
  ~Mapping() {
    if (data != nullptr) ::munmap(data, size);
  }
};

Mapping map_file(const std::string& path) {
  UniqueFd fd = detail::open_read_only(path);
  const std::uint64_t size = detail::file_size(fd.get(), path);
  if (size == 0) throw FormatError(path + " is empty, not a .npy file");
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data == MAP_FAILED) throw_errno("cannot map " + path);
  return Mapping(data, size);
}

}  // namespace

NpyArray::NpyArray(const std::string& path) : path_(path) {
  Mapping mapping = map_file(path);
  const auto* bytes = static_cast<const std::uint8_t*>(mapping.data);
  const detail::NpyHeader header = detail::parse_npy_header({bytes, mapping.size}, path);
  dtype_ = header.dtype;
  shape_ = header.shape;
  item_size_ = header.item_size;
  data_offset_ = header.data_offset;
  const std::uint64_t data_bytes = header.element_count * header.item_size;
  if (data_bytes > mapping.size - data_offset_) {
    throw FormatError(path + " is truncated: its header describes " + std::to_string(data_bytes) +
                      " bytes of data but only " + std::to_string(mapping.size - data_offset_) +
                      " follow; save the array again");
  }
  map_ = std::exchange(mapping.data, nullptr);
  map_size_ = mapping.size;
  region_ = MappedRegion(map_, map_size_, path_);
}

NpyArray::~NpyArray() {
  region_.release();
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

NpyArray::NpyArray(NpyArray&& other) noexcept
    : path_(std::move(other.path_)),
      dtype_(std::move(other.dtype_)),
      shape_(std::move(other.shape_)),
      item_size_(other.item_size_),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      data_offset_(other.data_offset_),
      region_(std::move(other.region_)) {}

NpyArray& NpyArray::operator=(NpyArray&& other) noexcept {
  if (this != &other) {
    region_ = std::move(other.region_);
    if (map_ != nullptr) ::munmap(map_, map_size_);
    path_ = std::move(other.path_);
    dtype_ = std::move(other.dtype_);
    shape_ = std::move(other.shape_);
    item_size_ = other.item_size_;
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    data_offset_ = other.data_offset_;
  }
  return *this;
}

std::uint64_t NpyArray::element_count() const {
  std::uint64_t count = 1;
  for (std::uint64_t d : shape_) count *= d;
  return count;
}

std::span<const std::uint8_t> NpyArray::bytes() const {
  if (map_ == nullptr) return {};
  return {static_cast<const std::uint8_t*>(map_) + data_offset_, element_count() * item_size_};
}

std::vector<std::int64_t> NpyArray::to_int64() const {
  const char kind = dtype_.size() >= 2 ? dtype_[1] : '?';
  if (kind != 'u' && kind != 'i' && kind != 'b') {
    throw FormatError(path_ + " holds " + dtype_ + " values; integers are needed here");
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
  if (!out) throw_errno("cannot create " + path);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw_errno("cannot write " + path);
}

}  // namespace gpufeed::formats
