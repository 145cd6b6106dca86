#include "pipebench/training/precision.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::tools::pipebench::training {

namespace {

// LibTorch 2.4 replaced the per-device autocast setters with ones taking the device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(bool cuda) {
  return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
}
::torch::ScalarType autocast_type(bool cuda) {
  return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU);
}
void set_autocast(bool cuda, bool enabled, ::torch::ScalarType dtype) {
  at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, enabled);
  at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, dtype);
}
#else
bool autocast_enabled(bool cuda) {
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
::torch::ScalarType autocast_type(bool cuda) {
  return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast(bool cuda, bool enabled, ::torch::ScalarType dtype) {
  if (cuda) {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
#endif

}  // namespace

std::optional<::torch::ScalarType> autocast_dtype(const std::string& amp, bool cuda) {
  if (amp == "none") return std::nullopt;
  if (amp == "bfloat16") return ::torch::kBFloat16;
  if (amp == "float16") {
    if (cuda) return ::torch::kFloat16;
    throw UsageError(
        "--amp float16: LibTorch autocasts to float16 on CUDA devices only; use --amp bfloat16 "
        "on the CPU");
  }
  throw UsageError("--amp " + amp + ": unknown value; use none, float16 or bfloat16");
}

AutocastScope::AutocastScope(std::optional<::torch::ScalarType> dtype, bool cuda)
    : active_(dtype.has_value()), cuda_(cuda) {
  if (!active_) return;
  was_enabled_ = autocast_enabled(cuda_);
  was_dtype_ = autocast_type(cuda_);
  set_autocast(cuda_, true, *dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(cuda_, was_enabled_, was_dtype_);
}

LossScaler::LossScaler(const ::torch::Device& device)
    : scale_(::torch::full({1}, 65536.0, ::torch::TensorOptions().device(device))),
      growth_tracker_(
          ::torch::zeros({1}, ::torch::TensorOptions().device(device).dtype(::torch::kInt32))),
      found_inf_(::torch::zeros({1}, ::torch::TensorOptions().device(device))) {}

::torch::Tensor LossScaler::scale(const ::torch::Tensor& loss) const {
  return loss * scale_;
}

void LossScaler::unscale(const std::vector<::torch::Tensor>& parameters) {
  std::vector<::torch::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  found_inf_.zero_();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, scale_.reciprocal());
  const ::torch::Tensor overflow = found_inf_.gt(0);
  for (auto& g : grads) g.masked_fill_(overflow, 0.0);
}

void LossScaler::update() {
  constexpr double kGrowth = 2.0;
  constexpr double kBackoff = 0.5;
  constexpr std::int64_t kGrowthInterval = 2000;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, kGrowth, kBackoff, kGrowthInterval);
}

}  // namespace gpufeed::tools::pipebench::training
