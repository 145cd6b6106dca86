#pragma once
// The per-image work of packing images into a file (h5pack convert, gpufeed.pack), done on many
// threads at once: read a file (or take its bytes), check and decode it, sum its pixels, and
// keep its bytes, re-encode it, or resize it to raw pixels.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/formats/channel_sums.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"

namespace gpufeed::formats {

enum class BadKind { unreadable, unsupported, damaged, too_large, empty };
inline constexpr std::size_t kBadKinds = 5;

/// "unreadable", "not a JPEG, PNG or WebP image", "truncated or damaged", "too large", "empty".
std::string to_string(BadKind kind);
/// The key of a kind in JSON output: "unreadable", "unsupported", ...
std::string key(BadKind kind);

/// Why one input image cannot be packed; `message` is one line that names it.
struct BadFile {
  BadKind kind = BadKind::damaged;
  std::string message;
};

/// The kind of a decoder failure, from its message (the decoder says "is empty", "gpufeed
/// decodes JPEG, PNG and WebP" for another format, "megapixels" for the pixel limit; anything
/// else is a damaged or truncated file).
BadKind classify_decoder_error(const std::string& message);

/// How the jpeg layout stores an image: its own bytes whatever its format (JPEG, PNG, WebP), or
/// re-encoded as JPEG at `quality` (every image when given, 90 otherwise) when its longer side
/// is over `max_side` (0: no limit), shrunk to max_side.
struct JpegSettings {
  int quality = 0;
  std::uint32_t max_side = 0;
  ResizeFilter filter = ResizeFilter::bilinear;
};

/// The raw layout of images: every image resized to height x width, RGB.
struct RawSettings {
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  ResizeFilter filter = ResizeFilter::bilinear;
};

/// One image on its way to the writer: encoded bytes (jpeg store) or pixels (raw store), or
/// why it cannot be packed.
struct ImageResult {
  std::optional<BadFile> bad;
  std::vector<std::uint8_t> bytes;
  JpegShape shape;
  ChannelSums sums;
  bool reencoded = false;                     ///< jpeg store: the bytes are not the file's own
  ImageFormat format = ImageFormat::unknown;  ///< of the stored bytes
};

/// The file's bytes. A file that cannot be opened or read is a BadFile (unreadable), one over
/// schema::kMaxSampleBytes is too large, an empty one is empty.
std::optional<BadFile> read_image_file(const std::string& path, std::vector<std::uint8_t>& out);

/// A decoder, an encoder, a resizer and their scratch images: one per thread.
class ImageWorker {
 public:
  /// The file as a jpeg-layout sample. Decodes it once (to validate it and sum its pixels);
  /// keeps its bytes, or re-encodes it as `settings` ask.
  ImageResult to_jpeg(const std::string& path, const JpegSettings& settings);
  /// The same for an image's encoded `bytes` already in memory; `name` names it in messages.
  ImageResult to_jpeg(std::vector<std::uint8_t> bytes, const std::string& name,
                      const JpegSettings& settings);
  /// The file decoded (a JPEG at a reduced DCT scale when much larger than the target) and
  /// resized to the raw settings' size: height * width * 3 bytes.
  ImageResult to_raw(const std::string& path, const RawSettings& settings);
  /// Pixels (1 or 3 channels) encoded as a JPEG at `settings.quality`, shrunk to max_side.
  ImageResult encode(const ConstImageView& image, const JpegSettings& settings);

 private:
  /// to_jpeg() of the bytes in file_.
  ImageResult jpeg_of_file(const std::string& name, const JpegSettings& settings);
  std::optional<BadFile> read_header(const std::string& path, ImageInfo& info);
  /// Decodes into decoded_: a JPEG at `scale`, other formats at full size.
  std::optional<BadFile> decode_at(const std::string& path, const ImageInfo& info,
                                   ScalingFactor scale);
  ConstImageView shrink(const ConstImageView& image, std::uint32_t max_side, ResizeFilter filter);
  std::vector<std::uint8_t> encode_bytes(const ConstImageView& image, int quality, bool gray);

  ImageDecoder decoder_;
  std::optional<JpegEncoder> encoder_;
  int encoder_quality_ = 0;
  Resizer resizer_;
  std::vector<std::uint8_t> file_;
  Image decoded_;
  Image resized_;
  Image gray_;
};

}  // namespace gpufeed::formats
