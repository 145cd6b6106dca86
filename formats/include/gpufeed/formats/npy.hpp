#pragma once
// Read-only, memory-mapped NumPy .npy arrays (format versions 1.0-3.0, C order).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/storage/mapped_file.hpp"

namespace gpufeed::formats {

/// A .npy file mapped into memory. Only C-order (not Fortran-order) arrays of fixed-size
/// numeric types are accepted; anything else throws FormatError naming the file.
class NpyArray {
 public:
  explicit NpyArray(const std::string& path);

  [[nodiscard]] const std::string& path() const { return file_.path(); }
  /// NumPy dtype string as stored, e.g. "|u1", "<i8".
  [[nodiscard]] const std::string& dtype() const { return dtype_; }
  [[nodiscard]] const std::vector<std::uint64_t>& shape() const { return shape_; }
  [[nodiscard]] std::uint64_t element_count() const;
  [[nodiscard]] std::size_t item_size() const { return item_size_; }
  /// The array's bytes (element_count() * item_size()).
  [[nodiscard]] std::span<const std::uint8_t> bytes() const;
  /// Elements converted to int64 (integer dtypes only; throws FormatError otherwise).
  [[nodiscard]] std::vector<std::int64_t> to_int64() const;

 private:
  storage::MappedFile file_;
  std::string dtype_;
  std::vector<std::uint64_t> shape_;
  std::size_t item_size_ = 0;
  std::size_t data_offset_ = 0;
};

/// Writes a C-order .npy file (used by tests and benchmarks to make inputs).
void write_npy(const std::string& path, const std::string& dtype,
               const std::vector<std::uint64_t>& shape, std::span<const std::uint8_t> bytes);

}  // namespace gpufeed::formats
