#include "gpufeed/formats/image_work.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "image_errors.hpp"

namespace gpufeed::formats {

namespace {

// The decoder names the source alone (not "sample N of ...") for this sample index.
constexpr std::uint64_t kNoSample = std::numeric_limits<std::uint64_t>::max();

BadFile unreadable(const std::string& path, int error) {
  return {BadKind::unreadable, "cannot read " + path + ": " + std::strerror(error)};
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

/// `width` x `height` shrunk so that its longer side is at most `max_side` (0: no limit).
std::pair<std::uint32_t, std::uint32_t> fit(std::uint32_t width, std::uint32_t height,
                                            std::uint32_t max_side) {
  const std::uint32_t longer = std::max(width, height);
  if (max_side == 0 || longer <= max_side) return {width, height};
  const auto scaled = [&](std::uint32_t side) {
    const std::uint64_t value = (std::uint64_t{side} * max_side + longer / 2) / longer;
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, value));
  };
  return {scaled(width), scaled(height)};
}

JpegShape jpeg_shape(std::uint32_t width, std::uint32_t height, std::uint32_t channels) {
  return {static_cast<std::uint16_t>(height), static_cast<std::uint16_t>(width),
          static_cast<std::uint16_t>(channels)};
}

void reshape(Image& image, std::uint32_t width, std::uint32_t height, std::uint32_t channels) {
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(std::size_t{width} * height * channels);
}

/// Adds the pixels of a 1- or 3-channel image to RGB sums; one channel counts as gray RGB.
void add_image(const ConstImageView& image, ChannelSums& sums) {
  if (image.channels == 3) return add_pixels(image, sums);
  ChannelSums gray;
  add_pixels(image, gray);
  for (std::size_t c = 1; c < 3; ++c) {
    gray.sum[c] = gray.sum[0];
    gray.sum_sq[c] = gray.sum_sq[0];
  }
  sums.add(gray);
}

/// A decoder's message without the advice for a loader's bad sample: a packer says its own.
std::string without_sample_advice(std::string message) {
  const std::size_t at = message.find(detail::kBadSampleAdvice);
  if (at != std::string::npos) message.erase(at, detail::kBadSampleAdvice.size());
  return message;
}

}  // namespace

std::string to_string(BadKind kind) {
  constexpr const char* kNames[kBadKinds] = {"unreadable", "not a JPEG, PNG or WebP image",
                                             "truncated or damaged", "too large", "empty"};
  return kNames[static_cast<std::size_t>(kind)];
}

std::string key(BadKind kind) {
  constexpr const char* kKeys[kBadKinds] = {"unreadable", "unsupported", "damaged", "too_large",
                                            "empty"};
  return kKeys[static_cast<std::size_t>(kind)];
}

BadKind classify_decoder_error(const std::string& message) {
  if (message.find("is empty") != std::string::npos) return BadKind::empty;
  if (message.find("gpufeed decodes JPEG, PNG and WebP") != std::string::npos) {
    return BadKind::unsupported;
  }
  if (message.find("megapixels") != std::string::npos) return BadKind::too_large;
  return BadKind::damaged;
}

std::optional<BadFile> read_image_file(const std::string& path, std::vector<std::uint8_t>& out) {
  // O_NONBLOCK: a FIFO named like an image must not hang the run.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return unreadable(path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return unreadable(path, errno);
  if (!S_ISREG(info.st_mode)) return BadFile{BadKind::unreadable, path + " is not a regular file"};
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size == 0) return BadFile{BadKind::empty, path + " is empty (0 bytes)"};
  if (size > schema::kMaxSampleBytes) {
    return BadFile{BadKind::too_large, path + " has " + std::to_string(size) +
                                           " bytes, more than the 256 MiB a sample may have"};
  }
  out.resize(size);
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd.get(), out.data() + done, size - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return unreadable(path, errno);
    if (got == 0) {  // cut after it was opened
      return BadFile{BadKind::unreadable, "cannot read " + path + ": it ended after " +
                                              std::to_string(done) + " of its " +
                                              std::to_string(size) +
                                              " bytes (it changed while it was read)"};
    }
    done += static_cast<std::uint64_t>(got);
  }
  return std::nullopt;
}

std::optional<BadFile> ImageWorker::read_header(const std::string& path, ImageInfo& info) {
  decoder_.set_source(path);
  try {
    info = decoder_.header(file_, kNoSample);
  } catch (const FormatError& e) {
    return BadFile{classify_decoder_error(e.what()), without_sample_advice(e.what())};
  }
  return std::nullopt;
}

std::optional<BadFile> ImageWorker::decode_at(const std::string& path, const ImageInfo& info,
                                              ScalingFactor scale) {
  const bool jpeg = info.format == ImageFormat::jpeg;
  if (!jpeg) scale = {};
  reshape(decoded_, scale.scale(info.width), scale.scale(info.height), 3);
  try {
    if (jpeg) {
      decoder_.jpeg().decode(file_, info.jpeg, scale, decoded_.view(), kNoSample);
    } else {
      decoder_.decode(file_, info, decoded_.view(), kNoSample);
    }
  } catch (const FormatError& e) {
    return BadFile{BadKind::damaged,
                   without_sample_advice(e.what()) + "; " + path + " is truncated or damaged"};
  }
  return std::nullopt;
}

