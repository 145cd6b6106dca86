#pragma once
// How the tools fail: one line on stderr, "<program>: error: <message>", and an exit code
// (DESIGN, "Command lines": 0 success, 1 run-time failure, 2 usage error).
#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// The message on one line: line breaks become "; ", trailing blanks are dropped.
std::string one_line(std::string_view text);

/// "<program>: error: <message>" on stderr, as one line.
void print_error(std::string_view program, std::string_view message);
/// "<program>: note: <message>" on stderr, as one line.
void print_note(std::string_view program, std::string_view message);

/// SIGINT and SIGTERM end the program at once, the way a user expects of a converter: the files
/// its writers have not committed are removed (storage::PendingFile), "<program>: interrupted
/// (SIGINT)" and each removed file are printed, and the exit code is 128 + the signal (130,
/// 143). An output that existed before the run is left as it was.
void exit_on_interrupt(const char* program);

/// A read of a mapped input file that fails (SIGBUS in a storage::MappedRegion: the file was
/// truncated after it was mapped, or its disk failed) ends the program with one line,
/// "<program>: error: cannot read <file>: ...", and exit code 1, removing the files its writers
/// have not committed (storage::PendingFile). Any other SIGBUS keeps its default action.
void exit_on_input_fault(const char* program);

/// Writes past the file-size limit (ulimit -f) fail with EFBIG and are reported like any other
/// write error (one line, temporary files removed), instead of SIGXFSZ ending the program and
/// leaving its temporary files behind.
void fail_writes_past_size_limit();

/// SIGINT and SIGTERM ask the program to finish early instead of ending it: stop_signal() turns
/// non-zero and "<program>: interrupted (SIGINT); <then>" is printed. A second signal ends the
/// program at once, as with exit_on_interrupt().
void stop_on_interrupt(const char* program, const char* then);
/// The signal that asked the program to stop (SIGINT, SIGTERM), 0 while none has.
int stop_signal();
/// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

/// True when stderr is a terminal (progress bars are drawn only then).
bool stderr_is_tty();

/// `text` as a whole number in [low, high] (decimal digits only), or nullopt.
template <typename T>
std::optional<T> whole_number(std::string_view text, T low, T high) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < low || value > high) {
    return std::nullopt;
  }
  return value;
}

/// A loader setting as the tools take it: "--workers 8", "--order chunk", "--cache-mb 1024".
std::string flag_spelling(const Setting& setting);

/// Runs `body` and maps every exception to one error line and an exit code:
/// gpufeed::UsageError or std::invalid_argument -> 2, any other failure -> 1.
/// gpufeed::OptionError messages name the tools' flags (field_flag(), common/flags.hpp).
int run_guarded(std::string_view program, const std::function<int()>& body);

/// Parses the command line with `app` (usage errors -> one line, exit 2; --help -> help on
/// stdout, exit 0), then runs `body` through run_guarded().
int run_cli(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body);

}  // namespace gpufeed::tools
