// h5pack: convert datasets to chunked HDF5 files, inspect and verify them.
#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/shard_plan.hpp"

int main(int argc, char** argv) {
  using namespace gpufeed::tools;
  using namespace gpufeed::tools::h5pack;
  exit_on_interrupt(kProgram);
  exit_on_input_fault(kProgram);
  fail_writes_past_size_limit();
  CLI::App app{"Convert datasets to chunked HDF5 files, inspect and verify them", kProgram};
  CommandLine line;
  add_commands(app, line);
  return run_cli(app, argc, argv, [&] {
    if (line.convert_command->parsed()) return run_convert(line.convert);
    if (line.info_command->parsed()) return run_info(line.info);
    if (line.manifest_command->parsed()) return run_manifest(line.manifest_dir);
    return run_verify(line.verify);
  });
}
