#pragma once
// The Loader a trainer iterates: batches of normalized images, in order, with bounded memory.
#include <array>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/base/auto_count.hpp"
#include "gpufeed/base/device.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/decode.hpp"
#include "gpufeed/pipeline/dtype.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/geometry.hpp"
#include "gpufeed/pipeline/label_mix.hpp"
#include "gpufeed/pipeline/loader_state.hpp"
#include "gpufeed/pipeline/sampler.hpp"
#include "gpufeed/pipeline/stats.hpp"

namespace gpufeed::pipeline {

namespace detail {
class LoaderCore;
struct Slot;
}  // namespace detail

/// What to read: the dataset and where its images and labels are.
struct SourceOptions {
  /// The dataset: one file, a directory of shards with its manifest (or an object prefix ending
  /// in '/'), a manifest, or a glob of files ("train-*.h5", "s3://bucket/train/*.h5"); local
  /// paths and s3:// URLs alike. Its shards are read as one dataset (formats/shards.hpp).
  std::string path{};
  /// Several of what `path` takes, read as one dataset in this order; `path` then only names it
  /// in messages (empty: the first and how many more).
  std::vector<std::string> paths{};
  std::string images = "/images";
  std::string labels = "/labels";  ///< empty: no labels
  std::optional<formats::Layout> layout{};
  bool use_index = true;  ///< false: ignore the file's /index (H5Dread_chunk path)
};

/// Which samples make up each batch, and in what order.
struct SamplingOptions {
  std::uint32_t batch_size = 256;
  bool drop_last = false;  ///< DataLoader's drop_last: no partial final batch
  bool drop_tail = false;  ///< DistributedSampler's drop_last
  Order order = Order::chunk;
  std::uint64_t seed = 0;
  std::uint64_t chunk_window = 16;
  /// Rank and world size; unset: RANK / WORLD_SIZE from the environment (torchrun).
  std::optional<Shard> shard{};
};

/// The threads and memory the loader may use.
///
/// workers and prefetch take AutoCount::automatic(): the loader tunes them while it runs. It
/// starts small, watches its stages and the consumer's wait, raises the concurrency of what
/// holds it back (or gives a core back when its workers idle), within cpu_budget and
/// memory_bytes; each change is in stats().tuning and on the profiler's timeline. The sample
/// order does not depend on it.
///
/// workers=0 and cpu_budget=0 take the rank's share of the cores (stats().cpu_share), so the
/// ranks of a node take its cores once between them: the cores the process may run on (its
/// affinity mask) divided by LOCAL_WORLD_SIZE (torchrun's ranks on this node; unset: 1, all
/// of them), rounded down, at least 1: `torchrun --nproc_per_node=8` on 64 cores, 8 a rank.
/// A rank pinned to cores of its own (a mask smaller than its launcher's, the parent
/// process's: taskset or numactl per rank, srun --cpu-bind) keeps them: the mask already is
/// its share and is not divided again; ranks pinned several to one NUMA node share that
/// node's cores. A rank pinned by a shell that stays its parent looks unpinned (its share is
/// divided): give workers or cpu_budget. A count given is taken as it is.
struct ResourceOptions {
  AutoCount workers = 0;    ///< threads of the loader's task arena; 0: the rank's share
  AutoCount prefetch = 4;   ///< batches prepared ahead of the consumer
  unsigned cpu_budget = 0;  ///< workers=auto: at most this many threads; 0: the rank's share
  /// prefetch=auto: batch slots may hold at most this many bytes (allocated once, at start);
  /// 0: 1 GiB. Up to 16 batches.
  std::uint64_t memory_bytes = 0;
};

/// How the dataset's bytes are read and kept: the chunk cache, object storage's read-ahead and
/// its node-local disk cache.
struct StorageOptions {
  /// Chunk cache budget. Smaller than one chunk (0 included) still works: the cache then keeps
  /// the last chunk read, besides the chunks the workers are reading from.
  std::uint64_t cache_bytes = 512ull << 20;
  /// A file in object storage (s3://): GETs kept in flight ahead of the reads, planned from the
  /// epoch's order (neighbouring ranges coalesced) within half the chunk cache budget (at
  /// least 64 MiB). auto: as many as fill that budget with the file's mean read, at most 32 per
  /// worker thread (more would only queue), 16 to 256. A local file ignores it.
  AutoCount read_requests = AutoCount::automatic();
  /// A file in object storage: a node-local directory that keeps every chunk (or image) read,
  /// so later epochs read the disk. Tied to the object's ETag (a replaced object is never served
  /// from it), shared safely by the ranks of a node. Empty: none.
  std::string cache_dir{};
  /// cache_dir's budget, least recently used files removed past it; 0: half the free space of
  /// its filesystem.
  std::uint64_t cache_dir_bytes = 0;
};

/// What happens to each sample's pixels on the way into the batch: decode, resize, crops and
/// flips.
struct ImageOptions {
  /// jpeg layout: every sample is decoded and resized to height x width (0: 224).
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  formats::ResizeFilter resize_filter = formats::ResizeFilter::bilinear;
  Augment augment = Augment::none;
  /// torchvision's geometric transforms, fused into the decode (both layouts); its fields are
  /// settings of their own (resize, crop, crop_scale, ...). A crop's output size is
  /// height x width (`size`). Set, it replaces `augment`, which must stay none.
  Geometry geometry{};
  /// jpeg layout: where the images are decoded: cpu (the workers), gpu (the GPU's JPEG engines
  /// for every image they take, the workers for the rest) or auto (the engines first, the
  /// workers for what the engines cannot keep up with; the CPU where there are no engines).
  /// gpu and auto need a CUDA device; gpu is refused without one, or without libnvjpeg or JPEG
  /// engines. The engines decode only the region the crop needs, and a kernel crops, resizes
  /// (the same filter as the CPU path) and flips on the device: pixels differ from the CPU
  /// decoder's by a few levels (another IDCT and chroma upsampling), and stats().decode counts
  /// where each image went.
  Decode decode = Decode::cpu;
};

/// The delivered batch: where it lives, its element type and layout, its normalization.
struct OutputOptions {
  /// Device::cpu(), a CUDA device ("cuda:N"; "cuda" alone follows LOCAL_RANK) or "auto" (CUDA
  /// when a device is usable); assignable from its text. With a CUDA device the batch is copied
  /// as uint8 and normalized there. options() reports the device the loader resolved.
  Device device{};
  DType dtype = DType::float32;                    ///< CUDA: float32, float16 or bfloat16
  formats::Layout layout = formats::Layout::nchw;  ///< CUDA: NCHW or NHWC output
  /// Per-channel mean and std on the 0-255 scale; empty: the file's /meta/mean and /meta/std
  /// (a constant channel, std 0, divided by 255), or 0 and 255 (output in [0, 1]) when the file
  /// has none. dtype uint8 reads neither.
  std::vector<float> mean{};
  std::vector<float> stddev{};
  /// CPU device: false lets a raw-layout batch without flips, crops or echoes go from the
  /// chunks it is read from straight into its output: one copy of every byte fewer, and no
  /// uint8 batch in its slot (raw() is then empty). true keeps each batch's uint8 pixels for
  /// Batch::raw() beside its output, for a caller that reads them.
  bool keep_raw = false;
};

/// The Loader's settings, grouped by concern: `options.source.path`, `options.output.dtype`.
/// Every field has a default that works; `source.path` is the only one to set. The ranges of
/// the numeric fields are kLoaderFields' (gpufeed/base/fields.hpp), which names each field
/// without its group (`batch_size`, as Python's keyword); check_options() checks them.
/// Designated initializers name the groups in this order, and may leave out any field (each
/// has an initializer, so -Wmissing-field-initializers stays quiet):
/// `LoaderOptions{.source = {.path = "train.h5"}, .sampling = {.batch_size = 64}}`.
struct LoaderOptions {
  SourceOptions source{};
  SamplingOptions sampling{};
  ResourceOptions resources{};
  StorageOptions storage{};
  ImageOptions image{};
  OutputOptions output{};
  EchoOptions echo{};  ///< batch echoing (off by default)
  OnError on_error = OnError::fail;
};

/// Throws OptionError for a numeric field outside its range (kLoaderFields). The Loader calls
/// it; a front end may call it to check settings before it builds anything.
void check_options(const LoaderOptions& options);

/// The geometry the loader applies: options.image.geometry with its crop size taken from `size`
/// (height x width), and, for a jpeg file (`stored` 0x0) that sets only flips, the resize to
/// `size` (224x224 by default) that `augment` applies. Throws OptionError when a crop has no
/// size, when `augment` is set beside it, or when it leaves a jpeg file's output size open.
Geometry loader_geometry(const LoaderOptions& options, bool jpeg);

/// One delivered batch: float32 NCHW images, labels and the sample indices they came from.
/// Move-only. Holds one slot of the loader's pool; release() (or destruction) returns it.
/// A batch may outlive its loader. Not thread-safe (one consumer).
class Batch {
 public:
  Batch() = default;
  Batch(Batch&& other) noexcept;
  Batch& operator=(Batch&& other) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch();

