// A dataset of shards read as one: the same samples as one file, one global order over every
// shard's chunks, two ranks resuming a sharded epoch, and a missing, damaged or changed shard
// named in one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;

constexpr formats::SampleShape kShape{6, 5, 3, formats::Layout::nhwc};
// Shards of 70, 70 and 60 samples in chunks of 16: each shard's last chunk is short.
constexpr std::uint64_t kSamples = 200;
constexpr std::uint64_t kPerShard = 70;

class Shards : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_dataset(one_file_, kSamples, kShape, 16);
    formats::Manifest manifest{"raw", {}};
    for (std::uint64_t first = 0; first < kSamples; first += kPerShard) {
      const std::uint64_t n = std::min(kPerShard, kSamples - first);
      const std::string name = "part-" + std::to_string(first / kPerShard) + ".h5";
      formats::WriterOptions w;
      w.samples_per_chunk = 16;
      testing::write_dataset_with(
          shards_.file(name), n, kShape, w,
          [first](std::uint64_t s, std::uint64_t b) { return testing::pixel(first + s, b); },
          [first](std::uint64_t s) { return testing::label_of(first + s); }, 2);
      manifest.shards.push_back({name, n, std::nullopt});
    }
    std::ofstream(shards_.file(formats::kManifestName)) << formats::manifest_text(manifest);
  }

  [[nodiscard]] static LoaderOptions options(const std::string& path, Order order,
                                             Shard shard = {}) {
    LoaderOptions o = testing::windowed_options(path, order, 5, 3, shard);
    o.output.keep_raw = true;  // the tests compare Batch::raw()
    return o;
  }

  /// The FormatError's text that opening `path` in chunk order fails with; empty when it opens.
  [[nodiscard]] static std::string open_error(const std::string& path) {
    try {
      Loader loader(options(path, Order::chunk));
    } catch (const formats::FormatError& e) {
      return e.what();
    }
    return {};
  }

  /// Each delivered sample's index and uint8 pixels (Batch::raw()), in order, for `limit`
  /// batches at most.
  static std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> run(
      Loader& loader, std::uint64_t epoch, std::size_t limit = ~0ul) {
    std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> out;
    loader.start_epoch(epoch);
    for (std::size_t n = 0; n < limit; ++n) {
      const Batch b = loader.next();
      if (!b) break;
      const std::uint64_t bytes = kShape.bytes();
      for (std::uint32_t i = 0; i < b.size(); ++i) {
        const std::uint8_t* pixels = b.raw().data() + i * bytes;
        out.emplace_back(b.sample_indices()[i], std::vector<std::uint8_t>(pixels, pixels + bytes));
      }
    }
    return out;
  }

  /// Ranks 0..world-1 of a chunk-order job on the shards, each taking `batches` batches of
  /// `epoch` (after `restore`, when given): the samples they took; `state` the last rank's
  /// state after (any rank's describes the job: all took as many).
  [[nodiscard]] std::multiset<std::uint64_t> run_ranks(std::uint32_t world, std::uint64_t epoch,
                                                       std::size_t batches,
                                                       const LoaderState* restore,
                                                       LoaderState* state) const {
    std::multiset<std::uint64_t> taken;
    for (std::uint32_t rank = 0; rank < world; ++rank) {
      Loader loader(options(shards_.path().string(), Order::chunk, {rank, world}));
      if (restore != nullptr) loader.restore(*restore);
      for (const auto& s : run(loader, epoch, batches)) taken.insert(s.first);
      if (state != nullptr) *state = loader.state();
    }
    return taken;
  }

  testing::TempDir dir_;
  testing::TempDir shards_;
  std::string one_file_ = dir_.file("one.h5");
};

TEST_F(Shards, ReadAsOneFileOfTheSameSamples) {
  Loader sharded(options(shards_.path().string(), Order::sequential));
  Loader one(options(one_file_, Order::sequential));
  ASSERT_EQ(sharded.dataset().num_samples(), kSamples);
  EXPECT_EQ(sharded.dataset().num_shards(), 3u);
  EXPECT_EQ(sharded.dataset().labels(), one.dataset().labels());
  // Sequential order: sample i of the shards is sample i of the file, pixel for pixel.
  EXPECT_EQ(run(sharded, 0), run(one, 0));
}

TEST_F(Shards, GlobAndListNameTheSameDataset) {
  Loader by_manifest(options(shards_.path().string(), Order::random));
  Loader by_glob(options(shards_.file("part-*.h5"), Order::random));
  LoaderOptions listed = options("", Order::random);
  listed.source.paths = {shards_.file("part-0.h5"), shards_.file("part-[12].h5")};
  Loader by_list(listed);
  const auto want = run(by_manifest, 1);
  EXPECT_EQ(run(by_glob, 1), want);
  EXPECT_EQ(run(by_list, 1), want);
  EXPECT_THAT(by_list.options().source.path, HasSubstr("and 1 more"));
}

TEST_F(Shards, ChunkOrderReadsEveryChunkOfEveryShardOnce) {
  Loader loader(options(shards_.path().string(), Order::chunk));
  const auto seen = run(loader, 2);
  std::set<std::uint64_t> samples;
  for (const auto& [index, pixels] : seen) {
    samples.insert(index);
    ASSERT_EQ(pixels[0], testing::pixel(index, 0)) << "sample " << index;
  }
  EXPECT_EQ(samples.size(), kSamples);
  // 5, 5 and 4 chunks (70 = 4x16 + 6, 60 = 3x16 + 12): each read once.
  EXPECT_EQ(loader.dataset().num_chunks(), 14u);
  EXPECT_EQ(loader.stats().chunk_reads, 14u);
  // Windows draw from chunks of several shards: the first batch is not one shard's.
  std::set<std::uint64_t> shards_in_first;
  for (std::size_t i = 0; i < 20; ++i) shards_in_first.insert(seen[i].first / kPerShard);
  EXPECT_GT(shards_in_first.size(), 1u);
}

