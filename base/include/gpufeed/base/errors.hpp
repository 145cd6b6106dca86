#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpufeed {

/// The root of every error the library throws (besides std::bad_alloc): the message is one
/// line that says what went wrong, where (file, dataset, chunk or sample) and what to do. The
/// Python package raises the same tree: gpufeed.Error > FormatError, UsageError,
/// PipelineError.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options that cannot work together, values out of range, or a call the API does not allow
/// (a command line maps this to exit code 2). The message names the option and says what to
/// change.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A bad value of a LoaderOptions field. The message names options as placeholders, `{field}`
/// for a LoaderOptions field (`{batch_size}`, `{size}` for height x width): what() spells them
/// as the fields are named, and each front end renders its own names with render() (pipebench
/// its flags, `--batch`; Python its keywords), so no library message speaks one front end's
/// language.
class OptionError : public UsageError {
 public:
  /// Maps a field name (without braces) to the name a front end shows.
  using Naming = std::function<std::string(std::string_view field)>;

  /// `field`: the option at fault; `message`: the text with `{field}` placeholders.
  OptionError(std::string field, std::string message);

  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& message_template() const noexcept { return template_; }
  /// The message with every `{field}` replaced by `name(field)`.
  [[nodiscard]] std::string render(const Naming& name) const;

 private:
  std::string field_;
  std::string template_;
};

/// `text` with every `{field}` placeholder replaced by `name(field)`; braces that do not hold
/// the name of a LoaderOptions field (or `size`) stay as they are.
std::string render_option_names(std::string_view text, const OptionError::Naming& name);

/// A file cannot be read or written as asked: missing, damaged, or of the wrong shape or type
/// (formats::FormatError; formats::IoError for a failed system call).
class FormatError : public Error {
 public:
  using Error::Error;
};

/// A failure while the pipeline runs (a damaged chunk, an I/O error), raised on the
/// consumer's thread at its next call, with the stage, file and sample it happened at.
class PipelineError : public Error {
 public:
  using Error::Error;
};

}  // namespace gpufeed