  explicit operator bool() const { return slot_ != nullptr; }
  /// True when this batch repeats the previous fresh batch (batch echoing).
  [[nodiscard]] bool echoed() const { return echoed_; }
  [[nodiscard]] std::uint64_t epoch() const;
  [[nodiscard]] std::uint64_t index() const;  ///< position in the epoch
  [[nodiscard]] std::uint32_t size() const;   ///< samples in this batch
  [[nodiscard]] formats::SampleShape sample_shape() const;
  /// [size, C, H, W] float32, normalized, in host memory (CPU device only; empty otherwise).
  [[nodiscard]] std::span<const float> images() const;
  /// The host images in dtype() (float32 or uint8), [size, C, H, W]; null on a CUDA device.
  [[nodiscard]] const void* host_images() const;
  /// The device the batch lives on: the CPU or a CUDA device with its index.
  [[nodiscard]] Device device() const;
  [[nodiscard]] DType dtype() const;
  /// Output dimensions in the output layout: [size, C, H, W] for NCHW, [size, H, W, C] for NHWC.
  [[nodiscard]] std::array<std::int64_t, 4> shape() const;
  [[nodiscard]] formats::Layout layout() const;
  /// CUDA: the normalized images and the labels in device memory (null on the CPU device).
  [[nodiscard]] const void* device_images() const;
  [[nodiscard]] const std::int64_t* device_labels() const;
  /// CUDA: makes `stream` (a cudaStream_t; null: the legacy default stream) wait until the
  /// batch is ready on the device. Never blocks the host. No-op on the CPU device.
  void wait_ready(void* stream) const;
  /// Releases the batch once the work queued so far on `stream` (a cudaStream_t) is done with
  /// it: the slot is reused only after that point on the device. Same as release() on the CPU.
  void release_after(void* stream);
  /// The same for a batch used on several streams: the slot is reused only after the work
  /// queued so far on every one of them.
  void release_after(std::span<void* const> streams);
  /// [size] labels.
  [[nodiscard]] std::span<const std::int64_t> labels() const;
  [[nodiscard]] std::span<const std::uint64_t> sample_indices() const;
  /// The uint8 pixels as read, in the file's layout, with the batch's flips (CPU device). On a
  /// CUDA device the fresh batch's pixels; empty for an echo that a held batch left to the
  /// echo slot (its pixels exist only on the device), and on the CPU device where keep_raw off
  /// sent them straight into the output. With decode=gpu only the samples the workers decoded
  /// are here (the engines' exist only on the device).
  [[nodiscard]] std::span<const std::uint8_t> raw() const;
  void release();

