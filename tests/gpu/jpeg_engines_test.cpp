// The GPU's JPEG engines through the loader (decode=gpu and auto): the images the headers call
// decodable are what nvJPEG's hardware backend takes; the crop-resize kernel equals its CPU
// arithmetic bit for bit; the engines' samples are within a few levels of libjpeg-turbo's full
// decode rendered by the CPU path; what they refuse goes to the workers, counted by reason.
// Skipped without a CUDA device (and where the device has no JPEG engines).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cuda/cuda_check.hpp"
#include "cuda/jpeg_engines.hpp"
#include "cuda/nvjpeg_api.hpp"
#include "dataset_fixture.hpp"
#include "gpu_decode_plan.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/jpeg_frame.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "smooth_picture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

constexpr std::uint32_t kOut = 64;

Geometry crop_flip() {
  Geometry g;
  g.crop = Geometry::Crop::random_resized;
  g.crop_height = g.crop_width = kOut;
  g.hflip = 0.5;
  return g;
}

/// Skips without a device, or when this build or machine cannot start the engines.
std::string engines_unavailable() {
  if (cuda_device_count() == 0) return "no CUDA device";
  const NvjpegLibrary l = nvjpeg_library();
  if (!l.loaded) return l.why;
  try {
    detail::JpegEngines engines(0, kOut, kOut);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// Writes make_engine_jpegs.py's collection into `dir`; why it could not, or empty.
std::string write_collection(const std::string& dir) {
  const std::string command = std::string("'") + GPUFEED_PILLOW_PYTHON + "' '" +
                              GPUFEED_ENGINE_JPEGS_SCRIPT + "' '" + dir + "'";
  if (std::string(GPUFEED_PILLOW_PYTHON).empty() || std::system(command.c_str()) != 0) {
    return "cannot write the collection: " + command;
  }
  return "";
}

std::vector<std::uint8_t> download_uint8(const Batch& b) {
  std::vector<std::uint8_t> out(std::size_t{b.size()} * kOut * kOut * 3);
  b.wait_ready(nullptr);
  GPUFEED_CUDA_CHECK(cudaDeviceSynchronize());
  GPUFEED_CUDA_CHECK(cudaMemcpy(out.data(), b.device_images(), out.size(), cudaMemcpyDeviceToHost));
  return out;
}

class JpegEngines : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = engines_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
  LoaderOptions options(Decode decode) const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 32;
    o.resources.workers = 4;
    o.sampling.order = Order::random;
    o.sampling.seed = 5;
    o.sampling.shard = Shard{};
    o.output.device = "cuda:0";
    o.output.dtype = DType::uint8;
    o.output.layout = formats::Layout::nhwc;
    o.image.geometry = crop_flip();
    o.image.height = o.image.width = kOut;
    o.image.decode = decode;
    return o;
  }
  testing::TempDir dir_;
  std::string path_ = dir_.file("photos.h5");
};

TEST_F(JpegEngines, SamplesAreWithinAFewLevelsOfAFullCpuDecodeRenderedTheSameWay) {
  constexpr std::uint64_t kSamples = 96;
  formats::JpegEncoder encoder(90, formats::JpegSubsampling::s420);
  testing::write_jpeg_dataset(
      path_, kSamples, 5, [&](std::uint64_t i, std::uint32_t w, std::uint32_t h) {
        return testing::StoredImage{encoder.encode(testing::smooth_picture(i, w, h).view()), 3,
                                    static_cast<std::int64_t>(i)};
      });
  Loader loader(options(Decode::gpu));
  formats::JpegDatasetReader reader(path_);
  formats::ImageDecoder decoder;
  formats::Resizer resizer;
  double total = 0;
  int worst = 0;
  std::uint64_t values = 0;
  for (Batch& b : loader.epoch(0)) {
    const std::vector<std::uint8_t> got = download_uint8(b);
    for (std::uint32_t s = 0; s < b.size(); ++s) {
      const std::uint64_t sample = b.sample_indices()[s];
      std::vector<std::uint8_t> bytes;
      reader.sample_bytes(sample, bytes);
      const formats::ImageInfo info = decoder.header(bytes, sample);
      formats::Image whole(info.width, info.height, 3);
      decoder.decode(bytes, info, whole.view(), sample);
      const Placement p = place(crop_flip(), info.width, info.height, kOut, kOut, 5, 0, sample);
      formats::Image want(kOut, kOut, 3);
      render({whole.view(), 0, 0, info.width, info.height}, p, want.view(), resizer,
             formats::ResizeFilter::bilinear);
      for (std::size_t k = 0; k < want.pixels.size(); ++k) {
        const int d = std::abs(int(got[s * want.pixels.size() + k]) - int(want.pixels[k]));
        worst = std::max(worst, d);
        total += d;
        ++values;
      }
    }
  }
  const double mean = total / double(values);
  std::printf("engines vs libjpeg-turbo, %llu samples rendered alike: mean %.3f, max %d levels\n",
              static_cast<unsigned long long>(kSamples), mean, worst);
  EXPECT_LT(mean, 3.0);
  EXPECT_LE(worst, 48);
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.decode.mode, "gpu");
  EXPECT_EQ(st.decode.engine_images, kSamples);
  EXPECT_EQ(st.decode.cpu_images, 0u);
  EXPECT_FALSE(st.decode.engines.empty());
}

