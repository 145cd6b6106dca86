#pragma once
// decode=gpu and decode=auto on a CUDA device: a batch's JPEGs go to the GPU's JPEG engines and
// the crop-resize kernel, straight into the slot's device pixels; what the engines cannot take
// (and, with auto, the share the split gives the workers) the workers decode into the slot's
// host pixels, which the staging copies over those positions only.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda/jpeg_engines.hpp"
#include "decode_split.hpp"
#include "gpu_decode_plan.hpp"
#include "gpufeed/formats/jpeg_frame.hpp"
#include "gpufeed/formats/scratch_pool.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/pipeline/decode.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "image_samples.hpp"
#include "slot_pool.hpp"

namespace gpufeed::pipeline::detail {

/// One batch on the engines: the lane it decodes on and, per batch position, where its image
/// goes and the plan for it. Leased by the worker that assembles the batch.
/// Where a batch position is decoded, and why there.
enum class Route : std::uint8_t {
  engines,
  not_decodable,  ///< the engines do not take the image (its HardwareJpeg verdict says why)
  split,          ///< decode=auto gave it to the workers
  engine_error,   ///< nvJPEG refused its part
  cpu_path,       ///< nothing to decode (a crop of padding only) or a crop the CPU path refuses
};

struct EngineBatch {
  formats::detail::ScratchPool<EngineLane>::Lease lane;
  std::vector<Route> routes;  // by position
  std::vector<formats::HardwareJpeg> verdicts;
  std::vector<ImagePlan> plans;
};

/// One per loader. Thread-safe: each batch leases a lane of its own.
class GpuSamples {
 public:
  /// Starts the engines on CUDA device `device` (throws OptionError naming decode, one line,
  /// when they cannot be used). `cpu` is the CPU decoder of the same samples (its placements
  /// are the ones the kernel renders).
  GpuSamples(Decode mode, int device, const formats::JpegShards& reader, const ImageSamples& cpu);

  /// Starts a batch of `count` samples: leases a lane and reclaims it.
  [[nodiscard]] EngineBatch begin(std::uint32_t count);
  /// Reads sample `sample` at batch position `position` and decides where it is decoded:
  /// true when the engines take it (its plan made), false for the CPU. `cpu_from`: positions
  /// from it on go to the CPU when decodable too (decode=auto's share). Thread-safe for
  /// distinct positions. Returns the read time in `read_ns`.
  bool plan(EngineBatch& batch, std::uint32_t position, std::uint64_t sample, std::uint64_t epoch,
            std::uint32_t cpu_from, std::int64_t& read_ns) const;
  /// Queues the engines' images into `device_pixels` (the slot's uint8 samples) and records
  /// `decoded` after them. Positions the engines refused are appended to `to_cpu`, with the
  /// reason in `why`.
  void submit(EngineBatch& batch, std::uint8_t* device_pixels, void* decoded,
              std::vector<std::uint32_t>& to_cpu, std::string& why);

  /// How many of `count` positions, from the end of the batch, the CPU takes under decode=auto
  /// with `workers` workers (all of them counted as decodable: the positions are fixed before
  /// the headers are read). 0 under decode=gpu.
  [[nodiscard]] std::uint32_t cpu_positions(std::uint32_t count, unsigned workers) const;
  void record_cpu(std::uint32_t images, std::int64_t busy_ns);
  void record_consumer(std::uint32_t images, std::int64_t interval_ns, std::int64_t wait_ns);

  [[nodiscard]] DecodeStats stats() const;
  void reset_stats();

 private:
  const Decode mode_;
  const formats::JpegShards& reader_;
  const ImageSamples& cpu_;
  JpegEngines engines_;
  mutable formats::detail::ScratchPool<EngineLane> lanes_;
  DecodeSplit split_;
  std::atomic<std::uint64_t> engine_images_{0}, cpu_images_{0}, failed_parts_{0};
  std::atomic<std::int64_t> engine_device_ns_{0};
  std::array<std::atomic<std::uint64_t>, formats::kHardwareJpegReasons> cpu_by_verdict_{};
  std::array<std::atomic<std::uint64_t>, 5> cpu_by_route_{};
};

}  // namespace gpufeed::pipeline::detail
