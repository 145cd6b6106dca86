#pragma once
// Dataset schema v1: the names h5pack writes and the limits every reader enforces.
#include <cstdint>

namespace gpufeed::formats::schema {

inline constexpr int kVersion = 1;
inline constexpr const char* kSchemaAttr = "gpufeed.schema";
inline constexpr const char* kLayoutAttr = "gpufeed.layout";

inline constexpr const char* kImages = "/images";
inline constexpr const char* kLabels = "/labels";
inline constexpr const char* kMean = "/meta/mean";
inline constexpr const char* kStd = "/meta/std";
inline constexpr const char* kClassNames = "/meta/class_names";
inline constexpr const char* kChunkAddr = "/index/chunk_addr";
inline constexpr const char* kChunkSize = "/index/chunk_size";

inline constexpr const char* kLayoutRaw = "raw";
inline constexpr const char* kLayoutJpeg = "jpeg";
inline constexpr const char* kJpegBytes = "/jpeg/bytes";
inline constexpr const char* kJpegOffsets = "/jpeg/offsets";
inline constexpr const char* kJpegShapes = "/jpeg/shapes";
/// CRC-32 (the zlib polynomial, as Python's zlib.crc32) of each sample's bytes; optional.
inline constexpr const char* kJpegCrc32 = "/jpeg/crc32";

/// Largest sample (one image) a reader accepts: 256 MiB, e.g. 8192x8192x4.
inline constexpr std::uint64_t kMaxSampleBytes = 256ull << 20;
/// Largest chunk (or chunk row, for users' files whose chunks split images) a reader accepts.
inline constexpr std::uint64_t kMaxChunkBytes = 1ull << 30;

/// Largest image a decoder accepts (JPEG, PNG, WebP): 100 megapixels (e.g. 12000x8333). A
/// header that declares more is refused before any pixel memory is allocated: such files are
/// damaged or hostile ("decompression bombs"), and one of them would take 300 MB as RGB.
inline constexpr std::uint64_t kMaxImagePixels = 100'000'000;

/// Most samples a reader accepts in one dataset (it keeps a label for each in memory).
inline constexpr std::uint64_t kMaxSamples = 1ull << 32;

/// Most bytes of data a file can hold per byte of its own size: deflate, the densest codec a
/// reader decodes itself, packs at most 1032 bytes into one. A dataset that declares more was
/// never written in full, or the file is damaged; readers refuse it before they size memory
/// (labels, offsets, names) from what it declares.
inline constexpr std::uint64_t kMaxBytesPerFileByte = 1032;

/// Default chunk size h5pack aims for (DESIGN: 256 KiB - 4 MiB a chunk).
inline constexpr std::uint64_t kTargetChunkBytes = 1ull << 20;

}  // namespace gpufeed::formats::schema
