#pragma once
// How decoders name a sample in their messages, and the advice every such message ends with.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace gpufeed::formats::detail {

/// The sample index for a standalone file (h5pack reading a folder): messages name the source
/// alone, not "sample N of ...".
inline constexpr std::uint64_t kNoSample = std::numeric_limits<std::uint64_t>::max();

/// "sample 17 of train.h5", or the source alone for kNoSample.
std::string describe_sample(const std::string& source, std::uint64_t sample);

/// Appended to messages about a sample that cannot be decoded.
inline constexpr std::string_view kBadSampleAdvice =
    "; replace the image, or skip bad samples (on_error skip, pipebench --on-error skip, "
    "h5pack convert --skip-bad)";

/// Throws FormatError when `width` x `height` is over schema::kMaxImagePixels, naming the
/// sample and the format; called before anything the size decides is allocated.
void check_pixel_limit(std::uint32_t width, std::uint32_t height, const char* format,
                       const std::string& source, std::uint64_t sample);

}  // namespace gpufeed::formats::detail
