// h5pack: convert datasets to chunked HDF5 files, inspect and verify them.
#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "h5pack/commands.hpp"

int main(int argc, char** argv) {
  using namespace gpufeed::tools;
  using namespace gpufeed::tools::h5pack;
  exit_on_interrupt(kProgram);
  CLI::App app{"Convert datasets to chunked HDF5 files, inspect and verify them", kProgram};
  app.require_subcommand(1);
  ConvertOptions convert;
  InspectOptions info;
  InspectOptions verify;
  const CLI::App* convert_cmd = add_convert_command(app, convert);
  const CLI::App* info_cmd = add_info_command(app, info);
  add_verify_command(app, verify);
  return run_cli(app, argc, argv, [&] {
    if (convert_cmd->parsed()) return run_convert(convert);
    if (info_cmd->parsed()) return run_info(info);
    return run_verify(verify);
  });
}
