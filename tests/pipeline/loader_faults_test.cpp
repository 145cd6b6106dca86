// Disk faults under a running loader (tests/fault interposes libc's I/O calls, HDF5's too): a
// read error, a short read or a truncated file in the middle of an epoch, a failing stage, a
// consumer that throws, a cache smaller than one chunk. Each gives one clear PipelineError
// naming the file and where it happened, never a crash, a hang or a wrong batch, and the next
// epoch runs to its end with every sample once.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "fault_injection.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "smooth_picture.hpp"
#include "temp_dir.hpp"
#include "test_hooks.hpp"

namespace gpufeed::pipeline {
namespace {

namespace fs = std::filesystem;
namespace fault = testing::fault;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr formats::SampleShape kShape{8, 8, 3, formats::Layout::nhwc};
// Larger than HDF5's own chunk cache (1 MiB) in all, so that HDF5 reads the file every epoch.
constexpr formats::SampleShape kBigShape{64, 64, 3, formats::Layout::nhwc};
constexpr std::uint64_t kSamples = 200;
constexpr std::uint64_t kPerChunk = 10;
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

// ---- files ----

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_back(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void cut(const std::string& path, std::uint64_t size) {
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0) << std::strerror(errno);
}

/// A file as other tools write one: /images of pixel() with no /index and no labels, chunked
/// with a filter gpufeed does not decode itself (fletcher32: HDF5 reads it) or contiguous.
void write_user_file(const std::string& path, bool contiguous, formats::SampleShape shape) {
  std::vector<std::uint8_t> data(kSamples * shape.bytes());
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    for (std::uint64_t b = 0; b < shape.bytes(); ++b) {
      data[i * shape.bytes() + b] = testing::pixel(i, b);
    }
  }
  const hsize_t dims[4] = {kSamples, shape.height, shape.width, shape.channels};
  const hsize_t chunk[4] = {kPerChunk, shape.height, shape.width, shape.channels};
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(4, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (contiguous) {
    H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  } else {
    H5Pset_chunk(dcpl, 4, chunk);
    H5Pset_fletcher32(dcpl);
  }
  const hid_t images =
      H5Dcreate2(file, "/images", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dwrite(images, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
  H5Dclose(images);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
}

constexpr std::uint64_t kJpegSamples = 48;

/// kJpegSamples JPEGs; sample `broken` (if any) is not an image.
void write_jpeg_file(const std::string& path, std::uint64_t broken = kNever) {
  formats::JpegDatasetWriter writer(path);
  formats::JpegEncoder encoder(90);
  for (std::uint64_t i = 0; i < kJpegSamples; ++i) {
    std::vector<std::uint8_t> bytes = encoder.encode(testing::smooth_picture(i, 40, 32).view());
    if (i == broken) bytes.assign(bytes.size(), 0x42);
    writer.append(bytes, {32, 40, 3}, static_cast<std::int64_t>(i % 4));
  }
  writer.commit();
}

// ---- the loader ----

/// How a file is read, and the file to read.
struct ReadCase {
  std::string name;
  formats::ReadPath path;
  std::function<void(const std::string&)> write;
  bool use_index = true;
  bool jpeg = false;
};

std::vector<ReadCase> read_cases() {
  return {
      {"index", formats::ReadPath::index,
       [](const std::string& p) { testing::write_dataset(p, kSamples, kShape, kPerChunk, 4); }},
      {"index_uncompressed", formats::ReadPath::index,
       [](const std::string& p) { testing::write_dataset(p, kSamples, kShape, kPerChunk, 0); }},
      {"direct_chunk", formats::ReadPath::direct_chunk,
       [](const std::string& p) { testing::write_dataset(p, kSamples, kShape, kPerChunk, 4); },
       false},
      {"direct_chunk_uncompressed", formats::ReadPath::direct_chunk,
       [](const std::string& p) { testing::write_dataset(p, kSamples, kShape, kPerChunk, 0); },
       false},
      {"hyperslab", formats::ReadPath::hyperslab,
       [](const std::string& p) { write_user_file(p, false, kBigShape); }},
      {"contiguous", formats::ReadPath::contiguous,
       [](const std::string& p) { write_user_file(p, true, kBigShape); }},
      {"jpeg", formats::ReadPath::index, [](const std::string& p) { write_jpeg_file(p); }, true,
       true},
  };
}

LoaderOptions options_for(const ReadCase& c, const std::string& path) {
  LoaderOptions o = testing::random_order_options(path, 16, 5);
  o.source.use_index = c.use_index;
  o.storage.cache_bytes = 1;  // every epoch reads every chunk again (the cache keeps one)
  if (c.jpeg) {
    o.image.height = 16;
    o.image.width = 20;
    o.sampling.batch_size = 8;
  }
  if (c.path == formats::ReadPath::hyperslab || c.path == formats::ReadPath::contiguous) {
    o.source.labels = "";
  }
  return o;
}

std::uint64_t samples_of(const ReadCase& c) {
  return c.jpeg ? kJpegSamples : kSamples;
}

/// What an epoch delivered before it ended or failed.
struct EpochResult {
  std::map<std::uint64_t, int> seen;  ///< sample -> times delivered
  std::uint64_t batches = 0;
  std::optional<std::string> error;  ///< the PipelineError, if one ended it
  bool wrong_pixels = false;         ///< a raw-layout sample differed from what was written
};

/// Runs `epoch` to its end or its first error, checking the pixels of raw-layout samples.
EpochResult run_epoch(Loader& loader, std::uint64_t epoch, bool check_pixels) {
  EpochResult r;
  loader.start_epoch(epoch);
  try {
    for (Batch b = loader.next(); b; b = loader.next()) {
      ++r.batches;
      const auto raw = b.raw();
      const std::uint64_t bytes = loader.sample_shape().bytes();
      for (std::uint32_t k = 0; k < b.size(); ++k) {
        const std::uint64_t sample = b.sample_indices()[k];
        ++r.seen[sample];
        if (!check_pixels) continue;
        for (std::uint64_t i = 0; i < bytes; ++i) {
          if (raw[k * bytes + i] != testing::pixel(sample, i)) r.wrong_pixels = true;
        }
      }
    }
  } catch (const PipelineError& e) {
    r.error = e.what();
  }
  return r;
}

void expect_every_sample_once(const EpochResult& r, std::uint64_t samples) {
  EXPECT_FALSE(r.error) << *r.error;
  EXPECT_FALSE(r.wrong_pixels);
  ASSERT_EQ(r.seen.size(), samples);
  for (const auto& [sample, times] : r.seen) EXPECT_EQ(times, 1) << "sample " << sample;
}

/// One line that names the file.
void expect_one_clear_line(const std::string& message, const std::string& file) {
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  EXPECT_THAT(message, HasSubstr(file));
  EXPECT_THAT(message,
              ::testing::MatchesRegex(".*\\((read|decode) stage, batch [0-9]+ of epoch [0-9]+\\)"));
}

/// Matching read calls a whole epoch makes (a rule that never fires counts them).
std::uint64_t reads_per_epoch(Loader& loader, const std::string& file, std::uint64_t epoch) {
  fault::Rule count;
  count.path = file;
  count.after_calls = kNever;
  const fault::Armed armed(count);
  const EpochResult clean = run_epoch(loader, epoch, false);
  EXPECT_FALSE(clean.error) << *clean.error;
  return fault::matched();
}

class ReadFaults : public ::testing::TestWithParam<ReadCase> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fault::interposed()) << "the fault library does not see this process's calls";
    GetParam().write(path_);
  }
  void TearDown() override { fault::disarm(); }

