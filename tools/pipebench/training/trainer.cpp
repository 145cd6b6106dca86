// pipebench's training stage in LibTorch: one model, one optimizer, a step per batch.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/text.hpp"
#include "gpufeed/profiler/range.hpp"
#include "gpufeed/torch/tensor.hpp"
#include "pipebench/training.hpp"
#include "pipebench/training/models.hpp"
#include "pipebench/training/precision.hpp"

#if defined(GPUFEED_TORCH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#define PIPEBENCH_TORCH_CUDA 1
#else
#define PIPEBENCH_TORCH_CUDA 0
#endif

namespace gpufeed::tools::pipebench {

namespace {

using ::torch::Tensor;

constexpr std::int64_t kMaxClasses = std::int64_t{1} << 20;

std::string shape_text(const formats::SampleShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
         std::to_string(s.channels);
}

void check_options(const TrainingOptions& o, bool cuda) {
  if (o.optimizer != "sgd" && o.optimizer != "adamw") {
    throw UsageError("--optimizer " + o.optimizer + ": unknown optimizer; use sgd or adamw");
  }
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    throw UsageError("--lr " + std::to_string(o.learning_rate) + ": must be a positive number");
  }
  if (o.num_classes < 2 || o.num_classes > kMaxClasses) {
    throw UsageError("--model " + o.model + ": " + std::to_string(o.num_classes) +
                     " classes; the labels must lie in [0, " + std::to_string(kMaxClasses) + ")");
  }
  if (o.deterministic && o.cudnn_benchmark) {
    throw UsageError(
        "--cudnn-benchmark picks algorithms by timing, --deterministic forbids that; use one");
  }
  if (cuda && !::torch::cuda::is_available()) {
    throw UsageError("--model " + o.model + " on " + o.device.str() +
                     ": this pipebench's LibTorch has no CUDA support; use --device cpu");
  }
}

/// Process-wide switches: cuDNN autotuning, deterministic algorithms, the seed of the weights.
void set_global_switches(const TrainingOptions& o, bool cuda) {
  auto& context = at::globalContext();
  context.setBenchmarkCuDNN(o.cudnn_benchmark);
  context.setDeterministicCuDNN(o.deterministic);
  context.setDeterministicAlgorithms(o.deterministic, /*warn_only=*/false);
  // cuBLAS is deterministic only with a fixed workspace (read when its handle is created).
  if (o.deterministic && cuda) ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
  ::torch::manual_seed(0);
}

class TorchTrainer final : public TrainingStage {
 public:
  explicit TorchTrainer(const TrainingOptions& options)
      : o_(options),
        cuda_(options.device.is_cuda()),
        device_(cuda_ ? ::torch::Device(::torch::kCUDA,
                                        static_cast<c10::DeviceIndex>(options.device.index))
                      : ::torch::Device(::torch::kCPU)) {
    check_options(o_, cuda_);
    autocast_ = training::autocast_dtype(o_.amp, cuda_);
    set_global_switches(o_, cuda_);
    model_ = training::make_model(o_.model, o_.input, o_.num_classes);
    model_->to(device_);
    if (o_.channels_last) {
      for (auto& p : model_->parameters()) {
        if (p.dim() == 4) p.set_data(p.data().contiguous(::torch::MemoryFormat::ChannelsLast));
      }
    }
    if (o_.eval) {
      model_->eval();
    } else {
      model_->train();
      if (o_.optimizer == "sgd") {
        optimizer_ = std::make_unique<::torch::optim::SGD>(
            model_->parameters(), ::torch::optim::SGDOptions(o_.learning_rate).momentum(0.9));
      } else {
        optimizer_ = std::make_unique<::torch::optim::AdamW>(
            model_->parameters(), ::torch::optim::AdamWOptions(o_.learning_rate));
      }
      if (autocast_ == ::torch::kFloat16) scaler_.emplace(device_);
    }
    dtype_ = autocast_ ? o_.amp : "float32";
  }

  void step(const Batch& batch) override {
    GPUFEED_RANGE("step");
    try {
      const Tensor x = gpufeed::torch::images_view(batch);
      const Tensor y = gpufeed::torch::labels_view(batch);
      check_input(x, batch.dtype());
      if (o_.eval) {
        const ::torch::NoGradGuard no_grad;
        last_loss_ = loss_of(x, y);
      } else {
        train_step(x, y);
      }
    } catch (const c10::Error& e) {
      fail(e, batch.size());
    }
    ++steps_;
    if (o_.sync_every != 0 && steps_ % o_.sync_every == 0) {
      GPUFEED_RANGE("sync");
      synced_loss_ = last_loss_.item<float>();
    }
  }

