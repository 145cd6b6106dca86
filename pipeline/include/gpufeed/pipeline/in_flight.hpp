#pragma once
// What the loaders' worker threads are doing now, for a watcher on another thread: the Python
// profile's stall report names the stage, the batch and the sample a stalled loader is in, and
// for how long. Each worker registers its work as it takes it (pipeline/src/in_flight.hpp).
#include <cstdint>
#include <string>
#include <vector>

namespace gpufeed::pipeline {

/// One worker thread's current work.
struct WorkInFlight {
  std::string path;   ///< the loader's file
  std::string stage;  ///< "read", "decode", "assemble", "normalize"
  std::uint64_t epoch = 0;
  std::uint64_t batch = 0;    ///< the batch's index in its epoch
  std::int64_t sample = -1;   ///< the sample being read or decoded; -1: the batch as a whole
  std::int64_t since_ns = 0;  ///< when the work began (the recorder's clock)
};

/// Every loader's work in flight now, the oldest first.
[[nodiscard]] std::vector<WorkInFlight> work_in_flight();

}  // namespace gpufeed::pipeline
