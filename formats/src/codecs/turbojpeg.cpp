#include "turbojpeg.hpp"

#include "gpufeed/formats/error.hpp"

namespace gpufeed::formats {

void TjHandleTraits::destroy(void* handle) noexcept {
  tjDestroy(handle);
}

}  // namespace gpufeed::formats

namespace gpufeed::formats::detail {

namespace {

// The last EOI marker comes after the last SOS marker. Inside entropy-coded data FF is always
// followed by 00 or a restart marker, so these byte pairs are markers (or part of a thumbnail,
// which comes before the main image's scans).
bool ends_after_last_scan(std::span<const std::uint8_t> bytes) {
  for (std::size_t i = bytes.size(); i >= 2; --i) {
    if (bytes[i - 2] != 0xFF) continue;
    if (bytes[i - 1] == 0xD9) return true;
    if (bytes[i - 1] == 0xDA) return false;
  }
  return false;
}

// libjpeg's JWRN_EXTRANEOUS_DATA: junk between segments, skipped without losing a pixel.
// Every other warning (premature end of data, bad Huffman code, lost restart markers) means
// part of the image was invented by the decoder, so the sample is refused. libjpeg reports only
// the first warning of an image, so junk must not hide a truncation behind it: the file must
// still end its last scan properly.
bool loses_no_data(std::string_view warning, std::span<const std::uint8_t> bytes) {
  return warning.find("extraneous bytes") != std::string_view::npos &&
         (bytes.empty() || ends_after_last_scan(bytes));
}

TjHandle checked_handle(tjhandle handle, const char* kind) {
  if (handle == nullptr) {
    throw FormatError(std::string("cannot create a TurboJPEG ") + kind + ": " +
                      tjGetErrorStr2(nullptr) + "; the process may be out of memory");
  }
  return TjHandle(handle);
}

}  // namespace

void on_tj_failure(tjhandle handle, const TjCall& call) {
  on_decode_failure(tjGetErrorStr2(handle), tjGetErrorCode(handle) == TJERR_WARNING, call);
}

void on_decode_failure(std::string_view reason, bool warning, const TjCall& call) {
  if (warning && loses_no_data(reason, call.bytes)) return;
  std::string message = "cannot ";
  message += call.action;
  message += ' ';
  message += describe_sample(call.source, call.sample);
  message += ": ";
  message += reason;
  if (call.sample != kNoSample) message += kBadSampleAdvice;
  throw FormatError(message);
}

TjHandle make_decompressor() {
  return checked_handle(tjInitDecompress(), "decompressor");
}

TjHandle make_compressor() {
  return checked_handle(tjInitCompress(), "compressor");
}

}  // namespace gpufeed::formats::detail
