// decode=gpu|auto where they cannot run (no CUDA device, a raw file): one line naming the
// setting, or the CPU without a word; and finding and loading libnvjpeg, which needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cuda/nvjpeg_api.hpp"
#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/pipeline/decode.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "smooth_picture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class DecodeOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    formats::JpegEncoder encoder(90);
    testing::write_jpeg_dataset(
        path_, 16, 2, [&](std::uint64_t i, std::uint32_t w, std::uint32_t h) {
          return testing::StoredImage{encoder.encode(testing::smooth_picture(i, w, h).view()), 3,
                                      0};
        });
  }
  testing::TempDir dir_;
  std::string path_ = dir_.file("photos.h5");
};

TEST(Decode, ParsesItsThreeValuesAndRefusesOthersNamingTheSetting) {
  EXPECT_EQ(parse_decode("cpu"), Decode::cpu);
  EXPECT_EQ(parse_decode("gpu"), Decode::gpu);
  EXPECT_EQ(parse_decode("auto"), Decode::automatic);
  EXPECT_EQ(to_string(Decode::automatic), "auto");
  try {
    parse_decode("nvjpeg");
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "decode");
    EXPECT_THAT(e.what(), HasSubstr("cpu, gpu or auto"));
  }
}

TEST_F(DecodeOptions, GpuOnTheCpuDeviceIsRefusedInOneLine) {
  LoaderOptions o = testing::jpeg_loader_options(path_, 1, 32, 32);
  o.output.device = Device::cpu();
  o.image.decode = Decode::gpu;
  const auto e = testing::loader_option_error(o);
  ASSERT_TRUE(e) << "decode=gpu ran on the CPU device";
  EXPECT_EQ(e->field(), "decode");
  const std::string what = e->what();
  EXPECT_THAT(what, HasSubstr("needs a CUDA device"));
  EXPECT_THAT(what, HasSubstr("cpu or auto"));
  EXPECT_EQ(what.find('\n'), std::string::npos);
}

TEST_F(DecodeOptions, AutoOnTheCpuDeviceDecodesOnTheCpuAsCpuDoes) {
  LoaderOptions o = testing::jpeg_loader_options(path_, 1, 32, 32);
  o.output.device = Device::cpu();
  LoaderOptions a = o;
  a.image.decode = Decode::automatic;
  Loader cpu(o), automatic(a);
  EXPECT_TRUE(automatic.notices().empty());  // nothing to say: there is no GPU to use
  auto x = cpu.epoch(0).begin(), y = automatic.epoch(0).begin();
  for (; x != std::default_sentinel; ++x, ++y) {
    ASSERT_NE(y, std::default_sentinel);
    ASSERT_EQ(x->images().size(), y->images().size());
    EXPECT_TRUE(std::equal(x->images().begin(), x->images().end(), y->images().begin()));
  }
  const LoaderStats s = automatic.stats();
  EXPECT_EQ(s.decode.mode, "cpu");
  EXPECT_EQ(s.decode.cpu_images, 16u);
  EXPECT_EQ(s.decode.engine_images, 0u);
}

TEST_F(DecodeOptions, GpuOnARawFileIsRefusedNamingTheFile) {
  const std::string raw = dir_.file("raw.h5");
  testing::write_dataset(raw, 8, {8, 8, 3, formats::Layout::nhwc}, 4);
  LoaderOptions o = testing::random_order_options(raw, 4, 1);
  o.image.decode = Decode::gpu;
  const auto e = testing::loader_option_error(o);
  ASSERT_TRUE(e) << "decode=gpu opened a raw file";
  EXPECT_THAT(e->what(), HasSubstr(raw));
  EXPECT_THAT(e->what(), HasSubstr("raw pixels"));
  o.image.decode = Decode::automatic;
  EXPECT_NO_THROW(Loader{o});
}

TEST(Nvjpeg, CandidatesComeInTheDocumentedOrder) {
  testing::TempDir dir;
  // Wheels rename the library (auditwheel adds a hash); a directory is searched for it.
  std::ofstream(dir.file("libnvjpeg-1a2b3c4d.so.13")).put('x');
  std::ofstream(dir.file("libnvjpeg.so.12")).put('x');  // another major: not a candidate
  add_nvjpeg_library(dir.path().string());
  add_nvjpeg_library("/nowhere/libnvjpeg.so.13");
  ::setenv("GPUFEED_NVJPEG", "/from/the/environment.so", 1);
  const std::vector<std::string> c = detail::nvjpeg_candidates();
  ::unsetenv("GPUFEED_NVJPEG");
  ASSERT_GE(c.size(), 5u);
  EXPECT_EQ(c[0], "/from/the/environment.so");
  EXPECT_EQ(c[1], dir.file("libnvjpeg-1a2b3c4d.so.13"));
  EXPECT_EQ(c[2], "/nowhere/libnvjpeg.so.13");
  EXPECT_EQ(c[3], "libnvjpeg.so.13");
  EXPECT_THAT(c, Not(::testing::Contains(dir.file("libnvjpeg.so.12"))));
  EXPECT_EQ(c.back(), "/usr/local/cuda/targets/x86_64-linux/lib/libnvjpeg.so.13");
}

#ifdef GPUFEED_NVJPEG_TEST_DIR
TEST(Nvjpeg, TheLibraryOfTheHeaderLoadsWithoutAGpu) {
  const std::string lib = std::string(GPUFEED_NVJPEG_TEST_DIR) + "/libnvjpeg.so.13";
  if (!std::filesystem::exists(lib)) GTEST_SKIP() << "nvjpeg.h came without its library: " << lib;
  add_nvjpeg_library(GPUFEED_NVJPEG_TEST_DIR);
  const NvjpegLibrary l = nvjpeg_library();
  ASSERT_TRUE(l.loaded) << l.why;
  EXPECT_EQ(l.version.rfind("13.", 0), 0u) << l.version;
  EXPECT_FALSE(l.path.empty());
}
#endif

}  // namespace
}  // namespace gpufeed::pipeline