  testing::TempDir dir_;
  std::string path_ = dir_.file("faulty.h5");
};

TEST_P(ReadFaults, AnIoErrorMidEpochIsOneErrorAndTheNextEpochIsWhole) {
  const ReadCase& c = GetParam();
  Loader loader(options_for(c, path_));
  if (!c.jpeg) {
    ASSERT_EQ(loader.raw_dataset()->read_path(), c.path);
  }
  const std::uint64_t reads = reads_per_epoch(loader, "faulty.h5", 0);
  ASSERT_GT(reads, 4u);

  fault::Rule eio;
  eio.path = "faulty.h5";
  eio.error = EIO;
  eio.after_calls = reads / 2;  // the middle of the epoch; it stays broken until disarmed
  fault::arm(eio);
  const EpochResult failed = run_epoch(loader, 1, !c.jpeg);
  ASSERT_TRUE(failed.error) << "the epoch ended without reporting the I/O error";
  EXPECT_GT(fault::faults(), 0u);
  EXPECT_FALSE(failed.wrong_pixels) << "a batch before the error was wrong";
  EXPECT_LT(failed.batches, loader.batches_per_epoch());
  const std::string& message = *failed.error;
  expect_one_clear_line(message, path_);
  EXPECT_THAT(message, HasSubstr("Input/output error"));
  EXPECT_THAT(message, HasSubstr("check the disk"));
  EXPECT_THAT(message, HasSubstr(c.jpeg ? "sample " : "chunk "));
  EXPECT_THAT(message, HasSubstr("epoch 1"));
  EXPECT_THROW(loader.next(), PipelineError);  // stays failed until another epoch starts

  fault::disarm();
  expect_every_sample_once(run_epoch(loader, 2, !c.jpeg), samples_of(c));
}

TEST_P(ReadFaults, ShortReadsAndInterruptedReadsAreRetried) {
  const ReadCase& c = GetParam();
  Loader loader(options_for(c, path_));
  fault::Rule short_reads;
  short_reads.path = "faulty.h5";
  short_reads.mode = fault::Mode::short_io;
  short_reads.short_bytes = 1000;
  fault::arm(short_reads);
  expect_every_sample_once(run_epoch(loader, 0, !c.jpeg), samples_of(c));
  EXPECT_GT(fault::faults(), 0u);

  fault::Rule interrupted;
  interrupted.path = "faulty.h5";
  interrupted.error = EINTR;
  interrupted.times = 40;
  fault::arm(interrupted);
  expect_every_sample_once(run_epoch(loader, 1, !c.jpeg), samples_of(c));
  EXPECT_EQ(fault::faults(), 40u);
}

TEST_P(ReadFaults, AFileTruncatedBetweenEpochsIsReportedAndARestoredOneReadsAgain) {
  const ReadCase& c = GetParam();
  Loader loader(options_for(c, path_));
  expect_every_sample_once(run_epoch(loader, 0, !c.jpeg), samples_of(c));
  const std::string whole = slurp(path_);
  cut(path_, whole.size() / 3);
  const EpochResult failed = run_epoch(loader, 1, !c.jpeg);
  ASSERT_TRUE(failed.error) << "a truncated file was read without an error";
  EXPECT_FALSE(failed.wrong_pixels) << "bytes past the new end were delivered as pixels";
  expect_one_clear_line(*failed.error, path_);
  EXPECT_THAT(*failed.error, HasSubstr("is truncated"));
  EXPECT_THAT(*failed.error, HasSubstr("copy it again or re-create it"));

  put_back(path_, whole);
  expect_every_sample_once(run_epoch(loader, 2, !c.jpeg), samples_of(c));
}

TEST_P(ReadFaults, AFileTruncatedMidEpochIsReportedWithoutACrash) {
  const ReadCase& c = GetParam();
  Loader loader(options_for(c, path_));
  const std::uint64_t reads = reads_per_epoch(loader, "faulty.h5", 0);
  const std::string whole = slurp(path_);
  fault::Rule truncate;
  truncate.path = "faulty.h5";
  truncate.mode = fault::Mode::truncate;
  truncate.truncate_path = path_;
  truncate.truncate_size = whole.size() / 3;
  truncate.after_calls = reads / 2;
  truncate.times = 1;
  fault::arm(truncate);
  const EpochResult failed = run_epoch(loader, 1, !c.jpeg);
  EXPECT_EQ(fault::faults(), 1u);
  ASSERT_TRUE(failed.error) << "a file cut mid-epoch was read without an error";
  EXPECT_FALSE(failed.wrong_pixels) << "bytes past the new end were delivered as pixels";
  expect_one_clear_line(*failed.error, path_);
  EXPECT_THAT(*failed.error, HasSubstr("truncated"));

  fault::disarm();
  put_back(path_, whole);
  expect_every_sample_once(run_epoch(loader, 2, !c.jpeg), samples_of(c));
}

INSTANTIATE_TEST_SUITE_P(Paths, ReadFaults, ::testing::ValuesIn(read_cases()),
                         [](const auto& p) { return p.param.name; });

// ---- opening ----

TEST(OpenFaults, EveryReadThatFailsWhileALoaderOpensIsOneErrorNamingTheFile) {
  ASSERT_TRUE(fault::interposed());
  for (const ReadCase& c : read_cases()) {
    testing::TempDir dir;
    const std::string path = dir.file("opening.h5");
    c.write(path);
    const LoaderOptions o = options_for(c, path);
    fault::Rule count;
    count.path = "opening.h5";
    count.after_calls = kNever;
    std::uint64_t reads = 0;
    {
      const fault::Armed armed(count);
      const Loader loader(o);
      reads = fault::matched();
    }
    ASSERT_GT(reads, 0u) << c.name;
    for (std::uint64_t after = 0; after < reads; ++after) {
      fault::Rule eio;
      eio.path = "opening.h5";
      eio.after_calls = after;
      const fault::Armed armed(eio);
      try {
        const Loader loader(o);
        ADD_FAILURE() << c.name << ": opened although read " << after << " failed";
      } catch (const formats::IoError& e) {
        const std::string m = e.what();
        EXPECT_THAT(m, HasSubstr(path)) << c.name << ", read " << after;
        EXPECT_THAT(m, HasSubstr("Input/output error; the device reported an I/O error"))
            << c.name << ", read " << after;
        EXPECT_THAT(m, Not(HasSubstr("\n")));
        EXPECT_THAT(m, Not(HasSubstr("errno"))) << "HDF5's own wording leaked: " << m;
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.name << ", read " << after << ": not an IoError: " << e.what();
      }
    }
    fault::disarm();
    const Loader loader(o);  // the file itself was fine all along
  }
}

// ---- on_error skip ----

class SkipPolicy : public ::testing::Test {
 protected:
  void TearDown() override { fault::disarm(); }
  testing::TempDir dir_;
  std::string path_ = dir_.file("photos.h5");
};

TEST_F(SkipPolicy, ReplacesAnUndecodableSampleButNotAnIoError) {
  write_jpeg_file(path_, 13);
  ReadCase jpeg{"jpeg", formats::ReadPath::index, nullptr, true, true};
  LoaderOptions o = options_for(jpeg, path_);
  o.on_error = OnError::skip;
  Loader loader(o);
  // The damaged sample is counted and replaced: full batches, no error.
  const EpochResult skipped = run_epoch(loader, 0, false);
  EXPECT_FALSE(skipped.error);
  EXPECT_EQ(skipped.seen.count(13), 0u);
  EXPECT_EQ(loader.stats().skipped_samples, 1u);

  // A read the disk fails is not the sample's fault: it stops the run, as with on_error fail.
  fault::Rule eio;
  eio.path = "photos.h5";
  eio.after_calls = 10;
  eio.times = 1;  // one failed read: skipping would hide it completely
  fault::arm(eio);
  const EpochResult failed = run_epoch(loader, 1, false);
  ASSERT_TRUE(failed.error) << "an I/O error was skipped like a damaged sample";
  EXPECT_THAT(*failed.error, HasSubstr("Input/output error"));
  EXPECT_THAT(*failed.error, HasSubstr("photos.h5"));
  fault::disarm();
  const EpochResult next = run_epoch(loader, 2, false);
  EXPECT_FALSE(next.error);
  EXPECT_EQ(next.seen.size(), kJpegSamples - 1);
}

TEST_F(SkipPolicy, DoesNotApplyToRawChunks) {
  path_ = dir_.file("data.h5");
  testing::write_dataset(path_, kSamples, kShape, kPerChunk, 4);
  ReadCase raw{"index", formats::ReadPath::index, nullptr};
  LoaderOptions o = options_for(raw, path_);
  o.on_error = OnError::skip;
  Loader loader(o);
  fault::Rule eio;
  eio.path = "data.h5";
  eio.after_calls = 5;
  fault::arm(eio);
  const EpochResult failed = run_epoch(loader, 0, true);
  ASSERT_TRUE(failed.error);
  EXPECT_THAT(*failed.error, HasSubstr("cannot read chunk"));
  fault::disarm();
  expect_every_sample_once(run_epoch(loader, 1, true), kSamples);
}

// ---- memory budgets ----

TEST(MemoryBudgets, ACacheSmallerThanOneChunkStillWorksAndHoldsAboutOneChunk) {
  testing::TempDir dir;
  const std::string path = dir.file("data.h5");
  testing::write_dataset(path, kSamples, kShape, kPerChunk, 4);
  for (const std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{1}}) {
    for (const Order order : {Order::chunk, Order::random, Order::sequential}) {
      LoaderOptions o;
      o.source.path = path;
      o.sampling.batch_size = 16;
      o.resources.workers = 2;
      o.resources.prefetch = 1;
      o.sampling.order = order;
      o.storage.cache_bytes = budget;
      o.sampling.shard = Shard{};
      o.output.keep_raw = true;  // run_epoch() checks Batch::raw()
      Loader loader(o);
      for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
        expect_every_sample_once(run_epoch(loader, epoch, true), kSamples);
      }
      const LoaderStats s = loader.stats();
      const std::uint64_t chunk_bytes = kPerChunk * kShape.bytes();
      // The budget holds one chunk; chunks loading at once on the workers come on top.
      EXPECT_LE(s.cache_peak_bytes, (o.resources.workers.value_or(0) + 1) * chunk_bytes);
      EXPECT_GT(s.cache_misses, 0u);
    }
  }
}

