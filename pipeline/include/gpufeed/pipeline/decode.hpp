#pragma once
// LoaderOptions::image.decode: where a jpeg-layout file's JPEGs are decoded (the CPU, or the GPU's
// hardware JPEG engines through nvJPEG), and what the loader knows of nvJPEG on this machine.
#include <array>
#include <cstdint>
#include <string>

namespace gpufeed::pipeline {

enum class Decode : std::uint8_t {
  cpu,  ///< libjpeg-turbo (and libspng, libwebp) on the loader's workers
  /// The GPU's JPEG engines (nvJPEG's hardware backend) take every image they can decode,
  /// straight into device memory, where one kernel crops, resizes and flips it; the rest
  /// (progressive, CMYK, 4:1:1, PNG, WebP, damaged files) go to the workers. Needs a CUDA
  /// device with JPEG engines (A100, H100, H200, ...) and libnvjpeg.
  gpu,
  /// The engines first; the workers take a share of the decodable images only while the
  /// engines cannot keep up with the consumer, chosen from measured rates. The CPU alone where
  /// there are no engines (no CUDA device, no libnvjpeg, a GPU without NVJPG).
  automatic,
};
inline constexpr std::array<const char*, 3> kDecodeNames{"cpu", "gpu", "auto"};
std::string to_string(Decode decode);
/// Parses cpu | gpu | auto; throws OptionError naming `decode` otherwise.
Decode parse_decode(const std::string& text);

/// Where gpufeed looks for libnvjpeg (loaded at run time, the first time a loader decodes on
/// the GPU), in this order: $GPUFEED_NVJPEG, the files and directories given here (the Python
/// package adds PyPI's nvidia-nvjpeg and the copies inside torchvision's and torch's wheels),
/// the library search path, then $CUDA_HOME, $CUDA_PATH and /usr/local/cuda. Thread-safe.
void add_nvjpeg_library(const std::string& file_or_directory);

/// What loading libnvjpeg found: the file and its version, or why none could be used.
struct NvjpegLibrary {
  bool loaded = false;
  std::string path;
  std::string version;  ///< "13.0.1"
  std::string why;      ///< one line when not loaded
};
/// Loads libnvjpeg if no loader has yet (the built-in search above) and says what it found.
/// Never throws. Without nvJPEG's header at build time: not loaded, and `why` says so.
NvjpegLibrary nvjpeg_library();

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::add_nvjpeg_library;
using pipeline::Decode;
using pipeline::kDecodeNames;
using pipeline::nvjpeg_library;
using pipeline::NvjpegLibrary;
using pipeline::parse_decode;
using pipeline::to_string;
}  // namespace gpufeed
