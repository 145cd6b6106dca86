#pragma once
// What a CUDA runtime or driver API call means for the analysis.
#include <string>
#include <string_view>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler::detail {

/// "sync" for calls that block the host until the device catches up (stream/device/event
/// synchronize, synchronous copies, cudaFree), "launch" for everything else (issuing work).
const char* classify_runtime_call(std::string_view api) noexcept;

/// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (CUPTI appends the API version).
std::string strip_api_version(std::string_view api);

/// A synchronous copy blocks like a sync only when it waits on the device (device-to-host);
/// host-to-device ones are relabelled "launch" once their device record is known.
void refine_copy_calls(Timeline& timeline);

}  // namespace gpufeed::profiler::detail
