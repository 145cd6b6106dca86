#pragma once
// pipebench's profiling of one run: --no-profile, --trace and --report around a Recording.
#include <string>

#include "gpufeed/diagnosis/diagnosis.hpp"
#include "pipebench/language.hpp"
#include "pipebench/options.hpp"
#include "pipebench/report.hpp"

namespace gpufeed::tools::pipebench {

/// Checks up front that --trace and --report can be written (std::runtime_error otherwise),
/// then records the run (recorder, and CUPTI on a CUDA device) until finish().
class ProfileSession {
 public:
  ProfileSession(const BenchOptions& options, const Device& device);
  diagnosis::Diagnosis finish(const BenchReport& report);

 private:
  diagnosis::Recording recording_;
};

/// --trace (Chrome trace) and --report (HTML), each written atomically when asked for.
void write_profile_outputs(const BenchOptions& options, const diagnosis::Diagnosis& diagnosis);

}  // namespace gpufeed::tools::pipebench
