#include "h5pack/npy_input.hpp"

#include <cstring>
#include <memory>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/npy.hpp"

namespace gpufeed::tools::h5pack {

namespace {

using formats::FormatError;

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

bool is_uint8(const formats::NpyArray& array) {
  const std::string& d = array.dtype();
  return array.item_size() == 1 && d.size() >= 2 && d.compare(d.size() - 2, 2, "u1") == 0;
}

formats::SampleShape image_shape(const formats::NpyArray& array) {
  const std::string& path = array.path();
  if (!is_uint8(array)) {
    throw FormatError(path + ": images must be uint8 (dtype |u1) but this array is " +
                      array.dtype() + "; convert it with numpy's .astype(np.uint8) first");
  }
  const auto& s = array.shape();
  if (s.size() != 3 && s.size() != 4) {
    throw FormatError(path + ": images must have shape [N,H,W,C] or [N,H,W] but this array is " +
                      shape_text(s) + "; reshape it in numpy first");
  }
  const std::uint64_t c = s.size() == 4 ? s[3] : 1;
  if (s[0] == 0 || s[1] == 0 || s[2] == 0 || c == 0 || c > 4 || s[1] > 65535 || s[2] > 65535) {
    throw FormatError(path + ": shape " + shape_text(s) +
                      " is not a stack of images (need N >= 1, H and W 1..65535, 1..4 channels)");
  }
  return {static_cast<std::uint32_t>(s[1]), static_cast<std::uint32_t>(s[2]),
          static_cast<std::uint32_t>(c), formats::Layout::nhwc};
}

std::vector<std::int64_t> read_labels(const std::string& path, std::uint64_t samples,
                                      const std::string& images_path) {
  const formats::NpyArray array(path);
  const auto& s = array.shape();
  if (s.empty() || s.size() > 2 || s[0] != samples || array.element_count() != samples) {
    throw FormatError(path + ": labels must be a 1-d integer array with one label per image (" +
                      std::to_string(samples) + " in " + images_path + ") but it has shape " +
                      shape_text(s));
  }
  std::vector<std::int64_t> labels = array.to_int64();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) {
      throw FormatError(path + ": label " + std::to_string(labels[i]) + " of sample " +
                        std::to_string(i) + " is negative; labels must be class indices >= 0");
    }
  }
  return labels;
}

}  // namespace

formats::PackInput npy_input(const std::string& images_path, const std::string& labels_path) {
  auto array = std::make_shared<const formats::NpyArray>(images_path);
  formats::PackInput input;
  input.shape = image_shape(*array);
  input.samples = array->shape()[0];
  input.description = images_path;
  const std::uint64_t sample_bytes = input.shape.bytes();
  input.source = [array, sample_bytes](std::uint64_t first, std::uint64_t count,
                                       std::span<std::uint8_t> out) {
    const auto bytes = array->bytes().subspan(first * sample_bytes, count * sample_bytes);
    std::memcpy(out.data(), bytes.data(), bytes.size());
  };
  input.keep_alive = array;
  if (labels_path.empty()) {
    input.labels.assign(input.samples, 0);
  } else {
    input.labels = read_labels(labels_path, input.samples, images_path);
  }
  return input;
}

}  // namespace gpufeed::tools::h5pack