  [[nodiscard]] TrainingStats stats() const override {
    TrainingStats s;
    s.steps = steps_;
    s.last_loss = last_loss_.defined() ? last_loss_.item<double>() : 0.0;
    s.allocator_peak_bytes = allocator_peak_bytes();
    s.deterministic = at::globalContext().deterministicAlgorithms();
    s.dtype = dtype_;
    s.threads = static_cast<unsigned>(at::get_num_threads());
    return s;
  }

 private:
  /// The batch must match the shape the model was built for; a low-precision batch without
  /// autocast turns the model to that dtype (once, before the first update).
  void check_input(const Tensor& x, DType dtype) {
    const formats::SampleShape& in = o_.input;
    if (x.size(1) != in.channels || x.size(2) != in.height || x.size(3) != in.width) {
      const formats::SampleShape got{static_cast<std::uint32_t>(x.size(2)),
                                     static_cast<std::uint32_t>(x.size(3)),
                                     static_cast<std::uint32_t>(x.size(1)), in.layout};
      throw UsageError("--model " + o_.model + " was built for " + shape_text(in) +
                       " samples but a batch has " + shape_text(got) +
                       " samples; the data must match the model's input");
    }
    if (!autocast_ && x.scalar_type() != ::torch::kFloat32 && steps_ == 0) {
      model_->to(x.scalar_type());
      dtype_ = to_string(dtype);
    }
  }

  [[nodiscard]] Tensor loss_of(const Tensor& x, const Tensor& y) const {
    Tensor logits;
    {
      const training::AutocastScope autocast(autocast_, cuda_);
      logits = model_->forward(x);
    }
    return ::torch::nn::functional::cross_entropy(logits.to(::torch::kFloat32), y).detach_();
  }

  void train_step(const Tensor& x, const Tensor& y) {
    optimizer_->zero_grad();
    Tensor logits;
    {
      const training::AutocastScope autocast(autocast_, cuda_);
      logits = model_->forward(x);
    }
    const Tensor loss = ::torch::nn::functional::cross_entropy(logits.to(::torch::kFloat32), y);
    if (scaler_) {
      scaler_->scale(loss).backward();
      scaler_->unscale(model_->parameters());
      optimizer_->step();
      scaler_->update();
    } else {
      loss.backward();
      optimizer_->step();
    }
    last_loss_ = loss.detach();
  }

  [[noreturn]] void fail(const c10::Error& e, std::uint32_t batch) const {
    const std::string what = e.what_without_backtrace();
    if (what.find("out of memory") != std::string::npos ||
        what.find("can't allocate memory") != std::string::npos) {
      throw Error("model " + o_.model + " ran out of memory on " + o_.device.str() +
                  " with a batch of " + std::to_string(batch) +
                  " samples; lower --batch (e.g. --batch " +
                  std::to_string(batch > 1 ? batch / 2 : 1) + ") or use a smaller --model");
    }
    throw Error("model " + o_.model + " failed on a batch of " + std::to_string(batch) +
                " samples: " + first_line(what));
  }

  [[nodiscard]] std::uint64_t allocator_peak_bytes() const {
#if PIPEBENCH_TORCH_CUDA
    if (!cuda_) return 0;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
    return static_cast<std::uint64_t>(stats.allocated_bytes[0].peak);  // [0]: all pools
#else
    return 0;
#endif
  }

  TrainingOptions o_;
  bool cuda_;
  ::torch::Device device_;
  std::optional<::torch::ScalarType> autocast_;
  std::shared_ptr<training::Model> model_;
  std::unique_ptr<::torch::optim::Optimizer> optimizer_;
  std::optional<training::LossScaler> scaler_;
  Tensor last_loss_;
  float synced_loss_ = 0;
  std::uint64_t steps_ = 0;
  std::string dtype_;
};

}  // namespace

std::unique_ptr<TrainingStage> TrainingStage::create(const TrainingOptions& options) {
  if (options.model == "none") return nullptr;
  return std::make_unique<TorchTrainer>(options);
}

}  // namespace gpufeed::tools::pipebench
