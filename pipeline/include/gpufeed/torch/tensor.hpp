#pragma once
// LibTorch views of loader batches: tensors that use the batch's memory without a copy, on the
// batch's device. Optional part of gpufeed (target gpufeed::torch), built when LibTorch is found.
//
//   for (gpufeed::Batch& batch : loader.epoch(epoch)) {
//     torch::Tensor x = gpufeed::torch::images(batch);  // takes the batch: it lives as long
//     torch::Tensor y = gpufeed::torch::labels(batch);  // as x or y, then its slot is released
//     train_step(x, y);
//   }
#include <torch/types.h>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::torch {

/// Images and labels of one batch, sharing ownership of it.
struct BatchTensors {
  ::torch::Tensor images;  ///< [N, C, H, W]; float32 on the CPU, the batch's dtype on CUDA
  ::torch::Tensor labels;  ///< [N] int64
};

/// Takes the batch (it is empty afterwards) and returns tensors over its memory. The batch's
/// slot returns to the loader when both tensors (and every view of them) are gone; on CUDA
/// the release is ordered after the work queued on the current stream at that time, and the
/// current stream waits until the batch is ready on the device. An NHWC CUDA batch gives
/// [N, C, H, W] sizes with channels-last strides. Throws UsageError for an empty
/// batch, UsageError for a CUDA batch when this LibTorch has no CUDA support.
BatchTensors tensors(Batch&& batch);

/// The images of `batch` as a tensor that owns the batch. The batch is moved into a holder
/// shared by the tensors made from it: a following labels(batch) (or images(batch)) on the
/// same, now empty, Batch object, on the same thread, shares that holder as long as one of
/// its tensors lives. Otherwise as tensors().
::torch::Tensor images(Batch& batch);
/// The labels of `batch` ([N] int64), sharing ownership with images(batch).
::torch::Tensor labels(Batch& batch);

/// Non-owning views: valid while `batch` holds its slot (release it only after the work that
/// reads the tensors is queued; on CUDA use batch.release_after(stream)). On CUDA the current
/// stream waits until the batch is ready. Throws as tensors().
::torch::Tensor images_view(const Batch& batch);
::torch::Tensor labels_view(const Batch& batch);

/// The torch dtype of a batch dtype.
::torch::ScalarType scalar_type(DType dtype);

}  // namespace gpufeed::torch
