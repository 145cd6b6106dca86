#pragma once
// What each lane of a run's timeline is, named by its role rather than by a thread id or a
// stream number alone: the Chrome trace and the HTML report show the same names.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler::detail {

/// Each host thread's lane, from the ranges it recorded: "consumer" (training steps, waits for
/// input), "worker N" (the loader's read, decode, assemble ... stages; N from 1 in the order
/// the threads began), "copy" (only the loader's copies to the device), "DataLoader worker N"
/// (a torch DataLoader's worker process: its fetches), else "thread TID". A
/// second consumer is "consumer 2", and so on.
std::map<std::uint64_t, std::string> host_lane_names(const Timeline& t);

/// Each device stream's lane within its device: "copy stream S" when it only copied or set
/// memory, else "stream S".
std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> stream_lane_names(const Timeline& t);

}  // namespace gpufeed::profiler::detail
