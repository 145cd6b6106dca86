// Resuming an epoch from Loader::state(): the same batches as an uninterrupted epoch, pixel for
// pixel; with another world size every remaining sample once; foreign states refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {

void PrintTo(const EpochSegment& s, std::ostream* os) {
  *os << "{" << s.world_size << " ranks, " << s.samples_per_rank << " samples each}";
}

namespace {

using ::testing::HasSubstr;

constexpr formats::SampleShape kShape{6, 5, 3, formats::Layout::nhwc};
constexpr std::uint64_t kSamples = 240;

/// What a consumer saw of one delivery.
struct Seen {
  std::vector<std::uint64_t> indices;
  std::vector<float> images;
  bool echoed = false;
  std::uint64_t index = 0;
  bool operator==(const Seen&) const = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << "batch " << s.index << (s.echoed ? " (echo)" : "") << " of " << s.indices.size();
}

Seen seen(const Batch& b) {
  return {{b.sample_indices().begin(), b.sample_indices().end()},
          {b.images().begin(), b.images().end()},
          b.echoed(),
          b.index()};
}

class Resume : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_dataset(path_, kSamples, kShape, 16); }

  [[nodiscard]] LoaderOptions options(Order order, Shard shard = {}) const {
    LoaderOptions o = testing::windowed_options(path_, order, 3, 2, shard);
    o.image.augment = Augment::flip;
    return o;
  }

  /// Every delivery of epoch `epoch`, or the first `limit` of them.
  static std::vector<Seen> run(Loader& loader, std::uint64_t epoch, std::size_t limit = ~0ul) {
    std::vector<Seen> out;
    loader.start_epoch(epoch);
    while (out.size() < limit) {
      const Batch b = loader.next();
      if (!b) break;
      out.push_back(seen(b));
    }
    return out;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data.h5");
};

TEST_F(Resume, TheSameWorldSizeContinuesTheEpochPixelForPixel) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    Loader whole(options(order));
    const std::vector<Seen> uninterrupted = run(whole, 2);
    LoaderState state;
    std::vector<Seen> before;
    {
      Loader first(options(order));
      before = run(first, 2, 5);
      state = LoaderState::from_json(first.state().to_json());  // as a checkpoint keeps it
    }
    EXPECT_EQ(state.epoch, 2u);
    ASSERT_EQ(state.segments.size(), 1u);
    EXPECT_EQ(state.segments[0], (EpochSegment{1, 100}));
    Loader second(options(order));
    second.restore(state);
    const std::vector<Seen> after = run(second, 2);
    EXPECT_EQ(second.batches_in_epoch(), 7u);
    std::vector<Seen> joined = before;
    joined.insert(joined.end(), after.begin(), after.end());
    EXPECT_EQ(joined, uninterrupted) << to_string(order);
    // The next epoch is a whole one again.
    EXPECT_EQ(run(second, 3).size(), 12u);
  }
}

TEST_F(Resume, AFixedEchoFactorResumesBetweenTheEchoesOfABatch) {
  LoaderOptions o = options(Order::random);
  o.echo = EchoOptions::parse("3");
  Loader whole(o);
  const std::vector<Seen> uninterrupted = run(whole, 1);
  ASSERT_EQ(uninterrupted.size(), 36u);
  for (std::size_t stop : {7u, 8u, 9u}) {  // after a fresh batch, after its first echo, ...
    Loader first(o);
    const std::vector<Seen> before = run(first, 1, stop);
    Loader second(o);
    second.restore(first.state());
    std::vector<Seen> joined = before;
    for (const Seen& s : run(second, 1)) joined.push_back(s);
    EXPECT_EQ(joined, uninterrupted) << "stopped after " << stop << " deliveries";
  }
}

TEST_F(Resume, AnotherWorldSizeDealsEveryRemainingSampleOnce) {
  for (Order order : {Order::sequential, Order::random, Order::chunk}) {
    // Two ranks consume 3 batches of 20 each; rank 1's state describes the job.
    std::multiset<std::uint64_t> delivered;
    LoaderState state;
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
      Loader loader(options(order, {rank, 2}));
      for (const Seen& s : run(loader, 0, 3)) delivered.insert(s.indices.begin(), s.indices.end());
      state = loader.state();
    }
    EXPECT_EQ(state.segments, (std::vector<EpochSegment>{{2, 60}}));
    for (std::uint32_t world : {1u, 3u}) {
      std::multiset<std::uint64_t> all = delivered;
      for (std::uint32_t rank = 0; rank < world; ++rank) {
        Loader loader(options(order, {rank, world}));
        loader.restore(state);
        const std::vector<Seen> rest = run(loader, 0);
        EXPECT_EQ(rest.size(), 6u / world);  // 120 samples left, in batches of 20
        for (const Seen& s : rest) all.insert(s.indices.begin(), s.indices.end());
      }
      std::vector<std::uint64_t> expected(kSamples);
      for (std::uint64_t i = 0; i < kSamples; ++i) expected[i] = i;
      EXPECT_EQ(std::vector<std::uint64_t>(all.begin(), all.end()), expected)
          << to_string(order) << ", 2 -> " << world << " ranks";
    }
  }
}

