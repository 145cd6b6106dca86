// Reading how a JPEG is coded from its markers: the frame header, the Adobe marker and the
// scans, for the choice between the GPU's JPEG engines and the CPU decoders.
#include "gpufeed/formats/jpeg_frame.hpp"

#include <cstring>

namespace gpufeed::formats {

namespace {

std::uint32_t be16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at] << 8 | b[at + 1]);
}

bool is_start_of_frame(std::uint8_t marker) {
  // SOF0-SOF15 are C0-CF except DHT (C4), JPG (C8) and DAC (CC).
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

void read_frame(std::span<const std::uint8_t> b, std::size_t at, std::uint32_t length,
                JpegFrame& f) {
  // FF Cn, length, precision, height, width, components, then 3 bytes a component.
  if (length < 8 || at + 2 + length > b.size()) return;
  f.sof = b[at + 1];
  f.precision = b[at + 4];
  f.height = be16(b, at + 5);
  f.width = be16(b, at + 7);
  f.components = b[at + 9];
  if (length < 8 + 3 * f.components) return;
  for (std::uint32_t c = 0; c < f.components && c < 4; ++c) {
    const std::uint8_t factors = b[at + 11 + 3 * c];
    f.h[c] = factors >> 4;
    f.v[c] = factors & 0x0F;
  }
  f.rgb_ids = f.components == 3 && b[at + 10] == 'R' && b[at + 13] == 'G' && b[at + 16] == 'B';
  f.valid = true;
}

void read_adobe(std::span<const std::uint8_t> b, std::size_t at, std::uint32_t length,
                JpegFrame& f) {
  // APP14 "Adobe": version (2), flags0 (2), flags1 (2), transform (1): 0 means no colour
  // transform, i.e. RGB (or CMYK) as stored.
  if (length < 14 || at + 2 + length > b.size()) return;
  if (std::memcmp(&b[at + 4], "Adobe", 5) != 0) return;
  f.adobe_rgb = b[at + 15] == 0;
}

/// The position of the marker that ends the entropy-coded data starting at `at`: the first
/// FF followed by neither 00 (a stuffed byte), another FF (fill) nor D0-D7 (a restart).
std::size_t skip_entropy_data(std::span<const std::uint8_t> b, std::size_t at) {
  while (at < b.size()) {
    const void* ff = std::memchr(b.data() + at, 0xFF, b.size() - at);
    if (ff == nullptr) return b.size();
    at = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - b.data());
    if (at + 1 >= b.size()) return b.size();
    const std::uint8_t next = b[at + 1];
    if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
      at += 2;
    } else if (next == 0xFF) {
      at += 1;
    } else {
      return at;
    }
  }
  return b.size();
}

}  // namespace

JpegFrame read_jpeg_frame(std::span<const std::uint8_t> b) {
  JpegFrame f;
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return f;
  std::size_t at = 2;
  while (at + 1 < b.size()) {
    if (b[at] != 0xFF) return f;  // garbage between segments: leave `ends` false
    const std::uint8_t marker = b[at + 1];
    if (marker == 0xFF) {  // fill byte
      at += 1;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
      at += 2;
      continue;
    }
    if (marker == 0xD9) {
      f.ends = f.scans > 0;
      return f;
    }
    if (at + 4 > b.size()) return f;
    const std::uint32_t length = be16(b, at + 2);
    if (length < 2) return f;
    if (is_start_of_frame(marker) && !f.valid) read_frame(b, at, length, f);
    if (marker == 0xEE) read_adobe(b, at, length, f);
    at += 2 + length;
    if (marker == 0xDA) {
      if (!f.valid) return f;  // a scan before any frame
      ++f.scans;
      at = skip_entropy_data(b, at);
    }
  }
  return f;
}

HardwareJpeg hardware_decodable(const JpegFrame& f) {
  if (!f.valid) return HardwareJpeg::not_jpeg;
  switch (f.sof) {
    case 0xC0:
      break;
    case 0xC1:
      return HardwareJpeg::extended;
    case 0xC2:
    case 0xC6:
      return HardwareJpeg::progressive;
    case 0xC3:
    case 0xC7:
      return HardwareJpeg::lossless;
    default:
      return f.sof == 0xCB || f.sof == 0xCF ? HardwareJpeg::lossless : HardwareJpeg::arithmetic;
  }
  if (f.precision != 8) return HardwareJpeg::precision;
  if (f.components != 1 && f.components != 3) return HardwareJpeg::components;
  if (f.components == 3) {
    if (f.adobe_rgb || f.rgb_ids) return HardwareJpeg::colorspace;
    // Chroma at one sample per block of luma: luma 1x1, 2x1, 2x2 or 1x2 (4:4:4, 4:2:2,
    // 4:2:0, 4:4:0); 4x1 is 4:1:1 and 4x2 4:1:0, which the engines refuse.
    const bool chroma_one = f.h[1] == 1 && f.v[1] == 1 && f.h[2] == 1 && f.v[2] == 1;
    const bool luma_ok = (f.h[0] == 1 || f.h[0] == 2) && (f.v[0] == 1 || f.v[0] == 2);
    if (!chroma_one || !luma_ok) return HardwareJpeg::subsampling;
  }
  if (f.scans != 1) return f.scans == 0 ? HardwareJpeg::truncated : HardwareJpeg::multiple_scans;
  if (!f.ends) return HardwareJpeg::truncated;
  return HardwareJpeg::decodable;
}

std::string_view to_string(HardwareJpeg verdict) {
  constexpr std::string_view kNames[kHardwareJpegReasons] = {
      "decodable",      "not a JPEG",
      "progressive",    "arithmetic coding",
      "lossless",       "extended sequential",
      "not 8-bit",      "CMYK or YCCK",
      "RGB colorspace", "4:1:1 or other chroma subsampling",
      "several scans",  "truncated"};
  return kNames[static_cast<std::size_t>(verdict)];
}

}  // namespace gpufeed::formats
