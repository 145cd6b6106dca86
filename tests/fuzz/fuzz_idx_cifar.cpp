// libFuzzer target: any bytes as the array files h5pack converts: MNIST IDX files (images and
// labels, found in a folder or named by the images file), a CIFAR-10 binary batch with its
// batches.meta.txt, or a .npy image array with its labels. Byte 0 picks the kind, bytes 1-4
// (little-endian) where the rest splits into the two files; they are written to a folder of this
// process and opened as h5pack convert opens them, then a few samples are read. A FormatError
// (IoError among them) is the expected answer to a bad file; anything else (a crash, a sanitizer
// report, a leak, a hang) is a bug, and so is a source whose samples do not lie inside its file.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "h5pack/array_sources.hpp"
#include "h5pack/npy_input.hpp"
#include "stale_inputs.hpp"

namespace {

namespace fs = std::filesystem;
using gpufeed::formats::PackInput;
namespace h5pack = gpufeed::tools::h5pack;

// Keeps each input fast: larger samples are opened and checked, not read.
constexpr std::uint64_t kMaxReadBytes = 4u << 20;

constexpr const char* kPrefix = "gpufeed-fuzz-arrays-";

/// A folder of this process (in /dev/shm when there is one), removed when the fuzzer exits.
class Folder {
 public:
  Folder() {
    const fs::path base =
        ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm") : fs::temp_directory_path();
    gpufeed::fuzz::remove_stale_inputs(base, kPrefix);
    path_ = base / (kPrefix + std::to_string(::getpid()));
    fs::remove_all(path_);
    for (const char* kind : {"mnist", "cifar", "npy"}) fs::create_directories(path_ / kind);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;

  /// Writes `bytes` as `name` in the folder of `kind`; returns its path.
  std::string write(const char* kind, const char* name, std::span<const std::uint8_t> bytes) {
    const fs::path file = path_ / kind / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) std::abort();
    return file.string();
  }
  [[nodiscard]] std::string folder(const char* kind) const { return (path_ / kind).string(); }

 private:
  fs::path path_;
};

/// The source must describe samples that lie inside `image_bytes` of file, with a label each.
void read_samples(const PackInput& input, std::uint64_t image_bytes) {
  const std::uint64_t sample = input.shape.bytes();
  if (input.samples == 0 || sample == 0 || input.samples > image_bytes / sample ||
      input.labels.size() != input.samples) {
    std::abort();
  }
  if (sample > kMaxReadBytes) return;
  std::vector<std::uint8_t> buffer(sample);
  for (const std::uint64_t s : gpufeed::fuzz::picks(input.samples)) input.source(s, 1, buffer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Folder folder;
  if (size < 5) return 0;
  const std::uint32_t split = std::uint32_t{data[1]} | std::uint32_t{data[2]} << 8 |
                              std::uint32_t{data[3]} << 16 | std::uint32_t{data[4]} << 24;
  const std::span<const std::uint8_t> rest(data + 5, size - 5);
  const std::span<const std::uint8_t> first = rest.first(std::min<std::size_t>(split, rest.size()));
  const std::span<const std::uint8_t> second = rest.subspan(first.size());
  try {
    switch (data[0] % 4) {
      case 0:  // an MNIST folder
        folder.write("mnist", "train-images-idx3-ubyte", first);
        folder.write("mnist", "train-labels-idx1-ubyte", second);
        read_samples(h5pack::mnist_input(folder.folder("mnist"), "auto"), first.size());
        break;
      case 1: {  // MNIST named by its images file
        const std::string images = folder.write("mnist", "t10k-images-idx3-ubyte", first);
        folder.write("mnist", "t10k-labels-idx1-ubyte", second);
        read_samples(h5pack::mnist_input(images, "test"), first.size());
        break;
      }
      case 2:  // a CIFAR-10 folder
        folder.write("cifar", "data_batch_1.bin", first);
        folder.write("cifar", "batches.meta.txt", second);
        read_samples(h5pack::cifar10_input(folder.folder("cifar"), "auto"), first.size());
        break;
      default: {  // a .npy image array and its labels (none when empty)
        const std::string images = folder.write("npy", "images.npy", first);
        const std::string labels = second.empty() ? "" : folder.write("npy", "labels.npy", second);
        read_samples(h5pack::npy_input(images, labels), first.size());
        break;
      }
    }
  } catch (const gpufeed::formats::FormatError&) {
  }
  return 0;
}
