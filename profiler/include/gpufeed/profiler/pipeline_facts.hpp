#pragma once
// What the caller knows about the input pipeline and the profiler cannot see in a trace.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::profiler {

/// A file in object storage: what reading it asked of the network over the run.
struct NetworkFacts {
  std::uint64_t requests = 0;
  std::uint64_t throttled = 0;  ///< answers that asked to slow down (503, SlowDown)
  std::uint64_t retries = 0;
  std::uint64_t peak_in_flight = 0;  ///< most GETs in flight at once
  unsigned read_requests = 0;        ///< GETs the loader may keep in flight
  double mean_first_byte_ms = 0;
  std::int64_t backoff_ns = 0;  ///< time spent waiting to retry
  /// Time requests waited for the client's own request rate, kept under what the server
  /// accepts once it refused some (SlowDown).
  std::int64_t rate_wait_ns = 0;
  double rate_limit = 0;     ///< requests a second the client allowed itself at the end; 0: none
  std::uint64_t bytes = 0;   ///< body bytes the GETs brought
  bool jpeg_layout = false;  ///< one request per image unless read in chunk order (blocks)
};

/// What the caller knows of its input, for the analysis (stage_busy names a bottleneck where no
/// ranges do; workers and pool_workers scale the stages' shares) and for gpufeed::diagnosis's
/// recommendation rules, which read the rest. Every field is optional; leave unknowns empty and
/// the recommendations that need them say so instead of guessing. pipebench fills it from its
/// options and LoaderStats.
struct PipelineFacts {
  /// The input is a gpufeed Loader whose settings the recommendations may change. False: an
  /// input known only by the consumer's waits (a torch DataLoader, a generator).
  bool loader_settings = true;
  std::optional<unsigned> workers;           ///< loader threads
  std::optional<unsigned> cpu_cores;         ///< cores the loader may use
  std::optional<unsigned> prefetch;          ///< batches the loader may run ahead
  std::optional<unsigned> echo;              ///< current echo factor (1 = off)
  std::optional<Order> order;                ///< sample order
  std::optional<std::uint64_t> cache_bytes;  ///< chunk cache budget
  /// Busy fraction per stage name, 0..1 per worker (LoaderStats::busy_fraction).
  std::map<std::string, double> stage_busy;
  std::optional<bool> pinned_memory;              ///< host batch slots are pinned
  std::optional<double> cache_hit_rate;           ///< chunk cache hits / lookups
  std::optional<std::uint64_t> chunk_reads;       ///< chunks fetched in the run
  std::optional<std::uint64_t> chunks_read_once;  ///< distinct chunks touched (the minimum)
  std::optional<std::uint64_t> transfer_bytes_per_sample;  ///< bytes copied H2D per sample
  std::optional<std::uint64_t> uint8_bytes_per_sample;     ///< the same sample as uint8
  std::optional<NetworkFacts> network;                     ///< set for a file in object storage
  /// Samples a training step takes (the batch size); unknown: no samples/s predictions beyond
  /// the input pool's own.
  std::optional<double> samples_per_step;
  /// Worker processes of the pool feeding the loop when it is not a gpufeed Loader (a torch
  /// DataLoader's): the "dataset" and "collate" stages' busy share is per worker. 0: the loop's
  /// own process makes its batches.
  unsigned pool_workers = 0;
};

}  // namespace gpufeed::profiler
