#pragma once
// What the caller knows about the input pipeline and the profiler cannot see in a trace.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::profiler {

/// A pool of worker processes that feeds the loop and is not gpufeed's Loader (a torch
/// DataLoader), as the consumer's process measured it: what making a batch costs one worker.
struct InputPoolFacts {
  unsigned workers = 0;         ///< worker processes; 0: the consumer makes its batches itself
  std::uint64_t batches = 0;    ///< batches the pool made
  std::uint64_t samples = 0;    ///< samples in them
  std::int64_t fetch_ns = 0;    ///< busy making them (dataset items, then collate), all workers
  std::int64_t collate_ns = 0;  ///< of which in collate
  std::int64_t startup_ns = 0;  ///< from each iterator's start to its first batch, summed
  std::uint64_t starts = 0;     ///< iterators started (one per epoch unless persistent)
  bool persistent_workers = false;
  bool pin_memory = false;
  unsigned prefetch_factor = 0;  ///< batches each worker runs ahead (0: unknown)
  bool cuda = false;             ///< batches go to a CUDA device
  unsigned cores = 0;            ///< cores the process may use (its affinity; 0: unknown)
  /// gpufeed's rate on a sample of the dataset packed once (gpufeed.pack, then gpufeed.Loader
  /// with every core), measured on this machine after the run; 0: not measured.
  double packed_samples_per_s = 0;
  std::uint64_t packed_items = 0;  ///< items in that sample
  std::string packed_store;        ///< its layout: "raw" or "jpeg"
  std::string pack_note;           ///< why no rate was measured (items not packable), or empty
  /// The process's CPU time a sample took in that measurement (0: not measured: every core is
  /// taken as busy at that rate), and of it the consumer thread's: the transform ops that run
  /// on each delivered batch, one after the other with the training step.
  double packed_core_ns_per_sample = 0;
  double packed_consumer_ns_per_sample = 0;
  /// The dataset's own transform, so the advice keeps training on the same inputs: the keywords
  /// it adds to the Loader's call (", transform=dataset.transform"), and what of it is fused,
  /// what runs on the batch, what cannot move as it is (a target_transform, an op the loader
  /// refuses). Empty: the dataset has no transform.
  std::string pack_loader_keywords;
  std::string pack_transform_note;
  /// Cores the training step kept busy while it ran (the process's CPU time in the steps over
  /// their wall time; a step on a device, or one that mostly waits, near 0). Workers beside a
  /// step that needs the cores slow it: the model counts them. 0: unknown or a device step.
  double step_cores = 0;
  /// A step's time right after the step before it (no wait for input between them), from a
  /// probe that took two batches at once now and then: a step after a wait runs on cold caches
  /// (and a halted core), so today's steps can be slower than those of a loop that no longer
  /// waits. 0: not measured (a loop too short for a probe, steps that draw the random numbers
  /// the loading in the process draws, or the probe turned off).
  std::int64_t warm_step_ns = 0;
};

/// Inputs to the recommendation model. Every field is optional; leave unknowns empty and the
/// recommendations that need them say so instead of guessing. pipebench fills it from its
/// options and LoaderStats.
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
  /// The worker pool feeding the loop when it is not a gpufeed Loader (loader_settings false).
  std::optional<InputPoolFacts> input_pool;
};

}  // namespace gpufeed::profiler
