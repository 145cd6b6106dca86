#pragma once
// A delivered batch in Python: its images and labels as arrays any DLPack consumer takes
// without a copy (torch, NumPy, CuPy, JAX), and the rule that returns its slot to the pool.
#include <memory>
#include <mutex>
#include <vector>

#include <nanobind/nanobind.h>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::python {

/// One batch while any Python object still refers to it. The last reference returns the slot
/// to the loader's pool: on a CUDA device after the work queued, at that moment, on every
/// stream the arrays were exported to (the consumers' streams), so a tensor kept alive never
/// sees its memory reused. Thread-safe: arrays may be exported and freed on any thread.
class HeldBatch {
 public:
  explicit HeldBatch(Batch batch) : batch_(std::move(batch)) {}
  HeldBatch(const HeldBatch&) = delete;
  HeldBatch& operator=(const HeldBatch&) = delete;
  ~HeldBatch();

  [[nodiscard]] const Batch& batch() const { return batch_; }
  /// CUDA: makes `stream` wait for the batch and remembers it for the release.
  void export_to(void* stream);

 private:
  Batch batch_;
  std::mutex mutex_;
  std::vector<void*> streams_;
};

/// The images or the labels of a held batch. Implements the DLPack protocol
/// (__dlpack__ with the stream handshake, __dlpack_device__).
class BatchArray {
 public:
  enum class Part { images, labels };
  BatchArray(std::shared_ptr<HeldBatch> held, Part part) : held_(std::move(held)), part_(part) {}

  /// __dlpack__(*, stream, max_version, dl_device, copy): `self` is this object's Python handle,
  /// which the exported capsule keeps alive.
  nanobind::object dlpack(nanobind::handle self, nanobind::handle stream,
                          nanobind::handle max_version, nanobind::handle dl_device,
                          nanobind::handle copy);
  /// (device type, device id): (1, 0) for the CPU, (2, N) for cuda:N.
  [[nodiscard]] nanobind::tuple dlpack_device() const;
  [[nodiscard]] nanobind::tuple shape() const;
  /// "float32", "float16", "bfloat16" or "int64".
  [[nodiscard]] std::string dtype() const;
  [[nodiscard]] std::string device() const { return held_->batch().device().str(); }

 private:
  std::shared_ptr<HeldBatch> held_;
  Part part_;
};

void bind_batch_arrays(nanobind::module_& m);

}  // namespace gpufeed::python