TEST(MemoryBudgets, ABatchOfTheWholeDatasetWithOnePrefetchedBatchWorks) {
  testing::TempDir dir;
  const std::string path = dir.file("data.h5");
  testing::write_dataset(path, kSamples, kShape, kPerChunk, 0);
  LoaderOptions o;
  o.source.path = path;
  o.sampling.batch_size = kSamples;
  o.resources.workers = 1;
  o.resources.prefetch = 1;
  o.storage.cache_bytes = 1;
  o.sampling.shard = Shard{};
  o.output.keep_raw = true;  // run_epoch() checks Batch::raw()
  Loader loader(o);
  expect_every_sample_once(run_epoch(loader, 0, true), kSamples);
}

// ---- a failing stage, a failing consumer ----

std::atomic<int> g_failures_left{0};
std::atomic<bool> g_out_of_memory{false};

void fail_once() {
  if (g_failures_left.fetch_sub(1) <= 0) return;
  if (g_out_of_memory.load()) throw std::bad_alloc();
  throw std::runtime_error("the stage broke");
}

class StageFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_dataset(path_, kSamples, kShape, kPerChunk, 4);
    g_failures_left = 0;
    g_out_of_memory = false;
  }
  LoaderOptions options() const {
    ReadCase raw{"index", formats::ReadPath::index, nullptr};
    LoaderOptions o = options_for(raw, path_);
    o.storage.cache_bytes = 512ull << 20;
    return o;
  }
  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

