#pragma once
// The profiler's exceptions: one per concern. Recording and CUPTI collection never throw.
#include "gpufeed/base/errors.hpp"

namespace gpufeed::profiler {

/// A trace file that cannot be read at all (missing, not gzip/JSON, no events). Problems the
/// reader can work around become Timeline::warnings instead.
class TraceError : public FormatError {
 public:
  using FormatError::FormatError;
};

/// A report or trace that cannot be written (the message names the path and the reason).
class ReportError : public Error {
 public:
  using Error::Error;
};

}  // namespace gpufeed::profiler
