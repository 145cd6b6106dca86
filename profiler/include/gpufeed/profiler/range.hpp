#pragma once
// Scoped ranges: an NVTX3 range in the `gpufeed` domain with a registered string, and the same
// range recorded by the in-process Recorder. GPUFEED_PROFILING=0 compiles the macros out.
#ifndef GPUFEED_PROFILING
#define GPUFEED_PROFILING 1
#endif

#include <cstdint>

#include <nvtx3/nvtx3.hpp>

#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range_event.hpp"
#include "gpufeed/profiler/recorder.hpp"

namespace gpufeed::profiler {

/// The NVTX domain every gpufeed range lives in.
struct Domain {
  static constexpr const char* name{"gpufeed"};
};

using RangeName = nvtx3::registered_string_in<Domain>;

/// One call site's name, registered once with NVTX and with the Recorder. Construct it as a
/// function-local static (GPUFEED_RANGE does); registration takes a lock, ranges do not.
class RangeSite {
 public:
  explicit RangeSite(const char* name)
      : nvtx_name_{name}, id_{Recorder::global().register_name(name)} {}
  [[nodiscard]] const RangeName& nvtx_name() const noexcept { return nvtx_name_; }
  [[nodiscard]] NameId id() const noexcept { return id_; }

 private:
  RangeName nvtx_name_;
  NameId id_;
};

/// Records [construction, destruction) into the Recorder only (no NVTX). noexcept, stack-only.
class RecorderRange {
 public:
  explicit RecorderRange(NameId name, std::int64_t arg = kNoArg) noexcept
      : name_{name}, arg_{arg}, begin_ns_{detail::recorder_enabled() ? now_ns() : kOff} {}
  ~RecorderRange() {
    if (begin_ns_ != kOff) record_range(name_, begin_ns_, now_ns(), arg_);
  }
  RecorderRange(const RecorderRange&) = delete;
  RecorderRange& operator=(const RecorderRange&) = delete;

 private:
  static constexpr std::int64_t kOff = -1;
  NameId name_;
  std::int64_t arg_;
  std::int64_t begin_ns_;
};

/// An NVTX range plus a recorder range for one call site, for the enclosing scope.
class ScopedRange {
 public:
  explicit ScopedRange(const RangeSite& site, std::int64_t arg = kNoArg) noexcept
      : nvtx_{site.nvtx_name()}, recorded_{site.id(), arg} {}
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  nvtx3::scoped_range_in<Domain> nvtx_;
  RecorderRange recorded_;  // destroyed first: the recorded end precedes the NVTX pop
};

}  // namespace gpufeed::profiler

#define GPUFEED_DETAIL_CAT2(a, b) a##b
#define GPUFEED_DETAIL_CAT(a, b) GPUFEED_DETAIL_CAT2(a, b)

#if GPUFEED_PROFILING
/// Opens a range named `literal` (a stage name such as "read") until the end of the scope.
#define GPUFEED_RANGE(literal) GPUFEED_RANGE_ARG(literal, ::gpufeed::profiler::kNoArg)
/// Same, carrying an integer argument (e.g. the batch index) into the recorder.
#define GPUFEED_RANGE_ARG(literal, arg)                                                 \
  static const ::gpufeed::profiler::RangeSite GPUFEED_DETAIL_CAT(gpufeed_range_site_,   \
                                                                 __LINE__){literal};    \
  const ::gpufeed::profiler::ScopedRange GPUFEED_DETAIL_CAT(gpufeed_range_, __LINE__) { \
    GPUFEED_DETAIL_CAT(gpufeed_range_site_, __LINE__), static_cast<std::int64_t>(arg)   \
  }
#else
#define GPUFEED_RANGE(literal) static_cast<void>(0)
#define GPUFEED_RANGE_ARG(literal, arg) static_cast<void>(sizeof(arg))
#endif
