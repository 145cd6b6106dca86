#pragma once
#include <stdexcept>

namespace gpufeed {

/// Options that cannot work together or values out of range (a command line maps this to
/// exit code 2). The message names the option and says what to change.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A failure while the pipeline runs (a damaged chunk, an I/O error), raised on the
/// consumer's thread at its next call, with the stage, file and sample it happened at.
class PipelineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpufeed
