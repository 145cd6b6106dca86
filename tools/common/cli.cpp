#include "common/cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "gpufeed/pipeline/errors.hpp"

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

void print_note(std::string_view program, std::string_view message) {
  print_line(program, "note", message);
}

bool stderr_is_tty() {
  return ::isatty(STDERR_FILENO) == 1;
}

std::string flag_of(std::string_view field) {
  if (field == "batch_size") return "--batch";
  if (field == "cache_bytes") return "--cache-mb";
  if (field == "use_index") return "--no-index";
  std::string flag = "--";
  for (const char c : field) flag += c == '_' ? '-' : c;
  return flag;
}

int run_guarded(std::string_view program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const OptionError& e) {
    print_error(program, e.render(flag_of));
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
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