TEST_F(StageFaults, EachStageThatThrowsGivesOneErrorNamingItAndTheBatch) {
  struct Case {
    std::atomic<void (*)()>& hook;
    const char* stage;
    bool out_of_memory;
  };
  const Case cases[] = {{detail::test_hooks.assembling, "read", false},
                        {detail::test_hooks.normalizing, "normalize", false},
                        {detail::test_hooks.assembling, "read", true},
                        {detail::test_hooks.normalizing, "normalize", true}};
  for (const Case& c : cases) {
    Loader loader(options());
    g_out_of_memory = c.out_of_memory;
    g_failures_left = 1;
    {
      const testing::ScopedHook hook(c.hook, fail_once);
      const EpochResult failed = run_epoch(loader, 0, true);
      ASSERT_TRUE(failed.error) << c.stage;
      const std::string& m = *failed.error;
      EXPECT_THAT(m, Not(HasSubstr("\n")));
      EXPECT_THAT(m, ::testing::MatchesRegex(".*\\(" + std::string(c.stage) +
                                             " stage, batch [0-9]+ of epoch 0\\)"));
      if (c.out_of_memory) {
        EXPECT_THAT(m, HasSubstr("out of memory; free memory, or lower the batch size"));
        EXPECT_THAT(m, Not(HasSubstr("std::bad_alloc")));
      } else {
        EXPECT_THAT(m, HasSubstr("the stage broke"));
      }
      EXPECT_FALSE(failed.wrong_pixels);
    }
    expect_every_sample_once(run_epoch(loader, 1, true), kSamples);
  }
}

