#include "pipebench/training/models.hpp"

#include <string>

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/utils.h>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::tools::pipebench::training {

namespace {

namespace nn = ::torch::nn;

/// mlp's first layer takes at most this many inputs (512 outputs: 512 MiB of float32 weights).
constexpr std::int64_t kMaxMlpInputs = std::int64_t{1} << 18;
constexpr std::int64_t kHidden = 512;

nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

/// Kaiming-normal convolutions (fan-out, ReLU), as torchvision initializes ResNets.
void init_convolutions(nn::Module& model) {
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* c = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0.0, ::torch::kFanOut, ::torch::kReLU);
    }
  }
}

/// A fully connected layer, y = x W^T + b. On the CPU in float32 it runs as a 1x1 convolution:
/// Debian's LibTorch does matrix products in the system BLAS (the netlib reference by default),
/// oneDNN's convolution computes the same product about 4x faster.
class DenseImpl : public nn::Module {
 public:
  DenseImpl(std::int64_t in, std::int64_t out)
      : weight_(register_parameter("weight", ::torch::empty({out, in}))),
        bias_(register_parameter("bias", ::torch::empty({out}))) {
    const nn::Linear reference(in, out);  // LibTorch's own initialization of a Linear
    ::torch::NoGradGuard no_grad;
    weight_.copy_(reference->weight);
    bias_.copy_(reference->bias);
  }
  ::torch::Tensor forward(const ::torch::Tensor& x) {
    if (!x.is_cpu() || x.scalar_type() != ::torch::kFloat32) {
      return ::torch::linear(x, weight_, bias_);
    }
    const std::int64_t n = x.size(0), in = weight_.size(1), out = weight_.size(0);
    return ::torch::conv2d(x.reshape({n, in, 1, 1}), weight_.view({out, in, 1, 1}), bias_)
        .view({n, out});
  }

 private:
  ::torch::Tensor weight_;
  ::torch::Tensor bias_;
};
TORCH_MODULE(Dense);

/// flatten -> 512 -> 512 -> classes, ReLU between.
class Mlp final : public Model {
 public:
  Mlp(std::int64_t inputs, std::int64_t classes)
      : fc1_(register_module("fc1", Dense(inputs, kHidden))),
        fc2_(register_module("fc2", Dense(kHidden, kHidden))),
        fc3_(register_module("fc3", Dense(kHidden, classes))) {}
  ::torch::Tensor forward(::torch::Tensor x) override {
    x = ::torch::relu(fc1_->forward(x.flatten(1)));
    x = ::torch::relu(fc2_->forward(x));
    return fc3_->forward(x);
  }

 private:
  Dense fc1_, fc2_, fc3_;
};

void add_conv_bn_relu(nn::Sequential& seq, std::int64_t in, std::int64_t out, std::int64_t stride) {
  seq->push_back(conv(in, out, 3, stride));
  seq->push_back(nn::BatchNorm2d(out));
  seq->push_back(nn::ReLU(nn::ReLUOptions(true)));
}

nn::Sequential cnn_features(std::int64_t channels) {
  nn::Sequential seq;
  add_conv_bn_relu(seq, channels, 16, 2);
  add_conv_bn_relu(seq, 16, 32, 2);
  add_conv_bn_relu(seq, 32, 64, 2);
  seq->push_back(nn::AdaptiveAvgPool2d(1));
  return seq;
}

/// Three conv-bn-relu blocks (stride 2 each: 16, 32, 64 channels), global average pooling, a
/// linear classifier. About 100 ms a step for 256 64x64x3 samples on one CPU core.
class Cnn final : public Model {
 public:
  Cnn(std::int64_t channels, std::int64_t classes)
      : features_(register_module("features", cnn_features(channels))),
        fc_(register_module("fc", nn::Linear(64, classes))) {
    init_convolutions(*this);
  }
  ::torch::Tensor forward(::torch::Tensor x) override {
    return fc_->forward(features_->forward(x).flatten(1));
  }

 private:
  nn::Sequential features_;
  nn::Linear fc_;
};

