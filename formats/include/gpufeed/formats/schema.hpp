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

/// Largest sample (one image) a reader accepts: 256 MiB, e.g. 8192x8192x4.
inline constexpr std::uint64_t kMaxSampleBytes = 256ull << 20;
/// Largest chunk (or chunk row, for users' files whose chunks split images) a reader accepts.
inline constexpr std::uint64_t kMaxChunkBytes = 1ull << 30;

/// Most samples a reader accepts in one dataset (it keeps a label for each in memory).
inline constexpr std::uint64_t kMaxSamples = 1ull << 32;

/// Default chunk size h5pack aims for (DESIGN: 256 KiB - 4 MiB a chunk).
inline constexpr std::uint64_t kTargetChunkBytes = 1ull << 20;

}  // namespace gpufeed::formats::schema
