#pragma once
// The work of the loader's flow-graph nodes: reading (or decoding) a batch's samples into its
// slot, flipping them, normalizing or staging them for the device, and re-augmenting echoes.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "dataset_source.hpp"
#include "gpu_samples.hpp"
#include "gpufeed/base/stages.hpp"
#include "gpufeed/pipeline/chunk_cache.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/normalize.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "image_samples.hpp"
#include "raw_samples.hpp"
#include "slot_pool.hpp"

namespace gpufeed::pipeline::detail {

class CudaStaging;

/// One per loader, shared by its epochs. The stage methods run on the arena's threads, several
/// batches at once; reaugment() runs on the consumer's. Calls go one way: the stage work knows
/// nothing of epochs, pools or tuning. Thread-safe where the graph needs it (counters, cache).
class StageWork {
 public:
  /// Opens the dataset `options.source.path` and, for a CUDA device, the staging; `options` and
  /// `arena` must outlive the stage work (reaugment() enters the arena).
  StageWork(const LoaderOptions& options, oneapi::tbb::task_arena& arena);
  ~StageWork();
  StageWork(const StageWork&) = delete;
  StageWork& operator=(const StageWork&) = delete;

  /// Fills a fresh slot with the `position`-th batch of `order` (labels, indices, count), batch
  /// `index` of `epoch`.
  void prepare(Slot& slot, std::uint64_t epoch, std::uint64_t position, std::uint64_t index,
               const std::vector<std::uint64_t>& order) const;
  /// A file in object storage: fetches what `order` (an epoch's samples from the position it
  /// starts at) will read, ahead of the reads: each chunk (or image) once, in the order of the
  /// batches, sorted within a batch. Nothing for a local file.
  void plan_reads(const std::vector<std::uint64_t>& order) const;
  /// The first node: the samples' pixels into slot.raw (read and copied, or decoded), flipped;
  /// or, without keeps_raw(), converted from their chunks into the output.
  void assemble(Slot& slot);
  /// The second node: normalized on the host (CPU device) or staged and normalized on the device.
  void normalize(Slot& slot);
  /// The consumer took a batch of `images` after waiting `wait_ns` for it (decode=auto's split
  /// learns the consumer's pace from it).
  void consumer_took(std::uint32_t images, std::int64_t wait_ns);
  /// Why decode=auto decodes on the CPU although the loader runs on a CUDA device (no
  /// libnvjpeg, no JPEG engines), with `{field}` placeholders; empty otherwise.
  [[nodiscard]] const std::string& decode_notice() const { return decode_notice_; }
  /// The stage the first node is: decode for an encoded layout, else read.
  [[nodiscard]] Stage first_stage() const { return image_samples_ ? Stage::decode : Stage::read; }

  /// Echoes get a new flip (LoaderOptions::echo.reaugment with a flipping augment).
  [[nodiscard]] bool reaugments_echoes() const;
  /// Shows batch `from` as echo `repeat` in `target` (`from` itself, or a slot of the echo
  /// pool): mirrors the samples whose flip differs from the fresh delivery and normalizes again
  /// (CPU), or queues the normalize kernel with the new flips on `from`'s device pixels (CUDA).
  void reaugment(Slot& from, Slot& target, std::uint32_t repeat);

  /// Workers the loader runs now: a batch's samples are split among them.
  void set_workers(unsigned workers) noexcept { workers_.store(workers); }
  /// Workers the loader may run at most (its threads): what the read-ahead is sized for.
  void set_threads(unsigned threads) noexcept { threads_.store(threads); }
  /// While set, a batch being decoded stops early (its epoch is being cancelled).
  void set_stopping(bool stopping) noexcept { stopping_.store(stopping); }

  [[nodiscard]] const DatasetSource& source() const { return source_; }
  [[nodiscard]] const formats::SampleShape& shape() const { return shape_; }
  [[nodiscard]] const NormalizeParams& norm() const { return norm_; }
  /// The slots need their uint8 pixels (slot.raw): false when they go from the chunks straight
  /// into the output.
  [[nodiscard]] bool keeps_raw() const { return !direct_; }
  /// Null on the CPU device.
  [[nodiscard]] CudaStaging* staging() const { return staging_.get(); }

  /// The stage counters, the reads, the cache and the staging, into `stats`.
  void fill_stats(LoaderStats& stats) const;
  void reset_stats();

  /// Busy time and items per stage (the consumer's wait included: the loader adds it).
  StageCounters counters;

 private:
  [[nodiscard]] storage::ReadAhead read_ahead() const;
  void copy_samples(Slot& slot, std::uint32_t begin, std::uint32_t end);
  void decode_samples(Slot& slot, std::uint32_t begin, std::uint32_t end);
  /// decode=gpu|auto: the engines take what they can, the workers the rest.
  void decode_on_engines(Slot& slot);
  /// Decodes `positions` of the slot on the workers; returns their busy time.
  std::int64_t decode_positions(Slot& slot, const std::vector<std::uint32_t>& positions);
  void decode_or_replace(Slot& slot, std::uint32_t position);
  void flip_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) const;
  void maybe_stall(Stage stage, const Slot& slot);
  /// One warning line the first time nvJPEG refuses a part of a batch.
  void warn_engine_refusal(const std::string& why);
  void normalize_on_host(Slot& slot);
  /// Converts `count` samples at `in` (uint8, the file's layout) into the slot's output from
  /// `position` on: normalized, or NCHW uint8 (CPU device).
  void convert_on_host(const std::uint8_t* in, Slot& slot, std::uint32_t position,
                       std::uint32_t count) const;

  const LoaderOptions& options_;
  oneapi::tbb::task_arena& arena_;
  const std::optional<StallInjection> stall_;  // testing::injected_stall() when built
  const DatasetSource source_;
  const formats::SampleShape shape_;                 // one sample in a slot, before normalization
  const std::optional<ImageSamples> image_samples_;  // the encoded (jpeg) layout's decoder
  const std::optional<RawSamples> raw_samples_;      // the raw layout through a Geometry
  const NormalizeParams norm_;
  const std::unique_ptr<CudaStaging> staging_;  // null on the CPU device
  std::string decode_notice_;
  const std::unique_ptr<GpuSamples> gpu_samples_;  // decode=gpu|auto with engines; else null
  ChunkCache cache_;
  /// keep_raw off on the CPU device, raw layout, no flip, crop or echo: each sample goes from
  /// its chunk straight into the output (no copy into slot.raw; the normalize node does nothing).
  const bool direct_;
  std::atomic<unsigned> workers_{1};
  std::atomic<unsigned> threads_{1};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> chunk_reads_{0}, bytes_read_{0}, skipped_{0}, reaugmented_{0};
  std::atomic<std::uint64_t> cpu_decoded_{0};  // images the workers decoded
  std::atomic<std::int64_t> last_delivery_ns_{0};
  std::atomic<bool> warned_refusal_{false};
  /// The object-store counters when the stats were last reset (a file in object storage).
  mutable std::mutex network_mutex_;
  storage::ObjectStoreStats network_base_;
};

}  // namespace gpufeed::pipeline::detail
