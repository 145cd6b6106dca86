#pragma once
// Exceptions of the formats module. Messages are written for the user: what went wrong,
// where (file, dataset, chunk or sample) and what to do about it.
#include <stdexcept>
#include <string>

namespace gpufeed::formats {

/// A dataset file cannot be read or written as asked: missing, damaged, or of the wrong
/// shape or type. The message is one line a command-line tool can print as it is.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An operating-system call failed (open, pread, rename). Carries errno in the message.
class IoError : public FormatError {
 public:
  using FormatError::FormatError;
};

/// Throws IoError("<what>: <strerror(errno)><advice>"). Out of line so call sites stay small.
[[noreturn]] void throw_errno(const std::string& what, const std::string& advice = {});

}  // namespace gpufeed::formats
