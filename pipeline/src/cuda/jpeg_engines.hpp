#pragma once
// The GPU's hardware JPEG engines (NVJPG) through nvJPEG's hardware backend, and the
// crop-resize kernel after them: encoded JPEGs in host memory become cropped, resized, flipped
// uint8 samples in a slot's device memory, with no CPU decode and no copy of decoded pixels.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "gpu_decode_plan.hpp"

namespace gpufeed::pipeline::detail {

struct NvjpegApi;

/// What one batch decoding on the engines holds: an nvJPEG state and per-image parameters, the
/// stream its work runs on, device buffers for the decoded regions, the kernel's scratch and
/// tables, and the encoded bytes (which nvJPEG may read until the work is done). Leased by one
/// worker for one batch; buffers grow to the largest batch seen, within the budget.
struct EngineLane {
  EngineLane() = default;
  EngineLane(const EngineLane&) = delete;
  EngineLane& operator=(const EngineLane&) = delete;
  ~EngineLane();

  const NvjpegApi* api = nullptr;  // set when the lane is first used
  void* state = nullptr;           // nvjpegJpegState_t
  std::vector<void*> params;       // nvjpegDecodeParams_t per image
  int initialized = -1;            // the batch size the state is initialized for
  CudaStream stream;
  CudaEvent start, done;
  bool pending = false;      // work was queued since the lane was last reclaimed
  std::uint32_t images = 0;  // decoded since then
  DeviceMemory regions, scratch, tables;
  std::uint64_t regions_capacity = 0, scratch_capacity = 0, tables_capacity = 0;
  PinnedMemory host_tables;
  std::uint64_t host_tables_capacity = 0;
  std::vector<std::vector<std::uint8_t>> bytes;  // encoded images, by batch position
  std::vector<const unsigned char*> data;
  std::vector<std::size_t> lengths;
  std::vector<std::uint8_t> destinations;  // nvjpegImage_t array, as bytes
};

/// Device time the engines and the kernel took for one lane's batch.
struct EngineTiming {
  std::int64_t device_ns = 0;
  std::uint32_t images = 0;
};

/// One per loader on a CUDA device. The constructor loads libnvjpeg and starts the hardware
/// backend, throwing UsageError (one line: why, and what to do) when either is missing.
/// Thread-safe: each worker decodes on a lane of its own.
class JpegEngines {
 public:
  JpegEngines(int device, std::uint32_t out_width, std::uint32_t out_height);
  ~JpegEngines();
  JpegEngines(const JpegEngines&) = delete;
  JpegEngines& operator=(const JpegEngines&) = delete;

  /// Waits for the lane's last batch (queued a pool of batches ago, normally long done) and
  /// returns its device time; makes the lane ready for a new batch.
  EngineTiming reclaim(EngineLane& lane);
  /// Queues `part` (images whose bytes are lane.bytes[position]) on the lane's stream: the
  /// engines decode each image's region, the kernel writes each sample into `out_device` at
  /// its position. False when nvJPEG refused the part (`why` says how): nothing of it was
  /// written and the caller decodes those images on the CPU.
  bool decode(EngineLane& lane, const CropResizeBatch& part, std::uint8_t* out_device,
              std::string& why);
  /// Records `event` on the lane's stream: the batch's samples are written when it completes.
  void record(EngineLane& lane, void* event);

  [[nodiscard]] const std::string& library() const { return library_; }

 private:
  void prepare(EngineLane& lane, std::uint32_t images);
  void reserve(EngineLane& lane, const CropResizeBatch& part);

  const int device_;
  const std::uint32_t out_width_;
  const std::uint32_t out_height_;
  const NvjpegApi* api_ = nullptr;
  void* handle_ = nullptr;  // nvjpegHandle_t, shared by the lanes
  std::string library_;     // "path (version)"
};

}  // namespace gpufeed::pipeline::detail
