#pragma once
// The h5pack subcommands: their options, how they attach to the command line, and what runs.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"

namespace gpufeed::tools::h5pack {

inline constexpr const char* kProgram = "h5pack";

struct ConvertOptions {
  std::string source;
  std::string output;
  std::string from = "auto";
  std::string labels;
  std::string compression = "none";
  std::string store = "auto";
  std::string size;
  std::string filter = "bilinear";
  std::string split = "auto";
  bool skip_bad = false;
  int quality = 0;
  std::uint32_t max_side = 0;
  std::uint64_t chunk = 0;
  unsigned workers = 0;
  std::uint64_t seed = 0;
  std::uint32_t classes = 10;
  bool keep_order = false;  ///< false: samples stored in a random permutation of the source's
  std::string shard_size;   ///< "4GB": OUT is a directory of shards of about this size
  std::string part;         ///< "i/n": this process packs part i of n of the shards
};

/// Options of the commands that open an existing file (info, verify).
struct InspectOptions {
  std::string file;
  std::string images = "/images";
  std::string labels = "/labels";
  std::string layout;
  bool no_index = false;
  bool json = false;
};

/// h5pack's command line: its commands and the options they fill.
struct CommandLine {
  ConvertOptions convert;
  InspectOptions info;
  InspectOptions verify;
  CLI::App* convert_command = nullptr;
  CLI::App* info_command = nullptr;
  CLI::App* verify_command = nullptr;
  std::string manifest_dir;
  CLI::App* manifest_command = nullptr;
};

/// Adds convert, info and verify to `app` (one of them required), bound to `line`.
void add_commands(CLI::App& app, CommandLine& line);
CLI::App* add_convert_command(CLI::App& app, ConvertOptions& options);
CLI::App* add_info_command(CLI::App& app, InspectOptions& options);
CLI::App* add_verify_command(CLI::App& app, InspectOptions& options);

/// --images, --labels, --layout and --no-index, shared by info and verify.
void add_reader_options(CLI::App& command, InspectOptions& options);
formats::ReaderOptions reader_options(const InspectOptions& options);
/// The options a jpeg-layout file is read with: --labels.
formats::JpegReaderOptions jpeg_reader_options(const InspectOptions& options);
/// No --images and no --layout: the file may be of either schema v1 layout.
bool default_dataset_options(const InspectOptions& options);

int run_convert(const ConvertOptions& options);
int run_info(const InspectOptions& options);
int run_verify(const InspectOptions& options);
/// info of a jpeg-layout file.
int run_info_jpeg(const InspectOptions& options);
/// verify of one file of either layout (`file`, read with the options' reader settings), and
/// of a jpeg-layout one; `name` (a shard's "shard 3 of 8 (PATH)") names it in its lines.
int verify_file(const std::string& file, const InspectOptions& options, const std::string& name);
int verify_jpeg_file(const std::string& file, const InspectOptions& options,
                     const std::string& name);
/// info and verify of a dataset of shards (a directory, a manifest, a glob:
/// formats::names_shards): info lists the shards and describes them as one dataset; verify
/// checks each shard as verify_file() does, going on past a bad one, then opens them as one.
int run_info_shards(const InspectOptions& options);
int run_verify_shards(const InspectOptions& options);

}  // namespace gpufeed::tools::h5pack
