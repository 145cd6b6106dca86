#pragma once
// What a profiled run knows beyond its timeline: the loader's settings and counters and the
// training stage's. run_facts() fills the loader's part once, from a Loader; each front end
// adds its loop's (steps, epochs, the training stage, the rank). The diagnosis and the
// practice checks read nothing else.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/base/knobs.hpp"
#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/label_mix.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::pipeline {
class Loader;
}

namespace gpufeed::diagnosis {

/// What a loop did inside its steps, as a front end saw it (the Python profile watches the
/// calls; pipebench's own loop has none of these).
struct LoopHabits {
  std::uint64_t host_reads = 0;  ///< calls that read a tensor on the host (.item(), .cpu(), ...)
  std::string host_read_site;    ///< the commonest of them: "train.py:42 .item()"
  bool data_parallel = false;    ///< torch.nn.DataParallel ran a forward
  std::uint64_t empty_cache_calls = 0;  ///< torch.cuda.empty_cache() during the run
  /// Tensors made on the host and moved to a device inside the steps (not the batch's own).
  std::uint64_t host_tensor_moves = 0;
  std::string host_tensor_site;  ///< the commonest place: "train.py:40 .to()"
  /// Forwards of a module in eval() with autograd on, inside the steps (evaluation that
  /// records a graph it never uses).
  std::uint64_t eval_grad_forwards = 0;
  std::string eval_grad_site;      ///< where the first one was called
  bool forwards = false;           ///< the loop ran module forwards (the habits below are known)
  bool training_forwards = false;  ///< some in train() mode
  bool cuda_forwards = false;      ///< on a CUDA device
  std::string autocast_dtype;      ///< of torch.autocast in the forwards: "" (none), "bfloat16"
  bool bf16_supported = false;     ///< the CUDA device computes in bfloat16
  bool convolutions = false;       ///< the model has convolution layers
  bool cudnn_benchmark = false;    ///< torch.backends.cudnn.benchmark was on
};

struct RunFacts {
  /// A gpufeed Loader fed the run. False for any other input (a torch DataLoader, a generator),
  /// known only by the consumer's waits: no loader setting is advised or checked then.
  bool gpufeed_input = true;
  /// The worker pool that fed the run when it was not a gpufeed Loader (a torch DataLoader).
  std::optional<InputPoolFacts> input_pool;
  /// Ranges recorded in other processes, added to the run's timeline: a torch DataLoader's
  /// fetches in its worker processes ("dataset", "collate"; each process its own thread id).
  std::vector<profiler::HostRange> process_ranges;
  LoaderStats stats;  ///< the loader's counters over the run
  unsigned workers = 0;
  unsigned prefetch = 0;
  EchoOptions echo;
  bool cuda = false;            ///< batches went to a CUDA device
  formats::SampleShape sample;  ///< one sample as the loader delivers it (uint8)
  std::uint64_t batch_size = 0;
  std::uint64_t samples_per_chunk = 0;  ///< of the file's image dataset (1: not chunked)
  bool encoded = false;                 ///< a jpeg-layout file (encoded images)
  std::uint64_t chunks = 0;             ///< chunks in the file
  std::uint64_t epochs = 0;             ///< epochs started
  std::uint64_t steps = 0;              ///< batches consumed
  std::uint64_t seed = 0;
  Order order = Order::chunk;
  std::uint64_t cache_bytes = 0;  ///< the chunk cache budget
  Augment augment = Augment::none;
  LabelMix label_mix;  ///< how the order mixes the file's labels into batches
  /// The process's place in a distributed job (-1, 0: not distributed).
  std::int32_t rank = -1;
  std::int32_t world_size = 0;
  // The training stage, when one ran:
  bool training = false;
  unsigned torch_threads = 0;  ///< its intra-op CPU threads (0: unknown)
  bool deterministic = false;  ///< deterministic algorithms only
  LoopHabits habits;
};

/// The loader's part of a run's facts: its settings as it runs them (workers, prefetch, echo,
/// device, sample shape, order, seed, cache, augmentation) and `stats`, its counters over the
/// run. The loop's part (steps, epochs, training, rank) is left for the front end.
RunFacts run_facts(const pipeline::Loader& loader, const LoaderStats& stats);

/// Cache hits / lookups; nullopt before any lookup.
std::optional<double> cache_hit_rate(const LoaderStats& s);

/// Share of the wall time the consumer was blocked on the loader.
double input_wait_share(const LoaderStats& s);

}  // namespace gpufeed::diagnosis
