// The loader on a CUDA device: batches normalized on the GPU equal the CPU loader's, a held
// batch is never overwritten, echoes repeat device batches. Skipped without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "dataset_fixture.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "half_bits.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

constexpr formats::SampleShape kShape{16, 16, 3, formats::Layout::nhwc};

class CudaLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    testing::write_dataset(path_, 300, kShape, 32);
  }
  LoaderOptions options(const std::string& device) const {
    LoaderOptions o = testing::random_order_options(path_, 32, 9);
    o.output.device = device;
    return o;
  }
  /// Echo factor 3 of flipped batches: every echo re-augmented.
  LoaderOptions flip_echo_options(const std::string& device) const {
    LoaderOptions o = options(device);
    o.image.augment = Augment::flip;
    o.echo = EchoOptions::parse("3");
    return o;
  }
  /// The batch's device output copied to the host as floats.
  static std::vector<float> download(const Batch& b) {
    const std::size_t n = b.size() * kShape.bytes();
    b.wait_ready(nullptr);
    if (b.dtype() == DType::float32) {
      std::vector<float> out(n);
      GPUFEED_CUDA_CHECK(cudaMemcpy(out.data(), b.device_images(), n * 4, cudaMemcpyDeviceToHost));
      return out;
    }
    std::vector<std::uint16_t> bits(n);
    GPUFEED_CUDA_CHECK(cudaMemcpy(bits.data(), b.device_images(), n * 2, cudaMemcpyDeviceToHost));
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] =
          b.dtype() == DType::bfloat16 ? bf16_bits_to_float(bits[i]) : half_bits_to_float(bits[i]);
    }
    return out;
  }
  testing::TempDir dir_;
  std::string path_ = dir_.file("cuda.h5");
};

TEST_F(CudaLoader, DeviceBatchesEqualTheCpuLoaders) {
  Loader cpu(options("cpu"));
  Loader gpu(options("cuda:0"));
  cpu.start_epoch(0);
  gpu.start_epoch(0);
  for (;;) {
    Batch c = cpu.next();
    Batch g = gpu.next();
    ASSERT_EQ(bool(c), bool(g));
    if (!c) break;
    ASSERT_EQ(std::vector<std::uint64_t>(c.sample_indices().begin(), c.sample_indices().end()),
              std::vector<std::uint64_t>(g.sample_indices().begin(), g.sample_indices().end()));
    EXPECT_EQ(g.device(), "cuda:0");
    EXPECT_TRUE(g.images().empty());
    const std::vector<float> got = download(g);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], c.images()[i], 1e-6f * std::max(1.0f, std::fabs(c.images()[i])));
    }
    std::vector<std::int64_t> labels(g.size());
    GPUFEED_CUDA_CHECK(
        cudaMemcpy(labels.data(), g.device_labels(), labels.size() * 8, cudaMemcpyDeviceToHost));
    EXPECT_EQ(labels, std::vector<std::int64_t>(c.labels().begin(), c.labels().end()));
  }
}

TEST_F(CudaLoader, HeldBatchIsNotOverwrittenOnTheDevice) {
  Loader gpu(options("cuda:0"));
  gpu.start_epoch(0);
  Batch held = gpu.next();
  const std::vector<float> before = download(held);
  for (Batch b = gpu.next(); b; b = gpu.next()) {
  }
  EXPECT_EQ(download(held), before);
}

TEST_F(CudaLoader, ReaugmentedEchoesEqualTheCpuLoaders) {
  // Both devices show echo r of a sample with echo_flip(seed, epoch, sample, r) applied to the
  // fresh delivery: the CPU loader by mirroring its pixels, the CUDA one in the kernel.
  Loader cpu(flip_echo_options("cpu"));
  Loader gpu(flip_echo_options("cuda:0"));
  cpu.start_epoch(2);
  gpu.start_epoch(2);
  for (;;) {
    Batch c = cpu.next();
    Batch g = gpu.next();
    ASSERT_EQ(bool(c), bool(g));
    if (!c) break;
    ASSERT_EQ(c.echoed(), g.echoed());
    const std::vector<float> got = download(g);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], c.images()[i], 1e-6f * std::max(1.0f, std::fabs(c.images()[i])))
          << "batch " << g.index() << (g.echoed() ? " (echo)" : "");
    }
  }
  EXPECT_EQ(gpu.stats().reaugmented_batches, 2 * gpu.stats().fresh_batches);
  EXPECT_EQ(cpu.stats().reaugmented_batches, gpu.stats().reaugmented_batches);
}

TEST_F(CudaLoader, EchoesOfAHeldBatchEqualTheCpuLoaders) {
  // The consumer keeps the previous delivery while it asks for the next (as a Python loop
  // does): echoes go to the echo slot, from the held batch's device pixels, with their labels.
  Loader cpu(flip_echo_options("cpu"));
  Loader gpu(flip_echo_options("cuda:0"));
  cpu.start_epoch(1);
  gpu.start_epoch(1);
  Batch c_previous, g_previous;
  std::vector<float> g_previous_pixels;
  for (;;) {
    Batch c = cpu.next();
    Batch g = gpu.next();
    ASSERT_EQ(bool(c), bool(g));
    if (g_previous) {
      ASSERT_EQ(download(g_previous), g_previous_pixels) << "a held batch changed";
    }
    if (!c) break;
    const std::vector<float> got = download(g);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], c.images()[i], 1e-6f * std::max(1.0f, std::fabs(c.images()[i])))
          << "batch " << g.index() << (g.echoed() ? " (echo)" : "");
    }
    std::vector<std::int64_t> labels(g.size());
    GPUFEED_CUDA_CHECK(
        cudaMemcpy(labels.data(), g.device_labels(), labels.size() * 8, cudaMemcpyDeviceToHost));
    EXPECT_EQ(labels, std::vector<std::int64_t>(c.labels().begin(), c.labels().end()));
    c_previous = std::move(c);
    g_previous = std::move(g);
    g_previous_pixels = got;
  }
  EXPECT_EQ(gpu.stats().reaugmented_batches, 2 * gpu.stats().fresh_batches);
  EXPECT_EQ(cpu.stats().reaugmented_batches, gpu.stats().reaugmented_batches);
}

TEST_F(CudaLoader, HalfTypesAndEchoes) {
  for (DType dtype : {DType::float16, DType::bfloat16}) {
    LoaderOptions o = options("cuda:0");
    o.output.dtype = dtype;
    o.echo = EchoOptions::parse("2");
    Loader gpu(o);
    Loader cpu(options("cpu"));
    cpu.start_epoch(0);
    gpu.start_epoch(0);
    for (Batch c = cpu.next(); c; c = cpu.next()) {
      Batch fresh = gpu.next();
      const std::vector<float> got = download(fresh);
      for (std::size_t i = 0; i < got.size(); ++i) {
        const float want = c.images()[i];
        const float step = dtype == DType::bfloat16 ? 1.0f / 128 : 1.0f / 1024;
        ASSERT_NEAR(got[i], want, step * std::max(1.0f, std::fabs(want))) << to_string(dtype);
      }
      fresh.release();
      Batch echo = gpu.next();
      ASSERT_TRUE(echo.echoed());
      EXPECT_EQ(download(echo), got);
    }
    EXPECT_EQ(gpu.stats().echoed_batches, gpu.stats().fresh_batches);
  }
}

}  // namespace
}  // namespace gpufeed::pipeline
