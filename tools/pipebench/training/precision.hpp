#pragma once
// Mixed precision for the training stage: an autocast scope and a loss scaler for float16.
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

namespace gpufeed::tools::pipebench::training {

/// The autocast dtype of --amp ("none": nullopt). Throws UsageError, naming --amp, for a value
/// the LibTorch in use cannot autocast to on `device` (float16 needs CUDA).
std::optional<::torch::ScalarType> autocast_dtype(const std::string& amp, bool cuda);

/// Autocast on for the enclosing scope (forward pass and loss), as torch.autocast does.
class AutocastScope {
 public:
  AutocastScope(std::optional<::torch::ScalarType> dtype, bool cuda);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
  bool was_enabled_ = false;
  ::torch::ScalarType was_dtype_ = ::torch::kFloat32;
};

/// Dynamic loss scaling for float16 (as torch.cuda.amp.GradScaler) without a host sync: the
/// scale and the overflow flag stay on the device; an overflowed step's gradients are zeroed.
class LossScaler {
 public:
  explicit LossScaler(const ::torch::Device& device);
  [[nodiscard]] ::torch::Tensor scale(const ::torch::Tensor& loss) const;
  /// Divides the gradients by the scale and zeroes them all if any is inf or NaN.
  void unscale(const std::vector<::torch::Tensor>& parameters);
  /// Grows or backs off the scale after optimizer.step().
  void update();

 private:
  ::torch::Tensor scale_;
  ::torch::Tensor growth_tracker_;
  ::torch::Tensor found_inf_;
};

}  // namespace gpufeed::tools::pipebench::training