ConstImageView ImageWorker::shrink(const ConstImageView& image, std::uint32_t max_side,
                                   ResizeFilter filter) {
  const auto [width, height] = fit(image.width, image.height, max_side);
  if (width == image.width && height == image.height) return image;
  reshape(resized_, width, height, image.channels);
  resizer_.resize(image, resized_.view(), filter);
  return resized_.view();
}

std::vector<std::uint8_t> ImageWorker::encode_bytes(const ConstImageView& image, int quality,
                                                    bool gray) {
  if (!encoder_ || encoder_quality_ != quality) {
    encoder_.emplace(quality);
    encoder_quality_ = quality;
  }
  if (!gray || image.channels == 1) return encoder_->encode(image);
  // A grayscale source stays grayscale: its decoded RGB has three equal channels.
  reshape(gray_, image.width, image.height, 1);
  for (std::uint32_t y = 0; y < image.height; ++y) {
    const std::uint8_t* in = image.row(y);
    std::uint8_t* out = gray_.pixels.data() + std::size_t{y} * image.width;
    for (std::uint32_t x = 0; x < image.width; ++x) out[x] = in[std::size_t{x} * image.channels];
  }
  return encoder_->encode(gray_.view());
}

ImageResult ImageWorker::to_jpeg(const std::string& path, const JpegSettings& settings) {
  ImageResult r;
  if ((r.bad = read_image_file(path, file_))) return r;
  return jpeg_of_file(path, settings);
}

ImageResult ImageWorker::to_jpeg(std::vector<std::uint8_t> bytes, const std::string& name,
                                 const JpegSettings& settings) {
  ImageResult r;
  if (bytes.empty()) {
    r.bad = BadFile{BadKind::empty, name + " is empty (0 bytes)"};
    return r;
  }
  if (bytes.size() > schema::kMaxSampleBytes) {
    r.bad = BadFile{BadKind::too_large, name + " has " + std::to_string(bytes.size()) +
                                            " bytes, more than the 256 MiB a sample may have"};
    return r;
  }
  file_ = std::move(bytes);
  return jpeg_of_file(name, settings);
}

ImageResult ImageWorker::jpeg_of_file(const std::string& path, const JpegSettings& settings) {
  ImageResult r;
  ImageInfo info;
  if ((r.bad = read_header(path, info))) return r;
  const auto [width, height] = fit(info.width, info.height, settings.max_side);
  const ScalingFactor scale = best_scale(info.width, info.height, width, height);
  if ((r.bad = decode_at(path, info, scale))) return r;
  if (settings.quality == 0 && width == info.width && height == info.height) {
    // Kept as it came, whatever its format: nothing is lost or re-compressed.
    add_pixels(decoded_.view(), r.sums);
    r.shape = jpeg_shape(info.width, info.height, info.channels);
    r.bytes = std::move(file_);
    r.format = info.format;
    return r;
  }
  const ConstImageView stored = shrink(decoded_.view(), settings.max_side, settings.filter);
  add_pixels(stored, r.sums);
  const bool gray = info.channels <= 2 && !info.palette;
  const int quality = settings.quality != 0 ? settings.quality : 90;
  r.bytes = encode_bytes(stored, quality, gray);
  r.shape = jpeg_shape(stored.width, stored.height, gray ? 1 : 3);
  r.reencoded = true;
  r.format = ImageFormat::jpeg;
  return r;
}

ImageResult ImageWorker::to_raw(const std::string& path, const RawSettings& settings) {
  ImageResult r;
  ImageInfo info;
  if ((r.bad = read_image_file(path, file_)) || (r.bad = read_header(path, info))) return r;
  // Decode at a reduced DCT scale only while the image stays twice the target size, so that
  // the resize still averages enough pixels.
  const ScalingFactor scale =
      best_scale(info.width, info.height, 2 * settings.width, 2 * settings.height);
  if ((r.bad = decode_at(path, info, scale))) return r;
  r.bytes.resize(std::size_t{settings.width} * settings.height * 3);
  const ImageView out{r.bytes.data(), settings.width, settings.height, 3,
                      std::size_t{settings.width} * 3};
  resizer_.resize(decoded_.view(), out, settings.filter);
  r.shape = jpeg_shape(info.width, info.height, info.channels);
  r.format = info.format;
  return r;
}

ImageResult ImageWorker::encode(const ConstImageView& image, const JpegSettings& settings) {
  ImageResult r;
  const ConstImageView stored = shrink(image, settings.max_side, settings.filter);
  add_image(stored, r.sums);
  const int quality = settings.quality != 0 ? settings.quality : 90;
  r.bytes = encode_bytes(stored, quality, stored.channels == 1);
  r.shape = jpeg_shape(stored.width, stored.height, stored.channels);
  r.reencoded = true;
  r.format = ImageFormat::jpeg;
  return r;
}

}  // namespace gpufeed::formats
