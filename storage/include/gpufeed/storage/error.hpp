#pragma once
// Errors of reading and writing bytes: an operating-system call or an object-store request that
// failed. Messages are written for the user: what went wrong, where (file, object) and what to
// do about it.
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::storage {

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

}  // namespace gpufeed::storage