TEST_F(JpegEngines, WhatTheEnginesRefuseGoesToTheWorkersByReason) {
  const std::string dir = dir_.file("kinds");
  if (const std::string why = write_collection(dir); !why.empty()) GTEST_SKIP() << why;
  std::ifstream in(dir + "/manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::vector<std::vector<std::uint8_t>> files;
  std::size_t decodable = 0;
  for (const nlohmann::json& entry : manifest) {
    if (entry["patched"].get<bool>()) continue;  // headers only: no decoder reads them
    std::ifstream f(dir + "/" + entry["file"].get<std::string>(), std::ios::binary);
    files.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (entry["verdict"] == "decodable") ++decodable;
  }
  testing::write_jpeg_dataset(path_, files.size(), 1,
                              [&](std::uint64_t i, std::uint32_t, std::uint32_t) {
                                return testing::StoredImage{files[i], 3, 0};
                              });
  LoaderOptions o = options(Decode::gpu);
  o.on_error = OnError::skip;  // the truncated file
  Loader loader(o);
  for (Batch& b : loader.epoch(0)) EXPECT_GT(b.size(), 0u);
  const LoaderStats st = loader.stats();
  std::printf("engines %llu, CPU %llu:", static_cast<unsigned long long>(st.decode.engine_images),
              static_cast<unsigned long long>(st.decode.cpu_images));
  for (const auto& [reason, count] : st.decode.cpu_reasons) {
    std::printf(" %s %llu;", reason.c_str(), static_cast<unsigned long long>(count));
  }
  std::printf("\n");
  EXPECT_GE(st.decode.engine_images, decodable);  // skipped samples' replacements may add some
  EXPECT_EQ(st.decode.failed_parts, 0u);
  const auto count_of = [&](const std::string& reason) {
    for (const auto& [r, c] : st.decode.cpu_reasons) {
      if (r == reason) return c;
    }
    return std::uint64_t{0};
  };
  EXPECT_GE(count_of("progressive"), 1u);
  EXPECT_GE(count_of("not a JPEG"), 2u);
  EXPECT_GE(count_of("CMYK or YCCK"), 1u);
}

#ifdef GPUFEED_HAVE_NVJPEG
TEST_F(JpegEngines, HeadersCallDecodableOnlyWhatNvjpegsHardwareBackendTakes) {
  const std::string dir = dir_.file("kinds");
  if (const std::string why = write_collection(dir); !why.empty()) GTEST_SKIP() << why;
  const detail::NvjpegApi* api = detail::nvjpeg_api();
  ASSERT_NE(api, nullptr);
  nvjpegHandle_t handle = nullptr;
  ASSERT_EQ(api->create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &handle), 0);
  nvjpegJpegStream_t stream = nullptr;
  ASSERT_EQ(api->stream_create(handle, &stream), 0);
  nvjpegDecodeParams_t params = nullptr;
  ASSERT_EQ(api->params_create(handle, &params), 0);
  api->params_set_output_format(params, NVJPEG_OUTPUT_RGBI);
  std::ifstream in(dir + "/manifest.json");
  for (const nlohmann::json& entry : nlohmann::json::parse(in)) {
    std::ifstream f(dir + "/" + entry["file"].get<std::string>(), std::ios::binary);
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(f),
                                          std::istreambuf_iterator<char>()};
    const formats::HardwareJpeg verdict =
        formats::hardware_decodable(formats::read_jpeg_frame(bytes));
    int supported = -1;
    const bool parsed = api->stream_parse_header(handle, bytes.data(), bytes.size(), stream) == 0;
    if (parsed) api->batched_supported_ex(handle, stream, params, &supported);
    std::printf("%-20s headers: %-36s nvJPEG: %s\n", entry["kind"].get<std::string>().c_str(),
                std::string(formats::to_string(verdict)).c_str(),
                !parsed          ? "no header"
                : supported == 0 ? "supported"
                                 : "refused");
    if (verdict == formats::HardwareJpeg::decodable) {
      EXPECT_TRUE(parsed && supported == 0) << entry["kind"];
    }
  }
  api->params_destroy(params);
  api->stream_destroy(stream);
  api->destroy(handle);
}
#endif