TEST_F(Resume, AStateIsForItsOwnEpoch) {
  Loader first(options(Order::random));
  run(first, 4, 2);
  Loader second(options(Order::random));
  second.restore(first.state());
  EXPECT_EQ(run(second, 0).size(), 12u) << "another epoch starts whole and drops the state";
  EXPECT_EQ(run(second, 4).size(), 12u);
}

TEST_F(Resume, ForeignOrDamagedStatesAreRefused) {
  Loader loader(options(Order::random));
  run(loader, 0, 2);
  const LoaderState good = loader.state();
  auto refusal = [&](LoaderOptions o, const LoaderState& s) {
    try {
      Loader other(o);
      other.restore(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  LoaderOptions other_seed = options(Order::random);
  other_seed.sampling.seed = 4;
  EXPECT_THAT(refusal(other_seed, good), HasSubstr("seed=3 but this loader has seed=4"));
  EXPECT_THAT(refusal(options(Order::chunk), good), HasSubstr("order=random"));
  LoaderOptions other_batch = options(Order::random);
  other_batch.sampling.batch_size = 30;
  EXPECT_THAT(refusal(other_batch, good), HasSubstr("batch_size=20"));
  // Another file of the same size and shape, other pixels' labels: another fingerprint.
  const std::string other_file = dir_.file("other.h5");
  testing::write_dataset_with(
      other_file, kSamples, kShape, formats::WriterOptions{}, testing::pixel,
      [](std::uint64_t i) { return static_cast<std::int64_t>(i % 3); }, 2);
  LoaderOptions other = options(Order::random);
  other.source.path = other_file;
  EXPECT_THAT(refusal(other, good), HasSubstr("belongs to another dataset"));
  // Damaged JSON.
  const std::string json = good.to_json();
  EXPECT_THROW(LoaderState::from_json("{"), UsageError);
  EXPECT_THROW(LoaderState::from_json("[]"), UsageError);
  std::string no_seed = json;
  no_seed.replace(no_seed.find("\"seed\""), 6, "\"sede\"");
  EXPECT_THAT(
      [&] {
        try {
          LoaderState::from_json(no_seed);
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("no \"seed\""));
  EXPECT_EQ(LoaderState::from_json(json), good);
}

TEST_F(Resume, AStateWhoseNextSamplesDifferIsRefused) {
  Loader loader(options(Order::chunk));
  run(loader, 1, 3);
  const LoaderState good = loader.state();
  ASSERT_EQ(good.next_samples.size(), 16u);
  Loader same(options(Order::chunk));
  EXPECT_NO_THROW(same.restore(good)) << "the same file and settings resume";
  // What a changed sample order or changed file contents look like to the check: the state's
  // digest of the next samples is not what this loader would deliver.
  LoaderState moved = good;
  moved.next_samples =
      good.next_samples == std::string(16, '0') ? std::string(16, '1') : std::string(16, '0');
  Loader other(options(Order::chunk));
  try {
    other.restore(moved);
    ADD_FAILURE() << "a state with other next samples was restored";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("would resume with other samples"));
    EXPECT_THAT(e.what(), HasSubstr(good.next_samples));
  }
  // The digest follows the position: a state taken later digests other samples.
  run(loader, 1, 1);
  EXPECT_NE(loader.state().next_samples, good.next_samples);
  // A state written before the digest existed still restores.
  LoaderState old = good;
  old.next_samples.clear();
  std::string json = old.to_json();
  json.replace(json.find(",\"next_samples\":\"\""), std::string(",\"next_samples\":\"\"").size(),
               "");
  ASSERT_EQ(json.find("next_samples"), std::string::npos);
  Loader older(options(Order::chunk));
  EXPECT_NO_THROW(older.restore(LoaderState::from_json(json)));
}

}  // namespace
}  // namespace gpufeed::pipeline