TEST_F(Shards, TwoRanksResumeAShardedEpoch) {
  LoaderState state;
  const std::multiset<std::uint64_t> consumed = run_ranks(2, 1, 2, nullptr, &state);
  const std::multiset<std::uint64_t> rest = run_ranks(2, 1, ~0ul, &state, nullptr);
  for (const std::uint64_t s : rest) EXPECT_EQ(consumed.count(s), 0u) << "sample " << s;
  std::set<std::uint64_t> all(consumed.begin(), consumed.end());
  all.insert(rest.begin(), rest.end());
  EXPECT_EQ(all.size(), kSamples);
  EXPECT_EQ(consumed.size() + rest.size(), kSamples);
}

TEST_F(Shards, ThreeRanksGoOnWhereTwoStopped) {
  LoaderState state;
  const std::multiset<std::uint64_t> consumed = run_ranks(2, 3, 3, nullptr, &state);
  const std::multiset<std::uint64_t> rest = run_ranks(3, 3, ~0ul, &state, nullptr);
  // Every sample once; DistributedSampler's padding repeats at most world size - 1 of them.
  std::set<std::uint64_t> all(consumed.begin(), consumed.end());
  all.insert(rest.begin(), rest.end());
  EXPECT_EQ(all.size(), kSamples);
  EXPECT_LE(consumed.size() + rest.size(), kSamples + 2);
  for (const std::uint64_t s : consumed) EXPECT_EQ(rest.count(s), 0u) << "sample " << s;
}

TEST_F(Shards, AChangedShardListIsRefused) {
  Loader loader(options(shards_.path().string(), Order::random));
  run(loader, 0, 1);
  const LoaderState state = loader.state();
  LoaderOptions swapped = options("", Order::random);
  swapped.source.paths = {shards_.file("part-1.h5"), shards_.file("part-0.h5"),
                          shards_.file("part-2.h5")};
  Loader other(swapped);
  EXPECT_THROW(other.restore(state), UsageError);
}

TEST_F(Shards, AMissingShardIsNamed) {
  std::filesystem::remove(shards_.file("part-1.h5"));
  const std::string error = open_error(shards_.path().string());
  ASSERT_FALSE(error.empty()) << "opened a dataset with a shard missing";
  EXPECT_THAT(error, HasSubstr("shard 1 of 3"));
  EXPECT_THAT(error, HasSubstr("part-1.h5"));
}

TEST_F(Shards, ATruncatedShardIsNamed) {
  std::filesystem::resize_file(shards_.file("part-2.h5"),
                               std::filesystem::file_size(shards_.file("part-2.h5")) / 2);
  try {
    Loader loader(options(shards_.path().string(), Order::chunk));
    for (const Batch& b : loader.epoch(0)) (void)b;
    FAIL() << "read a truncated shard";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("part-2.h5"));
  }
}

TEST_F(Shards, AShardUnlikeItsManifestIsNamed) {
  formats::WriterOptions w;
  w.samples_per_chunk = 16;
  testing::write_dataset_with(shards_.file("part-0.h5"), 30, kShape, w, testing::pixel,
                              testing::label_of, 1);
  const std::string error = open_error(shards_.path().string());
  ASSERT_FALSE(error.empty()) << "opened a shard that the manifest does not describe";
  EXPECT_THAT(error, HasSubstr("shard 0 of 3"));
  EXPECT_THAT(error, HasSubstr("the manifest says 70"));
}

TEST_F(Shards, AShardOfAnotherShapeIsNamed) {
  formats::WriterOptions w;
  testing::write_dataset_with(shards_.file("part-2.h5"), 60, {4, 4, 3, formats::Layout::nhwc}, w,
                              testing::pixel, testing::label_of, 1);
  const std::string error = open_error(shards_.file("part-*.h5"));
  ASSERT_FALSE(error.empty()) << "opened shards of two shapes";
  EXPECT_THAT(error, HasSubstr("shard 2 of 3"));
  EXPECT_THAT(error, HasSubstr("one shape"));
}

TEST_F(Shards, AManifestWhoseMetadataSizesExceedTheShardIsNamed) {
  // head_bytes and tail_bytes say what an opening fetches: one beyond the shard's size is a
  // damaged manifest, said in one line, not a buffer of that size.
  formats::Manifest manifest = formats::read_manifest(shards_.file(formats::kManifestName));
  manifest.shards[1].bytes = 4096;
  manifest.shards[1].tail_bytes = 18446744073709551615ull;
  std::ofstream(shards_.file(formats::kManifestName)) << formats::manifest_text(manifest);
  const std::string error = open_error(shards_.path().string());
  EXPECT_THAT(error, HasSubstr("is not a gpufeed manifest: shard 1 (" + shards_.file("part-1.h5") +
                               ") has tail_bytes 18446744073709551615, more than its 4096 bytes"));
}

TEST_F(Shards, AGlobMatchingNothingIsAUsageError) {
  EXPECT_THROW(Loader(options(shards_.file("nothing-*.h5"), Order::chunk)), UsageError);
}

}  // namespace
}  // namespace gpufeed::pipeline
