#pragma once
// pipebench's models in LibTorch: mlp, cnn and ResNet-18. Private to the training stage.
#include <cstdint>
#include <memory>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "gpufeed/formats/sample_shape.hpp"

namespace gpufeed::tools::pipebench::training {

/// A classifier of [N, C, H, W] images into `classes` logits.
class Model : public ::torch::nn::Module {
 public:
  virtual ::torch::Tensor forward(::torch::Tensor x) = 0;
};

/// Builds model `name` (mlp | cnn | resnet18) for samples of `input` (channels, height,
/// width). Throws UsageError, naming --model, for an unknown name or a model that does not
/// fit the sample shape (resnet18 needs at least 32x32, cnn 8x8; mlp's first layer is capped).
std::shared_ptr<Model> make_model(const std::string& name, const formats::SampleShape& input,
                                  std::int64_t classes);

/// The smallest height and width a model accepts.
std::uint32_t min_side(const std::string& name);

}  // namespace gpufeed::tools::pipebench::training
