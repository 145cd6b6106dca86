#include "npy_header.hpp"
#include "gpufeed/base/errors.hpp"

#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::formats::detail {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

// Reads the dict literal numpy writes: {'descr': '<u1', 'fortran_order': False, 'shape': (2, 3), }
class DictScanner {
 public:
  DictScanner(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  [[noreturn]] void invalid(const std::string& what) const {
    throw FormatError(path_ + " is not a valid .npy file (" + what +
                      " in its header); save the array again with numpy.save");
  }
  bool consume(char c) {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) invalid(std::string("expected '") + c + "'");
  }
  [[nodiscard]] bool peek(char c) {
    const std::size_t saved = pos_;
    const bool found = consume(c);
    pos_ = saved;
    return found;
  }
  std::string quoted() {
    const char quote = consume('\'') ? '\'' : consume('"') ? '"' : '\0';
    if (quote == '\0') invalid("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) invalid("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    consume(' ');
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    invalid("expected True or False");
  }
  std::vector<std::uint64_t> tuple() {
    expect('(');
    std::vector<std::uint64_t> values;
    while (!consume(')')) {
      consume(' ');
      std::uint64_t value = 0;
      std::size_t digits = 0;
      for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_, ++digits) {
        if (value > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) invalid("huge shape");
        value = value * 10 + static_cast<std::uint64_t>(text_[pos_] - '0');
      }
      if (digits == 0) invalid("expected a dimension");
      values.push_back(value);
      if (!consume(',') && !peek(')')) invalid("expected ',' or ')'");
    }
    return values;
  }

 private:
  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

// The item size of a supported dtype, or 0 with `why` set.
std::size_t item_size(const std::string& dtype, std::string& why) {
  if (dtype.size() >= 2 && dtype[1] == 'O') {
    why = "it holds Python objects; save a numeric array instead";
    return 0;
  }
  if (dtype.size() < 3 || std::string_view("<>|=").find(dtype[0]) == std::string_view::npos) {
    why = "the dtype '" + dtype + "' is not a plain numeric type";
    return 0;
  }
  const char kind = dtype[1];
  const std::string bits = dtype.substr(2);
  const std::size_t size = bits.size() == 1 && bits[0] >= '1' && bits[0] <= '8'
                               ? static_cast<std::size_t>(bits[0] - '0')
                               : 0;
  const bool known =
      ((kind == 'u' || kind == 'i') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
      (kind == 'f' && (size == 4 || size == 8)) || (kind == 'b' && size == 1);
  if (!known) {
    why = "the dtype '" + dtype + "' is not supported";
    return 0;
  }
  if (dtype[0] == '>' && size > 1) {
    why = "it is big-endian ('" + dtype +
          "'); convert it with arr.astype(arr.dtype.newbyteorder('<'))";
    return 0;
  }
  return size;
}

std::uint64_t read_le(const std::uint8_t* p, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= std::uint64_t{p[i]} << (8 * i);
  return value;
}

// The three keys numpy writes, in any order; a Fortran-order array is refused here.
NpyHeader read_dict(DictScanner& dict, const std::string& path) {
  NpyHeader header;
  std::optional<bool> fortran;
  bool has_shape = false;
  dict.expect('{');
  while (!dict.consume('}')) {
    const std::string key = dict.quoted();
    dict.expect(':');
    if (key == "descr") {
      if (dict.peek('[')) dict.invalid("a structured dtype");
      header.dtype = dict.quoted();
    } else if (key == "fortran_order") {
      fortran = dict.boolean();
    } else if (key == "shape") {
      header.shape = dict.tuple();
      has_shape = true;
    } else {
      dict.invalid("unknown key '" + key + "'");
    }
    if (!dict.consume(',') && !dict.peek('}')) dict.invalid("expected ',' or '}'");
  }
  if (header.dtype.empty() || !fortran || !has_shape) dict.invalid("a missing key");
  if (*fortran) {
    throw FormatError(path +
                      " holds a Fortran-order array; save it in C order "
                      "(numpy.save(path, numpy.ascontiguousarray(arr)))");
  }
  return header;
}

}  // namespace

NpyHeader parse_npy_header(std::span<const std::uint8_t> file, const std::string& path) {
  if (file.size() < 10 || std::memcmp(file.data(), kMagic, kMagicBytes) != 0) {
    throw FormatError(path + " is not a .npy file (no \\x93NUMPY magic); check the path");
  }
  const unsigned major = file[6];
  if (major < 1 || major > 3) {
    throw FormatError(path + " is a .npy file of version " + std::to_string(major) +
                      ".x; gpufeed reads versions 1.0-3.0");
  }
  const std::size_t prefix = major == 1 ? 10 : 12;
  const std::size_t length = file.size() < prefix ? 0 : read_le(file.data() + 8, prefix - 8);
  if (file.size() < prefix || length > file.size() - prefix) {
    throw FormatError(path + " is truncated: its header ends past the end of the file");
  }
  DictScanner dict({reinterpret_cast<const char*>(file.data()) + prefix, length}, path);
  NpyHeader header = read_dict(dict, path);
  header.data_offset = prefix + length;
  std::string why;
  header.item_size = item_size(header.dtype, why);
  if (header.item_size == 0) throw FormatError(path + " cannot be read: " + why);
  header.element_count = 1;
  for (std::uint64_t d : header.shape) {
    if (d != 0 && header.element_count > std::numeric_limits<std::uint64_t>::max() / 8 / d) {
      dict.invalid("an impossibly large shape");
    }
    header.element_count *= d;
  }
  return header;
}

std::string format_npy_header(const std::string& dtype, const std::vector<std::uint64_t>& shape,
                              std::uint64_t data_bytes) {
  std::string why;
  const std::size_t size = item_size(dtype, why);
  if (size == 0) throw UsageError("cannot write a .npy file: " + why);
  std::uint64_t count = 1;
  std::string dims;
  for (std::uint64_t d : shape) {
    count *= d;
    dims += std::to_string(d) + (shape.size() == 1 ? "," : ", ");
  }
  if (!dims.empty() && shape.size() > 1) dims.resize(dims.size() - 2);
  if (count * size != data_bytes) {
    throw UsageError("cannot write a .npy file: the shape needs " + std::to_string(count * size) +
                     " bytes, got " + std::to_string(data_bytes));
  }
  std::string dict =
      "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const bool wide = dict.size() + 12 > 65535;
  const std::size_t prefix = wide ? 12 : 10;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string header(kMagic, kMagicBytes);
  header += static_cast<char>(wide ? 2 : 1);
  header += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) {
    header += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  }
  return header + dict;
}

std::int64_t npy_integer(const std::uint8_t* element, char kind, std::size_t size) {
  const std::uint64_t raw = read_le(element, size);
  if (kind != 'i' || size == 8) return static_cast<std::int64_t>(raw);
  const std::uint64_t sign = std::uint64_t{1} << (8 * size - 1);
  return static_cast<std::int64_t>((raw ^ sign) - sign);  // sign-extend
}

}  // namespace gpufeed::formats::detail
