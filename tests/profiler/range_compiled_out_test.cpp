// GPUFEED_PROFILING=0 removes the ranges from the code that includes range.hpp.
#define GPUFEED_PROFILING 0
#include <gtest/gtest.h>

#include "gpufeed/profiler/range.hpp"

namespace gpufeed::profiler {
namespace {

int side_effects = 0;
int batch() {
  return ++side_effects;
}

TEST(ScopedRange, CompiledOutRecordsNothingAndEvaluatesNothing) {
  Recorder::global().set_enabled(true);
  Recorder::global().clear();
  {
    GPUFEED_RANGE("step");
    GPUFEED_RANGE_ARG("decode", batch());
  }
  EXPECT_TRUE(Recorder::global().snapshot().events.empty());
  EXPECT_EQ(side_effects, 0);
}

}  // namespace
}  // namespace gpufeed::profiler