/// ResNet's BasicBlock: two 3x3 convolutions and an identity (or 1x1 downsample) shortcut.
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1_(register_module("conv1", conv(in, out, 3, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", conv(out, out, 3, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      downsample_ = register_module("downsample",
                                    nn::Sequential(conv(in, out, 1, stride), nn::BatchNorm2d(out)));
    }
  }
  ::torch::Tensor forward(const ::torch::Tensor& x) {
    ::torch::Tensor out = ::torch::relu(bn1_->forward(conv1_->forward(x)));
    out = bn2_->forward(conv2_->forward(out));
    out += downsample_ ? downsample_->forward(x) : x;
    return ::torch::relu(out);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

nn::Sequential resnet_stage(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return nn::Sequential(BasicBlock(in, out, stride), BasicBlock(out, out, 1));
}

/// ResNet-18 (He et al. 2016, torchvision's layout): 7x7/2 stem, 3x3/2 max pool, four stages
/// of two BasicBlocks with 64, 128, 256, 512 channels, global average pool, fc.
class ResNet18 final : public Model {
 public:
  ResNet18(std::int64_t channels, std::int64_t classes)
      : conv1_(register_module("conv1", conv(channels, 64, 7, 2))),
        bn1_(register_module("bn1", nn::BatchNorm2d(64))),
        maxpool_(register_module("maxpool",
                                 nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)))),
        layer1_(register_module("layer1", resnet_stage(64, 64, 1))),
        layer2_(register_module("layer2", resnet_stage(64, 128, 2))),
        layer3_(register_module("layer3", resnet_stage(128, 256, 2))),
        layer4_(register_module("layer4", resnet_stage(256, 512, 2))),
        avgpool_(register_module("avgpool", nn::AdaptiveAvgPool2d(1))),
        fc_(register_module("fc", nn::Linear(512, classes))) {
    init_convolutions(*this);
  }
  ::torch::Tensor forward(::torch::Tensor x) override {
    x = maxpool_->forward(::torch::relu(bn1_->forward(conv1_->forward(x))));
    x = layer4_->forward(layer3_->forward(layer2_->forward(layer1_->forward(x))));
    return fc_->forward(avgpool_->forward(x).flatten(1));
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::MaxPool2d maxpool_;
  nn::Sequential layer1_, layer2_, layer3_, layer4_;
  nn::AdaptiveAvgPool2d avgpool_;
  nn::Linear fc_;
};

std::string shape_text(const formats::SampleShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
         std::to_string(s.channels);
}

}  // namespace

std::uint32_t min_side(const std::string& name) {
  if (name == "resnet18") return 32;
  if (name == "cnn") return 8;
  return 1;
}

std::shared_ptr<Model> make_model(const std::string& name, const formats::SampleShape& input,
                                  std::int64_t classes) {
  if (name != "mlp" && name != "cnn" && name != "resnet18") {
    throw UsageError("--model " + name + ": unknown model; use mlp, cnn or resnet18");
  }
  const std::uint32_t side = min_side(name);
  if (input.channels == 0 || input.height < side || input.width < side) {
    throw UsageError("--model " + name + " needs samples of at least " + std::to_string(side) +
                     "x" + std::to_string(side) + " pixels, these are " + shape_text(input) +
                     "; use larger images (--size for jpeg files) or --model mlp");
  }
  const auto c = static_cast<std::int64_t>(input.channels);
  if (name == "mlp") {
    const std::int64_t inputs = c * input.height * input.width;
    if (inputs > kMaxMlpInputs) {
      throw UsageError("--model mlp: a " + shape_text(input) + " sample has " +
                       std::to_string(inputs) + " inputs, more than the " +
                       std::to_string(kMaxMlpInputs) + " its first layer takes; use --model cnn " +
                       "or resnet18, or smaller images");
    }
    return std::make_shared<Mlp>(inputs, classes);
  }
  if (name == "cnn") return std::make_shared<Cnn>(c, classes);
  return std::make_shared<ResNet18>(c, classes);
}

}  // namespace gpufeed::tools::pipebench::training
