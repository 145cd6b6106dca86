// Bad input reaching the loader: one clear exception, never a crash, hang or wrong batch.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <fstream>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr formats::SampleShape kShape{8, 8, 3, formats::Layout::nhwc};

LoaderOptions basic(const std::string& path) {
  LoaderOptions o;
  o.source.path = path;
  o.sampling.batch_size = 16;
  o.resources.workers = 2;
  o.sampling.shard = Shard{};
  return o;
}

/// A sound file of 50 samples (chunks of 10), removed with the value.
struct SmallFile {
  SmallFile() { testing::write_dataset(path, 50, kShape, 10); }
  testing::TempDir dir;
  const std::string path = dir.file("ok.h5");
};

std::string error_of(const LoaderOptions& o) {
  try {
    Loader loader(o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// Overwrites the middle of chunk `chunk` (from the file's /index) with garbage.
void damage_chunk(const std::string& path, std::uint64_t chunk) {
  std::vector<std::uint64_t> addr(64), size(64);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = H5Dopen2(f, "/index/chunk_addr", H5P_DEFAULT);
  hid_t s = H5Dopen2(f, "/index/chunk_size", H5P_DEFAULT);
  H5Dread(a, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, addr.data());
  H5Dread(s, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, size.data());
  H5Dclose(a);
  H5Dclose(s);
  H5Fclose(f);
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::vector<char> junk(size[chunk] / 2, '\x5a');
  ASSERT_EQ(
      ::pwrite(fd, junk.data(), junk.size(), static_cast<off_t>(addr[chunk] + size[chunk] / 4)),
      static_cast<ssize_t>(junk.size()));
  ::close(fd);
}

TEST(LoaderErrors, DamagedChunkReachesTheConsumerWithContext) {
  testing::TempDir dir;
  const std::string path = dir.file("damaged.h5");
  testing::write_dataset(path, 200, kShape, 20, 6);
  damage_chunk(path, 3);
  LoaderOptions o = basic(path);
  o.sampling.order = Order::sequential;
  Loader loader(o);
  loader.start_epoch(0);
  try {
    for (;;) {
      Batch b = loader.next();
      ASSERT_TRUE(b) << "the epoch ended without reporting the damaged chunk";
      for (auto i : b.sample_indices()) ASSERT_TRUE(i < 60 || i >= 80) << "sample " << i;
    }
  } catch (const PipelineError& e) {
    EXPECT_THAT(e.what(), HasSubstr("chunk 3"));
    EXPECT_THAT(e.what(), HasSubstr("damaged.h5"));
    EXPECT_THAT(e.what(), HasSubstr("epoch 0"));
  }
  EXPECT_THROW(loader.next(), PipelineError);  // stays failed until another epoch starts
}

TEST(LoaderErrors, BadOptionsAreUsageErrors) {
  const SmallFile file;
  LoaderOptions o = basic(file.path);
  o.sampling.batch_size = 51;
  EXPECT_THAT(error_of(o), HasSubstr("batch_size=51 is larger than the 50 samples"));
  EXPECT_THROW(Loader{o}, OptionError);
  o.sampling.batch_size = 0;
  EXPECT_THROW(Loader{o}, UsageError);
  o = basic(file.path);
  o.resources.prefetch = 0;
  EXPECT_THROW(Loader{o}, UsageError);
  o = basic(file.path);
  o.output.mean = {1, 2};
  o.output.stddev = {1, 2};
  EXPECT_THAT(error_of(o), HasSubstr("need 3 values"));
  EXPECT_THROW(o.output.device = "tpu", OptionError);  // parsed where it is set
  o = basic(file.path);
  o.sampling.shard = Shard{2, 2};
  EXPECT_THROW(Loader{o}, UsageError);
}

TEST(LoaderErrors, OptionErrorsNameTheFieldAndRenderFrontEndNames) {
  const SmallFile file;
  LoaderOptions o = basic(file.path);
  o.sampling.batch_size = 40;
  o.resources.prefetch = 100000;
  const auto e = testing::loader_option_error(o);
  ASSERT_TRUE(e) << "prefetch 100000 was accepted";
  EXPECT_EQ(e->field(), "prefetch");
  EXPECT_THAT(e->what(), HasSubstr("prefetch=100000: use 1 to 256"));
  const std::string flags =
      e->render([](std::string_view f) { return "--" + std::string(f) + "!"; });
  EXPECT_THAT(flags, HasSubstr("--prefetch!=100000: use 1 to 256"));
  EXPECT_EQ(render_option_names("{workers} {batch_size} {B} {} {",
                                [](std::string_view f) { return "<" + std::string(f) + ">"; }),
            "<workers> <batch_size> {B} {} {");
}

TEST(LoaderErrors, BracesInAUsersValueAreNotTakenForAField) {
  // Only LoaderOptions' field names are placeholders: "{auto}" in a value stays as typed.
  try {
    (void)EchoOptions::parse("{auto}");
    FAIL() << "echo {auto} was accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "echo");
    const std::string flags = e.render([](std::string_view f) { return "--" + std::string(f); });
    EXPECT_THAT(flags, HasSubstr("{auto}"));
    EXPECT_THAT(flags, Not(HasSubstr("--auto")));
  }
}

TEST(LoaderErrors, CudaDeviceWithoutGpuIsAUsageError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  const SmallFile file;
  LoaderOptions o = basic(file.path);
  o.output.device = "cuda:0";
  EXPECT_THAT(error_of(o), HasSubstr("no CUDA device"));
}

TEST(LoaderErrors, MissingFileIsAFormatError) {
  LoaderOptions o = basic("/nonexistent/dir/data.h5");
  EXPECT_THROW(Loader{o}, formats::FormatError);
  EXPECT_THAT(error_of(o), HasSubstr("/nonexistent/dir/data.h5"));
}

}  // namespace
}  // namespace gpufeed::pipeline
