#include "common/cli.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/storage/mapped_regions.hpp"
#include "gpufeed/storage/pending_files.hpp"

namespace gpufeed::tools {

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out.empty() ? std::string("unknown error") : out;
}

namespace {

void print_line(std::string_view program, std::string_view kind, std::string_view message) {
  const std::string line =
      std::string(program) + ": " + std::string(kind) + ": " + one_line(message) + "\n";
  std::fflush(stdout);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void print_error(std::string_view program, std::string_view message) {
  print_line(program, "error", message);
}

namespace {

char g_program[64] = "gpufeed";
char g_then[160] = "";
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need lock-free atomics");

void write_text(const char* text) noexcept {
  std::size_t size = 0;
  while (text[size] != '\0') ++size;
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, size);
    if (n <= 0) return;
    text += n;
    size -= static_cast<std::size_t>(n);
  }
}

void report_removed(const char* path) noexcept {
  write_text(g_program);
  write_text(": removed the unfinished ");
  write_text(path);
  write_text("\n");
}

extern "C" void on_interrupt(int signal) {
  write_text("\n");
  write_text(g_program);
  write_text(signal == SIGINT ? ": interrupted (SIGINT)\n" : ": terminated (SIGTERM)\n");
  storage::remove_pending_files(report_removed);
  ::_exit(128 + signal);
}

extern "C" void on_input_fault(int signal, siginfo_t* info, void* /*context*/) {
  const char* path = info->si_code > 0 ? storage::mapped_file_at(info->si_addr) : nullptr;
  if (path == nullptr) {  // not a mapped input: the default action (a core dump)
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, nullptr);
    ::raise(signal);  // delivered when this handler returns
    return;
  }
  write_text(g_program);
  write_text(": error: cannot read ");
  write_text(path);
  write_text(
      ": the file was truncated, or its disk failed, while it was being read (SIGBUS); "
      "check the file and run again\n");
  storage::remove_pending_files();
  ::_exit(kExitFailure);
}

void handle_signals(void (*handler)(int)) noexcept {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

extern "C" void on_stop_request(int signal) {
  g_stop_signal.store(signal);
  handle_signals(on_interrupt);  // the next one ends the program
  write_text("\n");
  write_text(g_program);
  write_text(signal == SIGINT ? ": interrupted (SIGINT); " : ": terminated (SIGTERM); ");
  write_text(g_then);
  write_text("\n");
}

}  // namespace

void exit_on_interrupt(const char* program) {
  std::snprintf(g_program, sizeof g_program, "%s", program);
  handle_signals(on_interrupt);
}

void exit_on_input_fault(const char* program) {
  std::snprintf(g_program, sizeof g_program, "%s", program);
  struct sigaction action {};
  action.sa_sigaction = on_input_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

void fail_writes_past_size_limit() {
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGXFSZ, &action, nullptr);
}

void stop_on_interrupt(const char* program, const char* then) {
  std::snprintf(g_program, sizeof g_program, "%s", program);
  std::snprintf(g_then, sizeof g_then, "%s", then);
  handle_signals(on_stop_request);
}

int stop_signal() {
  return g_stop_signal.load();
}

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

void print_note(std::string_view program, std::string_view message) {
  print_line(program, "note", message);
}

bool stderr_is_tty() {
  return ::isatty(STDERR_FILENO) == 1;
}

std::string flag_spelling(const Setting& setting) {
  return field_flag(knob_name(setting.knob)) + " " + flag_value_text(setting);
}

int run_guarded(std::string_view program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const OptionError& e) {
    print_error(program, e.render(field_flag));
    return kExitUsage;
  } catch (const UsageError& e) {
    print_error(program, e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {  // a value the tool's own parsing refused
    print_error(program, e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error(program, "out of memory; use a smaller --batch, --prefetch or --cache-mb");
    return kExitFailure;
  } catch (const std::exception& e) {
    print_error(program, e.what());
    return kExitFailure;
  } catch (...) {
    print_error(program, "unexpected failure of an unknown kind; please report it");
    return kExitFailure;
  }
}

int run_cli(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body) {
  const std::string program = app.get_name();
  constexpr int kParsed = -1;
  const int parse_status = run_guarded(program, [&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
      print_error(program, std::string(e.what()) + "; run '" + program + " --help' for usage");
      return kExitUsage;
    }
    return kParsed;
  });
  if (parse_status != kParsed) return parse_status;
  return run_guarded(program, body);
}

}  // namespace gpufeed::tools
