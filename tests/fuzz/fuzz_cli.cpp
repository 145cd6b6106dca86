// libFuzzer target: any bytes as a command line of h5pack or pipebench, one argument a line (or
// NUL-separated), the first being the program: "h5pack", anything else is pipebench. Only the
// parse step runs, as main() runs it, and then the checks each command makes of its option
// values before it starts (sizes, --compression, N:HxWxC, --echo, --inject-stall, the sweep's
// lists, ...); no command runs. A CLI11 parse error or a std::invalid_argument (UsageError,
// OptionError) is the expected answer to a bad command line; anything else (a crash, a sanitizer
// report, another exception, a hang) is a bug, and so is a value accepted that describes a
// dataset no reader would open.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/formats/synthetic.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/convert_settings.hpp"
#include "pipebench/command_line.hpp"

namespace {

namespace tools = gpufeed::tools;
namespace formats = gpufeed::formats;

std::vector<std::string> split_arguments(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n' || c == '\0') {
      args.emplace_back();
    } else {
      args.back() += c;
    }
  }
  return args;
}

/// What h5pack convert and pipebench --synthetic make of N:HxWxC: a dataset readers accept.
void check_synthetic(const std::string& text) {
  const formats::SyntheticSpec spec = formats::parse_synthetic_spec(text);
  namespace schema = formats::schema;
  if (spec.samples == 0 || spec.samples > schema::kMaxSamples ||
      spec.shape.bytes() > schema::kMaxSampleBytes) {
    std::abort();  // accepted, but no reader would open the file it makes
  }
}

void parse_h5pack(int argc, const char* const* argv) {
  using namespace tools::h5pack;
  CLI::App app{"h5pack", kProgram};
  CommandLine line;
  add_commands(app, line);
  app.parse(argc, argv);
  if (line.convert_command->parsed()) {
    const ConvertOptions& o = line.convert;
    (void)convert_settings(o);
    const bool synthetic =
        o.from == "synthetic" || (o.from == "auto" && formats::looks_like_synthetic_spec(o.source));
    if (synthetic) check_synthetic(o.source);
  } else if (line.info_command->parsed()) {
    (void)reader_options(line.info);
  } else {
    (void)reader_options(line.verify);
  }
}

void check_run_options(const tools::pipebench::BenchOptions& o) {
  using namespace tools::pipebench;
  reject_unsupported(o);
  check_options(o.loader);
  (void)run_plan(o);
  (void)training_options(o);
  if (!o.synthetic.empty()) check_synthetic(o.synthetic);
}

void parse_pipebench(int argc, const char* const* argv) {
  using namespace tools::pipebench;
  CLI::App app{"pipebench", kProgram};
  CommandLine line;
  add_commands(app, line);
  const std::vector<const char*> args = with_default_command(argc, argv);
  app.parse(static_cast<int>(args.size()), args.data());
  if (line.run_command->parsed()) {
    check_run_options(line.run);
  } else if (line.sweep_command->parsed()) {
    BenchOptions o = line.sweep;
    check_run_options(o);
    for (const SweepPoint& p : parse_grid(line.sweep_axes, SweepPoint::of(o.loader), 8).points()) {
      p.apply_to(o.loader);
      check_options(o.loader);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> args = split_arguments(data, size);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int argc = static_cast<int>(argv.size());
  try {
    if (args.front() == "h5pack") {
      parse_h5pack(argc, argv.data());
    } else {
      parse_pipebench(argc, argv.data());
    }
  } catch (const CLI::ParseError&) {
  } catch (const gpufeed::OptionError& e) {
    (void)e.render(gpufeed::tools::field_flag);  // as run_guarded() prints it
  } catch (const gpufeed::UsageError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
