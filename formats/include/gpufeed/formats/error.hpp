#pragma once
// Exceptions of the formats module. Messages are written for the user: what went wrong,
// where (file, dataset, chunk or sample) and what to do about it.
#include "gpufeed/base/errors.hpp"
#include "gpufeed/storage/error.hpp"

namespace gpufeed::formats {

/// A dataset file cannot be read or written as asked: missing, damaged, or of the wrong
/// shape or type. The message is one line a command-line tool can print as it is.
using FormatError = gpufeed::FormatError;

/// An operating-system call failed (open, pread, rename): storage's error, which the readers and
/// writers throw as it is.
using storage::IoError;

}  // namespace gpufeed::formats