TEST_F(StageFaults, ADamagedJpegFailsTheDecodeNamingTheSample) {
  const std::string photos = dir_.file("photos.h5");
  write_jpeg_file(photos, 21);
  ReadCase jpeg{"jpeg", formats::ReadPath::index, nullptr, true, true};
  Loader loader(options_for(jpeg, photos));
  const EpochResult failed = run_epoch(loader, 0, false);
  ASSERT_TRUE(failed.error);
  const std::string& m = *failed.error;
  EXPECT_THAT(m, HasSubstr("sample 21 of " + photos));
  EXPECT_THAT(m, HasSubstr("on_error skip"));
  EXPECT_THAT(m, Not(HasSubstr("\n")));
  EXPECT_THAT(m, ::testing::MatchesRegex(".*\\(decode stage, batch [0-9]+ of epoch 0\\)"));
  EXPECT_EQ(failed.seen.count(21), 0u);
}

TEST_F(StageFaults, AConsumerThatThrowsMidEpochLeavesALoaderThatRunsTheNextEpoch) {
  Loader loader(options());
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    try {
      std::uint64_t n = 0;
      for (Batch& batch : loader.epoch(epoch)) {
        ASSERT_TRUE(batch);
        if (++n == 2 + epoch) throw std::runtime_error("the training step failed");
      }
      FAIL() << "the consumer did not throw";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "the training step failed");
    }
  }
  expect_every_sample_once(run_epoch(loader, 3, true), kSamples);
}

TEST_F(StageFaults, ALoaderDestroyedWhileAnErrorUnwindsWithBatchesHeldDoesNotHang) {
  std::vector<Batch> held;
  try {
    Loader loader(options());
    loader.start_epoch(0);
    held.push_back(loader.next());
    held.push_back(loader.next());
    g_failures_left = 1;
    const testing::ScopedHook hook(detail::test_hooks.normalizing, fail_once);
    for (;;) {
      Batch b = loader.next();
      if (!b) break;
    }
    FAIL() << "no error";
  } catch (const PipelineError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the stage broke"));
  }
  ASSERT_EQ(held.size(), 2u);
  EXPECT_TRUE(held[0]);
  EXPECT_EQ(held[0].size(), 16u);  // a batch outlives its loader
  held.clear();
}

}  // namespace
}  // namespace gpufeed::pipeline
