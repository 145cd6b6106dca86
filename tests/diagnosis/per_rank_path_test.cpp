// Where each rank of a job writes its outputs (--json, --trace, --report and Python's own).
#include <gtest/gtest.h>

#include "gpufeed/diagnosis/diagnosis.hpp"

namespace gpufeed::diagnosis {
namespace {

TEST(PerRankPath, TheRankGoesWhereItIsAskedForOrBeforeTheExtension) {
  EXPECT_EQ(per_rank_path("run.json", -1, 0), "run.json");
  EXPECT_EQ(per_rank_path("run.json", 0, 1), "run.json");
  EXPECT_EQ(per_rank_path("out/run.json", 3, 4), "out/run.rank3.json");
  EXPECT_EQ(per_rank_path("out.d/run", 1, 2), "out.d/run.rank1");
  EXPECT_EQ(per_rank_path("r{rank}/t{rank}.json", 2, 4), "r2/t2.json");
  EXPECT_EQ(per_rank_path("t{rank}.json", -1, 0), "t0.json");
}

}  // namespace
}  // namespace gpufeed::diagnosis
