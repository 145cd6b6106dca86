// Trains a small CNN for one epoch on a gpufeed dataset and prints the loss.
//   trainer FILE.h5 [DEVICE]      DEVICE: cpu (default), cuda, cuda:N or auto
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include <torch/torch.h>

#include <gpufeed/pipeline/device.hpp>
#include <gpufeed/pipeline/loader.hpp>
#include <gpufeed/torch/tensor.hpp>

namespace {

namespace nn = torch::nn;

struct Net : nn::Module {
  Net(std::int64_t channels, std::int64_t classes)
      : conv1(register_module("conv1",
                              nn::Conv2d(nn::Conv2dOptions(channels, 16, 3).stride(2).padding(1)))),
        conv2(register_module("conv2",
                              nn::Conv2d(nn::Conv2dOptions(16, 32, 3).stride(2).padding(1)))),
        fc(register_module("fc", nn::Linear(32, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1(x));
    x = torch::relu(conv2(x));
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }

  nn::Conv2d conv1, conv2;
  nn::Linear fc;
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: trainer FILE.h5 [cpu|cuda|cuda:N|auto]\n");
    return 2;
  }
  gpufeed::LoaderOptions options;  // every field has a default; the path is the one to set
  options.source.path = argv[1];
  options.sampling.batch_size = 64;
  options.output.device = argc > 2 ? argv[2] : "cpu";  // parsed here; the loader resolves "auto"
  gpufeed::Loader loader(options);
  const gpufeed::Device device = loader.options().output.device;  // the CPU or cuda:N

  const auto& labels = loader.dataset().labels();  // raw or jpeg layout alike
  const std::int64_t classes =
      std::max<std::int64_t>(2, 1 + *std::max_element(labels.begin(), labels.end()));
  Net net(loader.sample_shape().channels, classes);
  net.to(device.is_cuda() ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.index))
                          : torch::Device(torch::kCPU));
  torch::optim::SGD optimizer(net.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

  torch::Tensor loss;
  std::uint64_t steps = 0;
  for (gpufeed::Batch& batch : loader.epoch(0)) {
    torch::Tensor x = gpufeed::torch::images(batch);  // no copy; holds the batch's slot
    torch::Tensor y = gpufeed::torch::labels(batch);
    optimizer.zero_grad();
    loss = torch::nn::functional::cross_entropy(net.forward(x), y);
    loss.backward();
    optimizer.step();
    ++steps;
  }  // the slot goes back to the loader when x and y are gone
  if (!loss.defined()) {
    std::fprintf(stderr, "trainer: %s has no samples\n", argv[1]);
    return 1;
  }
  std::printf("trained %llu steps on %s, final loss %.4f\n", static_cast<unsigned long long>(steps),
              device.str().c_str(), loss.item<double>());
  return 0;
} catch (const c10::Error& e) {
  std::fprintf(stderr, "trainer: error: %s\n", e.what_without_backtrace());
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "trainer: error: %s\n", e.what());
  return 1;
}
