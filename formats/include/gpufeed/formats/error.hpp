#pragma once
// Exceptions of the formats module. Messages are written for the user: what went wrong,
// where (file, dataset, chunk or sample) and what to do about it.
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::formats {

/// A dataset file cannot be read or written as asked: missing, damaged, or of the wrong
/// shape or type. The message is one line a command-line tool can print as it is.
using FormatError = gpufeed::FormatError;

/// An operating-system call failed (open, pread, rename). Carries errno in the message.
class IoError : public FormatError {
 public:
  using FormatError::FormatError;
};

/// What to do about the operating-system error `error` (an errno value) met reading or writing
/// a file, as "; ..." to append to a message: a full disk, a quota, a file-size limit, a
/// device's I/O error, a read-only filesystem. Empty for errors without such advice.
std::string errno_advice(int error);

/// Throws IoError("<what>: <strerror(errno)><advice>"), with errno_advice(errno) when `advice`
/// is empty. Out of line so call sites stay small.
[[noreturn]] void throw_errno(const std::string& what, const std::string& advice = {});

}  // namespace gpufeed::formats
