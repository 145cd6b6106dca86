#pragma once
// The per-image work of h5pack convert, done on many threads at once: read a file, check and
// decode it, sum its pixels, and keep its bytes, re-encode it, or resize it to raw pixels.
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
#include "h5pack/bad_files.hpp"

namespace gpufeed::tools::h5pack {

/// The sums of the RGB pixels h5pack stores the mean and std of (channels 0 to 2).
using formats::ChannelSums;

/// How --store jpeg writes an image: its own bytes whatever its format (JPEG, PNG, WebP), or
/// re-encoded as JPEG at `quality` (every image when given, 90 otherwise) when its longer side
/// is over `max_side` (0: no limit), shrunk to max_side.
struct JpegSettings {
  int quality = 0;
  std::uint32_t max_side = 0;
  formats::ResizeFilter filter = formats::ResizeFilter::bilinear;
};

/// --store raw: every image resized to height x width, RGB.
struct RawSettings {
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  formats::ResizeFilter filter = formats::ResizeFilter::bilinear;
};

/// One image on its way to the writer: encoded bytes (jpeg store) or pixels (raw store), or
/// why it cannot be packed.
struct ImageResult {
  std::optional<BadFile> bad;
  std::vector<std::uint8_t> bytes;
  formats::JpegShape shape;
  ChannelSums sums;
  bool reencoded = false;  ///< jpeg store: the bytes are not the file's own
  formats::ImageFormat format = formats::ImageFormat::unknown;  ///< of the stored bytes
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
  /// The file decoded (a JPEG at a reduced DCT scale when much larger than the target) and
  /// resized to the raw settings' size: height * width * 3 bytes.
  ImageResult to_raw(const std::string& path, const RawSettings& settings);
  /// Pixels (1 or 3 channels) encoded as a JPEG at `settings.quality`, shrunk to max_side.
  ImageResult encode(const formats::ConstImageView& image, const JpegSettings& settings);

 private:
  std::optional<BadFile> read_header(const std::string& path, formats::ImageInfo& info);
  /// Decodes into decoded_: a JPEG at `scale`, other formats at full size.
  std::optional<BadFile> decode_at(const std::string& path, const formats::ImageInfo& info,
                                   formats::ScalingFactor scale);
  formats::ConstImageView shrink(const formats::ConstImageView& image, std::uint32_t max_side,
                                 formats::ResizeFilter filter);
  std::vector<std::uint8_t> encode_bytes(const formats::ConstImageView& image, int quality,
                                         bool gray);

  formats::ImageDecoder decoder_;
  std::optional<formats::JpegEncoder> encoder_;
  int encoder_quality_ = 0;
  formats::Resizer resizer_;
  std::vector<std::uint8_t> file_;
  formats::Image decoded_;
  formats::Image resized_;
  formats::Image gray_;
};

}  // namespace gpufeed::tools::h5pack
