#pragma once
// How a JPEG is coded, read from its markers without decoding it: the frame (SOFn) and its
// scans. Enough to tell whether a hardware JPEG decoder (the GPU's NVJPG engines) takes it.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace gpufeed::formats {

/// What the markers of one JPEG declare. `valid` is false when no frame header was found
/// before the first scan (or the bytes are not a JPEG); the rest is then meaningless.
struct JpegFrame {
  bool valid = false;
  std::uint8_t sof = 0;         ///< the SOFn marker's code: 0xC0 baseline, 0xC2 progressive, ...
  std::uint32_t precision = 0;  ///< bits per sample: 8, or 12 (16 for lossless)
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;
  /// Horizontal and vertical sampling factors of the first four components.
  std::array<std::uint8_t, 4> h{}, v{};
  std::uint32_t scans = 0;  ///< SOS markers up to EOI (or the end of the bytes)
  bool ends = false;        ///< an EOI marker follows the last scan: the data is whole
  bool adobe_rgb = false;   ///< an Adobe APP14 marker says the 3 components are RGB, not YCbCr
  bool rgb_ids = false;     ///< the 3 components are named 'R', 'G', 'B' (libjpeg reads RGB)
};

/// Reads the frame and counts the scans. Walks the marker segments and, after each SOS, skips
/// the entropy-coded data to the next marker (stuffed FF 00 and restart markers are data).
/// Never throws; `valid` says whether a frame was found.
JpegFrame read_jpeg_frame(std::span<const std::uint8_t> bytes);

/// Whether a hardware JPEG decoder takes an image, and if not, why. The NVJPG engines decode
/// baseline Huffman-coded 8-bit JPEGs of one scan, grayscale or YCbCr with 4:4:4, 4:2:2,
/// 4:2:0 or 4:4:0 chroma; the rest goes to the CPU decoders.
enum class HardwareJpeg : std::uint8_t {
  decodable,
  not_jpeg,        ///< no frame header: not a JPEG (PNG, WebP) or a damaged one
  progressive,     ///< SOF2/SOF6: several scans of increasing detail
  arithmetic,      ///< SOF9-SOF15 arithmetic coding
  lossless,        ///< SOF3/SOF7/SOF11/SOF15
  extended,        ///< SOF1: extended sequential (more tables, or 12-bit)
  precision,       ///< not 8 bits per sample
  components,      ///< CMYK, YCCK (4 components) or another count than 1 or 3
  colorspace,      ///< RGB stored as such (Adobe transform 0), not YCbCr
  subsampling,     ///< 4:1:1, 4:1:0 or chroma sampled otherwise than the engines take
  multiple_scans,  ///< a baseline image whose components come in separate scans
  truncated,       ///< the data ends before EOI
};
inline constexpr std::size_t kHardwareJpegReasons = 12;

/// The engines' verdict on `frame`.
HardwareJpeg hardware_decodable(const JpegFrame& frame);

/// "progressive", "4:1:1 or other chroma subsampling", ...: what the stats and reports name.
std::string_view to_string(HardwareJpeg verdict);

}  // namespace gpufeed::formats
