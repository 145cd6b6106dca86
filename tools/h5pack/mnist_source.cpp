// MNIST's IDX files (also Fashion-MNIST, KMNIST: the same format) as a pack_file() source.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/storage/mapped_file.hpp"
#include "h5pack/array_sources.hpp"

namespace gpufeed::tools::h5pack {

namespace {

namespace fs = std::filesystem;
using formats::FormatError;

constexpr std::uint8_t kUnsignedByte = 0x08;

std::uint32_t big_endian32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
         std::uint32_t{p[3]};
}

/// The dimensions of an IDX file of unsigned bytes with `dims` dimensions; checks its size.
std::vector<std::uint64_t> idx_dims(const storage::MappedFile& file, std::uint8_t dims) {
  const auto bytes = file.bytes();
  const std::size_t header = 4 + 4 * std::size_t{dims};
  if (bytes.size() < header || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != kUnsignedByte ||
      bytes[3] != dims) {
    throw FormatError(file.path() + " is not an IDX file of uint8 with " + std::to_string(dims) +
                      " dimensions (magic 0x0000080" + std::to_string(dims) +
                      "); gunzip it first if it is compressed");
  }
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 1;
  for (std::uint8_t d = 0; d < dims; ++d) {
    shape.push_back(big_endian32(bytes.data() + 4 + 4 * d));
    elements *= shape.back();
  }
  if (bytes.size() != header + elements) {
    throw FormatError(file.path() + " has " + std::to_string(bytes.size()) +
                      " bytes, but its header declares " + std::to_string(header + elements) +
                      "; the file is truncated or damaged");
  }
  return shape;
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

/// The file in `folder` whose name starts with `prefix` and holds `kind` ("idx3-ubyte").
std::string find_idx(const fs::path& folder, const std::string& prefix, const std::string& kind) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.find(kind) == std::string::npos) continue;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) {
      throw FormatError(entry.path().string() + " is compressed; gunzip it first");
    }
    return entry.path().string();
  }
  return {};
}

/// (images, labels) for `path` and `split`.
std::pair<std::string, std::string> mnist_files(const std::string& path, const std::string& split) {
  if (!is_dir(path)) {
    std::string labels = path;
    const auto images_at = labels.rfind("images");
    const auto idx_at = labels.rfind("idx3");
    if (images_at == std::string::npos || idx_at == std::string::npos) {
      throw FormatError(path + ": cannot tell the labels file of this MNIST images file (its " +
                        "name should hold 'images' and 'idx3', as train-images-idx3-ubyte)");
    }
    labels.replace(idx_at, 4, "idx1");
    labels.replace(images_at, 6, "labels");
    return {path, labels};
  }
  std::string prefix = split == "test" ? "t10k" : "train";
  if (split == "auto" && find_idx(path, "train-images", "idx3-ubyte").empty()) prefix = "t10k";
  const std::string images = find_idx(path, prefix + "-images", "idx3-ubyte");
  const std::string labels = find_idx(path, prefix + "-labels", "idx1-ubyte");
  if (images.empty() || labels.empty()) {
    throw FormatError(path + " has no " + prefix + "-images-idx3-ubyte and " + prefix +
                      "-labels-idx1-ubyte (MNIST IDX files)");
  }
  return {images, labels};
}

struct MnistData {
  std::unique_ptr<storage::MappedFile> images;
  std::uint64_t sample_bytes = 0;
};

}  // namespace

bool looks_like_mnist(const std::string& path) {
  if (is_dir(path)) {
    return !find_idx(path, "train-images", "idx3-ubyte").empty() ||
           !find_idx(path, "t10k-images", "idx3-ubyte").empty();
  }
  return path.find("idx3-ubyte") != std::string::npos;
}

formats::PackInput mnist_input(const std::string& path, const std::string& split) {
  const auto [images_path, labels_path] = mnist_files(path, split);
  auto data = std::make_shared<MnistData>();
  data->images = std::make_unique<storage::MappedFile>(images_path);
  const storage::MappedFile labels(labels_path);
  const std::vector<std::uint64_t> shape = idx_dims(*data->images, 3);
  const std::vector<std::uint64_t> count = idx_dims(labels, 1);
  if (count[0] != shape[0]) {
    throw FormatError(labels_path + " has " + std::to_string(count[0]) + " labels for the " +
                      std::to_string(shape[0]) + " images of " + images_path);
  }
  if (shape[0] == 0 || shape[1] == 0 || shape[2] == 0 || shape[1] > 65535 || shape[2] > 65535) {
    throw FormatError(images_path + " holds no images (or images of an impossible size)");
  }
  formats::PackInput input;
  input.samples = shape[0];
  input.shape = {static_cast<std::uint32_t>(shape[1]), static_cast<std::uint32_t>(shape[2]), 1,
                 formats::Layout::nhwc};
  const auto label_bytes = labels.bytes().subspan(8);
  input.labels.assign(label_bytes.begin(), label_bytes.end());
  std::int64_t top = 0;
  for (const std::int64_t l : input.labels) top = std::max(top, l);
  for (std::int64_t k = 0; k <= top; ++k) input.class_names.push_back(std::to_string(k));
  input.description = images_path;
  data->sample_bytes = input.shape.bytes();
  input.source = [d = data.get()](std::uint64_t first, std::uint64_t n,
                                  std::span<std::uint8_t> out) {
    const std::uint8_t* pixels = d->images->bytes().data() + 16 + first * d->sample_bytes;
    std::memcpy(out.data(), pixels, n * d->sample_bytes);
  };
  input.keep_alive = data;
  return input;
}

}  // namespace gpufeed::tools::h5pack
