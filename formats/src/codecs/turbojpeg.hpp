#pragma once
// Private TurboJPEG helpers: creating instances and the one checked call every tj* call goes
// through, so each failure names the sample and says what to do.
#include <turbojpeg.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "gpufeed/formats/jpeg_codec.hpp"
#include "image_errors.hpp"

namespace gpufeed::formats::detail {

/// Where a TurboJPEG call was working, for its error message.
struct TjCall {
  std::string_view action;  ///< "decode", "read the header of", "encode"
  const std::string& source;
  std::uint64_t sample;
  std::span<const std::uint8_t> bytes = {};  ///< the JPEG being decoded, when there is one
};

/// Throws FormatError for a failure libjpeg reported (`reason`, its message), or returns when
/// it was only a `warning` that loses no image data (extraneous bytes between markers, in a
/// file whose last scan is followed by its end marker).
void on_decode_failure(std::string_view reason, bool warning, const TjCall& call);

/// on_decode_failure for the failure TurboJPEG reported on `handle`.
void on_tj_failure(tjhandle handle, const TjCall& call);

/// The checked call: `status` is what a tj* function returned.
inline void check_tj(tjhandle handle, int status, const TjCall& call) {
  if (status != 0) on_tj_failure(handle, call);
}

/// A new TurboJPEG decompressor or compressor; throws FormatError when none can be created.
TjHandle make_decompressor();
TjHandle make_compressor();

}  // namespace gpufeed::formats::detail
