#pragma once
// Reading a whole trace file, gunzipping it when it starts with the gzip magic.
#include <string>

namespace gpufeed::profiler::detail {

/// The file's text; .gz (any name, detected by content) is decompressed with libdeflate,
/// concatenated members included. Throws TraceError naming the file on any failure.
std::string read_maybe_gzip(const std::string& path);

/// Decompresses gzip data in memory; throws TraceError(`what` + reason) on corrupt or
/// truncated input.
std::string gunzip(const std::string& data, const std::string& what);

}  // namespace gpufeed::profiler::detail
