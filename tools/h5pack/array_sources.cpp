#include "h5pack/array_sources.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/storage/mapped_file.hpp"

namespace gpufeed::tools::h5pack {

namespace {

namespace fs = std::filesystem;
using formats::FormatError;

constexpr std::uint32_t kCifarSide = 32;
constexpr std::uint64_t kCifarPixels = kCifarSide * kCifarSide;
constexpr std::uint64_t kCifarRecord = 1 + 3 * kCifarPixels;
constexpr std::int64_t kCifarClasses = 10;

bool file_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> numbered_class_names(const std::vector<std::int64_t>& labels) {
  const std::int64_t top = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end());
  std::vector<std::string> names;
  for (std::int64_t k = 0; k <= top; ++k) names.push_back(std::to_string(k));
  return names;
}

/// The class names of batches.meta.txt beside the batches (non-empty lines), if it exists.
std::vector<std::string> cifar_class_names(const fs::path& folder,
                                           const std::vector<std::int64_t>& labels) {
  std::ifstream in(folder / "batches.meta.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  if (names.size() >= static_cast<std::size_t>(kCifarClasses)) return names;
  return numbered_class_names(labels);
}

std::vector<std::string> cifar_files(const std::string& path, const std::string& split) {
  if (!is_dir(path)) return {path};
  std::vector<std::string> train;
  for (int k = 1; k <= 5; ++k) {
    const fs::path batch = fs::path(path) / ("data_batch_" + std::to_string(k) + ".bin");
    if (file_exists(batch)) train.push_back(batch.string());
  }
  const fs::path test = fs::path(path) / "test_batch.bin";
  if (split == "test" || (split == "auto" && train.empty())) {
    if (!file_exists(test)) throw FormatError(path + " has no test_batch.bin (CIFAR-10 binary)");
    return {test.string()};
  }
  if (train.empty()) {
    throw FormatError(path + " has no data_batch_1.bin .. data_batch_5.bin (CIFAR-10 binary); " +
                      "download the binary version, or use --split test for test_batch.bin");
  }
  return train;
}

struct CifarData {
  std::vector<std::unique_ptr<storage::MappedFile>> files;
  std::vector<std::uint64_t> first;  ///< first sample of each file, and the total at the end
};

void cifar_labels(const storage::MappedFile& file, std::vector<std::int64_t>& labels) {
  const auto bytes = file.bytes();
  for (std::uint64_t r = 0; r < bytes.size() / kCifarRecord; ++r) {
    const std::int64_t label = bytes[r * kCifarRecord];
    if (label >= kCifarClasses) {
      throw FormatError(file.path() + ": record " + std::to_string(r) + " has label " +
                        std::to_string(label) + ", but CIFAR-10 labels are 0-9; is this a " +
                        "CIFAR-100 file (2 label bytes a record)?");
    }
    labels.push_back(label);
  }
}

/// Record `record` of a batch (label byte, then the planes R, G, B) as HWC pixels.
void cifar_record_to_hwc(const std::uint8_t* record, std::uint8_t* out) {
  const std::uint8_t* planes = record + 1;
  for (std::uint64_t p = 0; p < kCifarPixels; ++p) {
    out[3 * p] = planes[p];
    out[3 * p + 1] = planes[kCifarPixels + p];
    out[3 * p + 2] = planes[2 * kCifarPixels + p];
  }
}

}  // namespace

bool looks_like_cifar10(const std::string& path) {
  if (is_dir(path)) {
    return file_exists(fs::path(path) / "data_batch_1.bin") ||
           file_exists(fs::path(path) / "test_batch.bin");
  }
  return ends_with(path, ".bin");
}

formats::PackInput cifar10_input(const std::string& path, const std::string& split) {
  auto data = std::make_shared<CifarData>();
  formats::PackInput input;
  data->first.push_back(0);
  for (const std::string& name : cifar_files(path, split)) {
    auto file = std::make_unique<storage::MappedFile>(name);
    if (file->size() % kCifarRecord != 0) {
      throw FormatError(name + " is not a CIFAR-10 binary batch: its " +
                        std::to_string(file->size()) + " bytes are not whole records of 3073 " +
                        "bytes (a label byte and 32x32x3 pixels)");
    }
    cifar_labels(*file, input.labels);
    data->first.push_back(data->first.back() + file->size() / kCifarRecord);
    data->files.push_back(std::move(file));
  }
  input.samples = data->first.back();
  input.shape = {kCifarSide, kCifarSide, 3, formats::Layout::nhwc};
  input.class_names =
      cifar_class_names(is_dir(path) ? fs::path(path) : fs::path(path).parent_path(), input.labels);
  input.description = path;
  input.source = [d = data.get()](std::uint64_t first, std::uint64_t count,
                                  std::span<std::uint8_t> out) {
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t sample = first + i;
      const auto f = static_cast<std::size_t>(
          std::upper_bound(d->first.begin(), d->first.end(), sample) - d->first.begin() - 1);
      const std::uint8_t* record =
          d->files[f]->bytes().data() + (sample - d->first[f]) * kCifarRecord;
      cifar_record_to_hwc(record, out.data() + i * 3 * kCifarPixels);
    }
  };
  input.keep_alive = data;
  return input;
}

}  // namespace gpufeed::tools::h5pack
