#include "batch_arrays.hpp"

#include <cstdio>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include "errors.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

constexpr int kDeviceCpu = nb::device::cpu::value;
constexpr int kDeviceCuda = nb::device::cuda::value;

int device_id(const Device& device) {
  return device.is_cuda() ? device.index : 0;
}

nb::dlpack::dtype dlpack_dtype(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return nb::dtype<float>();
    case DType::float16:
      return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::bfloat16:
      return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    case DType::uint8:
      return nb::dtype<std::uint8_t>();
  }
  return nb::dtype<float>();
}

/// The consumer's stream as the DLPack protocol passes it: None is the legacy default stream
/// (null), 1 and 2 are CUDA's legacy and per-thread handles, -1 asks for no synchronization.
std::optional<void*> consumer_stream(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  if (!PyLong_Check(stream.ptr())) throw_usage("__dlpack__: stream must be an int or None");
  const long long value = PyLong_AsLongLong(stream.ptr());
  if (value == -1) return std::nullopt;
  if (value == 0) {
    throw_usage("__dlpack__: stream 0 is ambiguous for CUDA; pass 1 for the legacy default stream");
  }
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(value));
}

}  // namespace

HeldBatch::~HeldBatch() {
  try {
    if (streams_.empty()) {
      batch_.release();
    } else {
      batch_.release_after(std::span<void* const>(streams_));
    }
  } catch (const std::exception& e) {
    // The slot is back in the pool either way; a CUDA error here also fails the loader's next
    // device call, which raises in the consumer.
    std::fprintf(stderr, "gpufeed: releasing a batch: %s\n", e.what());
  }
}

void HeldBatch::export_to(void* stream) {
  batch_.wait_ready(stream);
  std::lock_guard lock(mutex_);
  for (void* s : streams_) {
    if (s == stream) return;
  }
  streams_.push_back(stream);
}

nb::object BatchArray::dlpack(nb::handle self, nb::handle stream, nb::handle max_version,
                              nb::handle dl_device, nb::handle copy) {
  const Batch& b = held_->batch();
  const bool cuda = b.device().is_cuda();
  if (cuda) {
    if (const std::optional<void*> s = consumer_stream(stream)) held_->export_to(*s);
  }
  std::vector<std::size_t> shape;
  const void* data = nullptr;
  nb::dlpack::dtype dtype = nb::dtype<std::int64_t>();
  if (part_ == Part::images) {
    for (const std::int64_t d : b.shape()) shape.push_back(static_cast<std::size_t>(d));
    data = cuda ? b.device_images() : b.host_images();
    dtype = dlpack_dtype(b.dtype());
  } else {
    shape.push_back(b.size());
    data = cuda ? static_cast<const void*>(b.device_labels())
                : static_cast<const void*>(b.labels().data());
  }
  const nb::ndarray<nb::array_api> array(const_cast<void*>(data), shape.size(), shape.data(), self,
                                         nullptr, dtype, cuda ? kDeviceCuda : kDeviceCpu,
                                         device_id(b.device()));
  nb::kwargs kw;
  if (!max_version.is_none()) kw["max_version"] = max_version;
  if (!dl_device.is_none()) kw["dl_device"] = dl_device;
  if (!copy.is_none()) kw["copy"] = copy;
  return nb::cast(array).attr("__dlpack__")(**kw);
}

nb::tuple BatchArray::dlpack_device() const {
  const Device device = held_->batch().device();
  return nb::make_tuple(device.is_cuda() ? kDeviceCuda : kDeviceCpu, device_id(device));
}

nb::tuple BatchArray::shape() const {
  const Batch& b = held_->batch();
  if (part_ == Part::labels) return nb::make_tuple(b.size());
  const auto s = b.shape();
  return nb::make_tuple(s[0], s[1], s[2], s[3]);
}

std::string BatchArray::dtype() const {
  return part_ == Part::labels ? "int64" : to_string(held_->batch().dtype());
}

void bind_batch_arrays(nb::module_& m) {
  nb::class_<BatchArray>(m, "BatchArray",
                         "The images or the labels of one batch, exported without a copy through "
                         "DLPack (torch.from_dlpack, numpy.from_dlpack, cupy.from_dlpack, ...). "
                         "On CUDA the consumer's stream waits for the batch; the host never "
                         "blocks. The batch's slot returns to the loader when the last array "
                         "and every tensor made from it are gone.")
      .def(
          "__dlpack__",
          [](nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
             nb::handle copy) {
            return nb::cast<BatchArray&>(self).dlpack(self, stream, max_version, dl_device, copy);
          },
          nb::kw_only(), nb::arg("stream").none() = nb::none(),
          nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
          nb::arg("copy").none() = nb::none())
      .def("__dlpack_device__", &BatchArray::dlpack_device)
      .def_prop_ro("shape", &BatchArray::shape)
      .def_prop_ro("dtype", &BatchArray::dtype)
      .def_prop_ro("device", &BatchArray::device);
}

}  // namespace gpufeed::python