 private:
  friend class Loader;
  Batch(std::shared_ptr<detail::LoaderCore> core, detail::Slot* slot, bool echoed) noexcept;
  std::shared_ptr<detail::LoaderCore> core_;
  detail::Slot* slot_ = nullptr;
  bool echoed_ = false;
};

class Loader;

/// One pass over this rank's samples, iterated with range-for. Advancing the iterator releases
/// the previous batch first; keep a batch longer by moving it out.
class Epoch {
 public:
  class iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(Loader* loader);
    Batch& operator*() { return batch_; }
    Batch* operator->() { return &batch_; }
    iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return !it.batch_; }

   private:
    Loader* loader_ = nullptr;
    Batch batch_;
  };
  explicit Epoch(Loader* loader) : loader_(loader) {}
  iterator begin() { return iterator(loader_); }
  std::default_sentinel_t end() { return {}; }

 private:
  Loader* loader_;
};

/// Reads a dataset through a oneTBB flow graph in its own task arena and delivers normalized
/// batches in order.
///
/// The constructor opens and validates the file and allocates every batch slot once; bad
/// options throw UsageError, a bad file formats::FormatError. Workers read chunks (through
/// the chunk cache), copy samples into a free slot and normalize it; a stage that finds no
/// free slot waits (back-pressure), nothing is allocated per batch. A failure in a worker
/// stops the epoch and is thrown as PipelineError from the consumer's next call.
/// Destroying the loader (or starting another epoch) mid-epoch cancels the work in flight and
/// returns once the workers have stopped. One consumer thread; stats() from any thread.
class Loader {
 public:
  explicit Loader(LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  /// Starts epoch `epoch` (cancelling an unfinished one) and returns a range over its batches.
  Epoch epoch(std::uint64_t epoch);
  /// Starts epoch `epoch` without the range; then call next().
  void start_epoch(std::uint64_t epoch);
  /// The next batch in order; an empty Batch when the epoch is over. Blocks while the next
  /// batch is being prepared. Throws PipelineError if a worker failed.
  Batch next();
  /// Like next(), but waits at most `timeout`: nullopt when no batch was ready by then (the
  /// epoch goes on; call again). Lets a caller stay responsive, e.g. to signals.
  std::optional<Batch> try_next(std::chrono::nanoseconds timeout);

  [[nodiscard]] const LoaderOptions& options() const;
  /// The dataset's reader, whichever layout it is: count, labels, chunking, how it is read,
  /// its shards (one for a file).
  [[nodiscard]] const formats::ShardedDataset& dataset() const;
  /// The raw-layout dataset's reader (chunk reads, stored shape), or null for a jpeg-layout one.
  [[nodiscard]] const formats::RawShards* raw_dataset() const;
  /// The jpeg-layout dataset's reader (encoded samples), or null for a raw-layout one.
  [[nodiscard]] const formats::JpegShards* jpeg_dataset() const;
  /// One sample as delivered before normalization (stored shape, or the decode size).
  [[nodiscard]] formats::SampleShape sample_shape() const;
  [[nodiscard]] std::uint64_t batches_per_epoch() const;
  [[nodiscard]] std::uint64_t samples_per_epoch() const;
  /// How the order mixes the file's labels into batches (epoch 0's global order, measured
  /// when the loader opened); not measured for a file without labels.
  [[nodiscard]] const LabelMix& label_mix() const;
  /// What the loader noticed about its settings and the file when it opened, each one line
  /// with `{field}` placeholders for the front end's names (render_option_names): a file whose
  /// labels run sorted read in chunk order. Empty when nothing is worth a word.
  [[nodiscard]] const std::vector<std::string>& notices() const;
  /// Fresh batches of the epoch in progress: batches_per_epoch(), or what is left of an epoch
  /// that continues a restored state.
  [[nodiscard]] std::uint64_t batches_in_epoch() const;

  /// Where the consumer stands in the current epoch: plain data to keep in a checkpoint.
  /// Thread-safe. Take it when every rank has consumed the same number of batches (between
  /// training steps) and any rank's state describes the whole job.
  [[nodiscard]] LoaderState state() const;
  /// Continues from `state` when its epoch is started next (epoch(state.epoch)): with the
  /// same world size this rank goes on in its share where it stopped (a fixed echo factor
  /// mid-batch delivers the echoes that were missing), so the batches before and after are
  /// the uninterrupted epoch's; with another world size the samples no rank consumed are
  /// dealt to the new ranks, each once (DistributedSampler's padding aside). Starting another
  /// epoch first discards it. UsageError for a state of another dataset, seed, order, batch
  /// size or drop rule.
  void restore(const LoaderState& state);
  [[nodiscard]] unsigned workers() const;
  [[nodiscard]] LoaderStats stats() const;
  void reset_stats();
  /// Adds work a front end did for the loader on the consumer's thread (Stage::transform: a
  /// Python transform's ops on the delivered batch) to its stage counters. Thread-safe.
  void add_stage_work(Stage stage, std::int64_t busy_ns, std::uint64_t items);

 private:
  std::shared_ptr<detail::LoaderCore> core_;
};

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::Batch;
using pipeline::check_options;
using pipeline::Epoch;
using pipeline::ImageOptions;
using pipeline::Loader;
using pipeline::loader_geometry;
using pipeline::LoaderOptions;
using pipeline::OutputOptions;
using pipeline::ResourceOptions;
using pipeline::SamplingOptions;
using pipeline::SourceOptions;
using pipeline::StorageOptions;
}  // namespace gpufeed
