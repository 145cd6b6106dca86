#pragma once
// pipebench's training stage: the work per step the profiler measures the pipeline against.
// No LibTorch types here: only training/*.cpp include LibTorch headers.
#include <cstdint>
#include <memory>
#include <string>

#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::tools::pipebench {

struct TrainingOptions {
  std::string model = "none";     ///< none | mlp | cnn | resnet18
  std::string optimizer = "sgd";  ///< sgd (momentum 0.9) | adamw
  double learning_rate = 0.01;
  bool eval = false;         ///< eval mode under NoGradGuard: forward passes only
  std::string amp = "none";  ///< none | float16 | bfloat16 (autocast where supported)
  bool channels_last = false;
  bool cudnn_benchmark = false;
  bool deterministic = false;
  std::uint32_t sync_every = 0;  ///< force a .item()-style device-to-host sync every k steps
  Device device;                 ///< the loader's device, resolved
  std::int64_t num_classes = 10;
  formats::SampleShape input;  ///< one sample as the model sees it (C, H, W)
};

struct TrainingStats {
  std::uint64_t steps = 0;
  double last_loss = 0;
  std::uint64_t allocator_peak_bytes = 0;  ///< LibTorch's CUDA caching allocator; 0 on CPU
  bool deterministic = false;
  std::string dtype = "float32";  ///< the compute dtype after autocast
  unsigned threads = 0;           ///< LibTorch's intra-op CPU threads
};

/// One model and optimizer. step() runs one forward/backward/update on a batch (or a forward
/// pass in eval mode) and marks it with the profiler's "step" range; a forced sync is marked
/// "sync". Errors: UsageError for a model that does not fit the sample shape or an unknown
/// option; std::runtime_error (one line) for a device out of memory.
class TrainingStage {
 public:
  /// Null for model "none".
  static std::unique_ptr<TrainingStage> create(const TrainingOptions& options);
  virtual ~TrainingStage() = default;
  virtual void step(const Batch& batch) = 0;
  [[nodiscard]] virtual TrainingStats stats() const = 0;
};

}  // namespace gpufeed::tools::pipebench
