#pragma once
// Scoped NVTX ranges in the `gpufeed` domain with registered strings. Compiled out entirely
// when GPUFEED_PROFILING is 0. Ranges are noexcept and cost nothing when no tool listens.
#ifndef GPUFEED_PROFILING
#define GPUFEED_PROFILING 1
#endif

#if GPUFEED_PROFILING
#include <nvtx3/nvtx3.hpp>
#endif

namespace gpufeed::profiler {

/// The NVTX domain every gpufeed range lives in.
struct Domain {
  static constexpr const char* name{"gpufeed"};
};

#if GPUFEED_PROFILING
using RangeName = nvtx3::registered_string_in<Domain>;
using ScopedRange = nvtx3::scoped_range_in<Domain>;
#define GPUFEED_DETAIL_CAT2(a, b) a##b
#define GPUFEED_DETAIL_CAT(a, b) GPUFEED_DETAIL_CAT2(a, b)
/// Opens a range named `literal` until the end of the enclosing scope.
#define GPUFEED_RANGE(literal)                                                          \
  static const ::gpufeed::profiler::RangeName GPUFEED_DETAIL_CAT(gpufeed_range_name_,   \
                                                                 __LINE__){literal};    \
  const ::gpufeed::profiler::ScopedRange GPUFEED_DETAIL_CAT(gpufeed_range_, __LINE__) { \
    GPUFEED_DETAIL_CAT(gpufeed_range_name_, __LINE__)                                   \
  }
#else
#define GPUFEED_RANGE(literal) static_cast<void>(0)
#endif

}  // namespace gpufeed::profiler
