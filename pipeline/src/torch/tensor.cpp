#include "gpufeed/torch/tensor.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <torch/cuda.h>

#include "gpufeed/base/errors.hpp"

// GPUFEED_TORCH_CUDA comes from the build when the LibTorch in use was built with CUDA; the
// headers alone are not enough (CPU packages ship c10/cuda headers without the library).
#if defined(GPUFEED_TORCH_CUDA) && __has_include(<c10/cuda/CUDAStream.h>)
#include <c10/cuda/CUDAStream.h>
#define GPUFEED_DETAIL_TORCH_CUDA 1
#else
#define GPUFEED_DETAIL_TORCH_CUDA 0
#endif

namespace gpufeed::torch {

namespace {

bool on_cuda(const Batch& batch) {
  return batch.device().is_cuda();
}

c10::DeviceIndex device_index(const Device& device) {
  return static_cast<c10::DeviceIndex>(std::max(device.index, 0));
}

/// The current LibTorch stream of a CUDA device as a cudaStream_t.
void* current_stream([[maybe_unused]] c10::DeviceIndex index) {
#if GPUFEED_DETAIL_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream(index).stream();
#else
  return nullptr;  // not reached: check_batch rejects CUDA batches without CUDA support
#endif
}

void check_batch(const Batch& batch, const char* what) {
  if (!batch) {
    throw UsageError(std::string("gpufeed::torch::") + what +
                     ": the batch is empty (released, or taken by images()/labels() "
                     "whose tensors are gone)");
  }
  if (!on_cuda(batch)) return;
  if (GPUFEED_DETAIL_TORCH_CUDA && ::torch::cuda::is_available()) return;
  throw UsageError(std::string("gpufeed::torch::") + what + ": the batch is on " +
                   batch.device().str() +
                   " but this LibTorch has no CUDA support; load on the CPU (device \"cpu\") "
                   "or build against a CUDA LibTorch");
}

struct TensorGeometry {
  std::array<std::int64_t, 4> sizes;
  std::array<std::int64_t, 4> strides;
};

/// [N, C, H, W] sizes, with channels-last strides for an NHWC batch.
TensorGeometry geometry(const Batch& batch) {
  const auto s = batch.shape();
  if (batch.layout() == formats::Layout::nhwc) {
    const std::int64_t n = s[0], h = s[1], w = s[2], c = s[3];
    return {{n, c, h, w}, {h * w * c, 1, w * c, c}};
  }
  return {{s[0], s[1], s[2], s[3]}, {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}};
}

::torch::TensorOptions options_for(const Batch& batch, ::torch::ScalarType type) {
  auto options = ::torch::TensorOptions().dtype(type);
  if (on_cuda(batch)) options = options.device(::torch::kCUDA, device_index(batch.device()));
  return options;
}

void* image_data(const Batch& batch) {
  const void* data = on_cuda(batch) ? batch.device_images() : batch.host_images();
  return const_cast<void*>(data);  // the tensor may write; the slot is the batch's own memory
}

void* label_data(const Batch& batch) {
  const std::int64_t* data = on_cuda(batch) ? batch.device_labels() : batch.labels().data();
  return const_cast<std::int64_t*>(data);
}

/// Makes the consumer's current stream wait for the batch (no-op on the CPU).
void wait_ready(const Batch& batch) {
  if (on_cuda(batch)) batch.wait_ready(current_stream(device_index(batch.device())));
}

::torch::ScalarType image_type(const Batch& batch) {
  return scalar_type(batch.dtype());
}

/// Owns a batch for the tensors made from it; releases it when the last one dies.
class Holder {
 public:
  explicit Holder(Batch&& batch) : batch_(std::move(batch)) {}
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;
  ~Holder() {
    try {
      if (on_cuda(batch_)) {
        batch_.release_after(current_stream(device_index(batch_.device())));
      } else {
        batch_.release();
      }
    } catch (...) {
      // Recording the release event failed; the slot has gone back to the pool regardless.
    }
  }
  [[nodiscard]] const Batch& batch() const { return batch_; }

 private:
  Batch batch_;
};

::torch::Tensor owning_images(const std::shared_ptr<Holder>& holder) {
  const Batch& batch = holder->batch();
  wait_ready(batch);
  const TensorGeometry g = geometry(batch);
  return ::torch::from_blob(
      image_data(batch), g.sizes, g.strides, [holder](void*) { (void)holder; },
      options_for(batch, image_type(batch)));
}

::torch::Tensor owning_labels(const std::shared_ptr<Holder>& holder) {
  const Batch& batch = holder->batch();
  wait_ready(batch);
  const std::int64_t n = batch.size();
  return ::torch::from_blob(
      label_data(batch), {n}, [holder](void*) { (void)holder; },
      options_for(batch, ::torch::kInt64));
}

/// The holder that images()/labels() last made on this thread, and the Batch object it was
/// taken from, so that images(batch) and labels(batch) share one holder.
struct LastTaken {
  const Batch* source = nullptr;
  std::weak_ptr<Holder> holder;
};
thread_local LastTaken last_taken;

std::shared_ptr<Holder> take(Batch& batch, const char* what) {
  if (!batch && last_taken.source == &batch) {
    if (auto holder = last_taken.holder.lock()) return holder;
  }
  check_batch(batch, what);
  auto holder = std::make_shared<Holder>(std::move(batch));
  last_taken = {&batch, holder};
  return holder;
}

}  // namespace

::torch::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::float16:
      return ::torch::kFloat16;
    case DType::bfloat16:
      return ::torch::kBFloat16;
    case DType::uint8:
      return ::torch::kUInt8;
    case DType::float32:
      break;
  }
  return ::torch::kFloat32;
}

BatchTensors tensors(Batch&& batch) {
  check_batch(batch, "tensors");
  const auto holder = std::make_shared<Holder>(std::move(batch));
  return {owning_images(holder), owning_labels(holder)};
}

::torch::Tensor images(Batch& batch) {
  return owning_images(take(batch, "images"));
}

::torch::Tensor labels(Batch& batch) {
  return owning_labels(take(batch, "labels"));
}

::torch::Tensor images_view(const Batch& batch) {
  check_batch(batch, "images_view");
  wait_ready(batch);
  const TensorGeometry g = geometry(batch);
  return ::torch::from_blob(image_data(batch), g.sizes, g.strides,
                            options_for(batch, image_type(batch)));
}

::torch::Tensor labels_view(const Batch& batch) {
  check_batch(batch, "labels_view");
  wait_ready(batch);
  const std::int64_t n = batch.size();
  return ::torch::from_blob(label_data(batch), {n}, options_for(batch, ::torch::kInt64));
}

}  // namespace gpufeed::torch
