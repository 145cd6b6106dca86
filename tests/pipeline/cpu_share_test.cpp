// The ranks of a node share its cores: the share computed from the masks and LOCAL_WORLD_SIZE,
// and a loader that takes no more than its share with workers=0 and workers=auto.
#include "cpu_share.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline::detail {
namespace {

using testing::ScopedEnv;

unsigned mask_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return static_cast<unsigned>(CPU_COUNT(&set));
}

TEST(CpuShare, RanksWithTheLaunchersMaskDivideIt) {
  EXPECT_EQ(share_cores(2, 2, 2).cores, 1u);  // torchrun --nproc_per_node=2 on 2 cores
  EXPECT_EQ(share_cores(2, 2, 1).cores, 2u);
  EXPECT_EQ(share_cores(64, 64, 8).cores, 8u);
  EXPECT_EQ(share_cores(64, 64, 8).sharing_ranks, 8u);
  EXPECT_EQ(share_cores(3, 3, 2).cores, 1u);  // rounded down: the rest is the trainers'
}

TEST(CpuShare, NoLocalWorldSizeTakesTheWholeMask) {
  const CpuShare s = share_cores(16, 16, 1);
  EXPECT_EQ(s.cores, 16u);
  EXPECT_EQ(s.sharing_ranks, 1u);
  EXPECT_EQ(share_cores(4, 16, 1).cores, 4u);
}

TEST(CpuShare, AMaskAlreadyNarrowedIsNotDividedAgain) {
  EXPECT_EQ(share_cores(4, 8, 2).cores, 4u);   // each of 2 ranks pinned to half of 8 cores
  EXPECT_EQ(share_cores(8, 64, 8).cores, 8u);  // numactl per rank: 8 cores each
  EXPECT_EQ(share_cores(2, 64, 8).cores, 2u);  // pinned to fewer than an even split
  EXPECT_EQ(share_cores(1, 2, 2).cores, 1u);   // 2 ranks on 2 cores, one core each
  EXPECT_EQ(share_cores(4, 8, 2).sharing_ranks, 1u);
}

TEST(CpuShare, RanksPinnedSeveralToANumaNodeShareIt) {
  // 8 ranks, each bound to its socket's 32 of 64 cores: 4 ranks a socket.
  const CpuShare s = share_cores(32, 64, 8);
  EXPECT_EQ(s.sharing_ranks, 4u);
  EXPECT_EQ(s.cores, 8u);
}

TEST(CpuShare, MoreRanksThanCoresLeaveOneEach) {
  EXPECT_EQ(share_cores(2, 2, 8).cores, 1u);
  EXPECT_EQ(share_cores(1, 1, 1024).cores, 1u);
  EXPECT_EQ(share_cores(0, 0, 0).cores, 1u);  // nothing known: one core, one rank
}

TEST(CpuShare, AnUnknownLauncherMaskCountsAsTheRanksOwn) {
  EXPECT_EQ(share_cores(8, 0, 2).cores, 4u);
  EXPECT_EQ(share_cores(8, 0, 2).launcher_cores, 8u);
}

TEST(CpuShare, ThisProcessReadsItsMaskAndLocalWorldSize) {
  const unsigned mask = mask_cores();
  ASSERT_GT(mask, 0u);
  {
    const ScopedEnv unset("LOCAL_WORLD_SIZE", nullptr);
    const CpuShare s = this_process_share();
    EXPECT_EQ(s.mask_cores, mask);
    EXPECT_EQ(s.local_ranks, 1u);
    EXPECT_EQ(s.cores, mask);
  }
  {
    const ScopedEnv two("LOCAL_WORLD_SIZE", "2");
    const CpuShare s = this_process_share();
    EXPECT_EQ(s.local_ranks, 2u);
    EXPECT_GE(s.launcher_cores, s.mask_cores);
    // Under the launcher's own mask (ctest, a shell), the mask is halved.
    if (s.launcher_cores == mask) {
      EXPECT_EQ(s.cores, std::max(1u, mask / 2));
    }
  }
}

TEST(CpuShare, ABadLocalWorldSizeNamesTheVariable) {
  for (const char* bad : {"x", "-2", "0", "2x"}) {
    const ScopedEnv env("LOCAL_WORLD_SIZE", bad);
    try {
      (void)this_process_share();
      ADD_FAILURE() << "LOCAL_WORLD_SIZE=" << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("LOCAL_WORLD_SIZE"), std::string::npos) << e.what();
    }
  }
}

class SharedLoader : public ::testing::Test {
 protected:
  static constexpr formats::SampleShape kShape{16, 16, 3, formats::Layout::nhwc};

  void SetUp() override { testing::write_dataset(path_, 1024, kShape, 32, 4); }

  [[nodiscard]] LoaderOptions options(AutoCount workers) const {
    LoaderOptions o;
    o.source.path = path_;
    o.sampling.batch_size = 32;
    o.resources.workers = workers;
    o.sampling.shard = Shard{};
    return o;
  }

  gpufeed::testing::TempDir dir_;
  std::string path_ = dir_.file("share.h5");
  // More ranks on this node than any test machine has cores: a share of one core.
  ScopedEnv many_ranks_{"LOCAL_WORLD_SIZE", "1024"};
};

TEST_F(SharedLoader, TheDefaultWorkersAreTheRanksShare) {
  Loader loader(options(0));
  EXPECT_EQ(loader.stats().cpu_share, 1u);
  EXPECT_EQ(loader.stats().workers, 1u);
}

TEST_F(SharedLoader, TheTunerStaysWithinTheShare) {
  LoaderOptions o = options(AutoCount::automatic());
  o.resources.prefetch = 2;
  const testing::StallOverride stall(StallInjection{Stage::read, 3, 1});  // the consumer waits
  Loader loader(o);
  EXPECT_EQ(loader.stats().workers, 1u);
  for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
    for (Batch& b : loader.epoch(epoch)) (void)b;
  }
  const LoaderStats s = loader.stats();
  EXPECT_EQ(s.workers, 1u);
  for (const TuningChange& c : s.tuning) {
    if (c.knob == Knob::workers) {
      EXPECT_LE(c.to, 1u) << c.reason;
    }
  }
}

TEST_F(SharedLoader, CountsGivenAreTakenAsTheyAre) {
  EXPECT_EQ(Loader(options(3)).stats().workers, 3u);
  LoaderOptions o = options(AutoCount::automatic());
  o.resources.cpu_budget = 3;
  const testing::StallOverride stall(StallInjection{Stage::read, 3, 1});
  Loader loader(o);
  EXPECT_EQ(loader.stats().workers, 2u);  // starts at 2, within the budget given
  for (Batch& b : loader.epoch(0)) (void)b;
  EXPECT_LE(loader.stats().workers, 3u);
  EXPECT_EQ(loader.stats().cpu_share, 1u);
}

}  // namespace
}  // namespace gpufeed::pipeline::detail