TEST(CropResizeKernel, EqualsItsCpuArithmeticBitForBit) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  GPUFEED_CUDA_CHECK(cudaSetDevice(0));
  const formats::Image whole = testing::smooth_picture(3, 333, 251);
  Geometry g = crop_flip();
  g.vflip = 0.5;
  detail::CropResizeBatch batch;
  std::vector<detail::ImagePlan> plans(40);
  for (std::uint32_t s = 0; s < plans.size(); ++s) {
    const auto filter = static_cast<formats::ResizeFilter>(s % 3);
    detail::plan_image(place(g, 333, 251, kOut, kOut, 1, 2, s), 333, 251, filter, plans[s]);
    ASSERT_TRUE(batch.add(plans[s], s, ~0ull));
  }
  std::vector<std::uint8_t> regions(batch.roi_bytes());
  for (std::size_t i = 0; i < batch.images().size(); ++i) {
    const detail::Roi& r = batch.regions()[i];
    for (std::uint32_t y = 0; y < r.height; ++y) {
      std::copy_n(whole.pixels.data() + (std::size_t{r.y + y} * 333 + r.x) * 3, r.width * 3,
                  regions.data() + batch.images()[i].roi_offset + y * batch.images()[i].roi_pitch);
    }
  }
  const std::size_t out_bytes = plans.size() * kOut * kOut * 3;
  std::vector<std::uint8_t> want(out_bytes);
  detail::crop_resize_on_host(batch, regions.data(), want.data(), kOut, kOut);
  const auto upload = [](const void* data, std::size_t bytes) {
    DeviceMemory m = device_alloc(bytes);
    GPUFEED_CUDA_CHECK(cudaMemcpy(m.get(), data, bytes, cudaMemcpyHostToDevice));
    return m;
  };
  DeviceMemory d_images =
      upload(batch.images().data(), batch.images().size() * sizeof(detail::CropResizeImage));
  DeviceMemory d_taps = upload(batch.taps().data(), batch.taps().size() * 4);
  DeviceMemory d_regions = upload(regions.data(), regions.size());
  DeviceMemory d_scratch = device_alloc(batch.tmp_bytes());
  DeviceMemory d_out = device_alloc(out_bytes);
  GPUFEED_CUDA_CHECK(cudaMemset(d_out.get(), 0xAB, out_bytes));
  detail::launch_crop_resize(static_cast<const detail::CropResizeImage*>(d_images.get()),
                             batch.size(), static_cast<const std::int32_t*>(d_taps.get()),
                             static_cast<const std::uint8_t*>(d_regions.get()),
                             static_cast<std::uint8_t*>(d_scratch.get()),
                             static_cast<std::uint8_t*>(d_out.get()), kOut, kOut, nullptr);
  std::vector<std::uint8_t> got(out_bytes);
  GPUFEED_CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(got == want);
}

}  // namespace
}  // namespace gpufeed::pipeline
