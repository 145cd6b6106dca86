// h5pack's command line: the convert, info and verify commands, their options, and the checks
// of option values that need no file (--size, --compression). Parsing runs nothing.
#include <regex>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/schema.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/convert_settings.hpp"

namespace gpufeed::tools::h5pack {

namespace {

RawSettings parse_size(const std::string& text, formats::ResizeFilter filter) {
  std::smatch m;
  static const std::regex pattern(R"(^(\d{1,5})x(\d{1,5})$)");
  if (!std::regex_match(text, m, pattern)) {
    throw UsageError("--size " + text + " is not of the form HxW; write e.g. --size 224x224");
  }
  const unsigned long h = std::stoul(m[1].str());
  const unsigned long w = std::stoul(m[2].str());
  if (h == 0 || w == 0 || h > 65535 || w > 65535 ||
      std::uint64_t{h} * w * 3 > formats::schema::kMaxSampleBytes) {
    throw UsageError("--size " + text + ": H and W must be 1-65535 and an RGB image at most " +
                     "256 MiB");
  }
  return {static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(w), filter};
}

}  // namespace

void add_commands(CLI::App& app, CommandLine& line) {
  app.require_subcommand(1);
  line.convert_command = add_convert_command(app, line.convert);
  line.info_command = add_info_command(app, line.info);
  line.verify_command = add_verify_command(app, line.verify);
  line.manifest_command = app.add_subcommand(
      "manifest", "Write DIR/manifest.json listing the shards in DIR (each opened and counted)");
  line.manifest_command->add_option("DIR", line.manifest_dir, "a directory of shard files")
      ->required();
}

CLI::App* add_convert_command(CLI::App& app, ConvertOptions& o) {
  CLI::App* cmd = app.add_subcommand("convert", "Pack images into a chunked HDF5 file");
  cmd->add_option(
         "SRC", o.source,
         "an image folder (one subfolder of JPEG, PNG or WebP files per class), CIFAR-10 binary "
         "batches, MNIST idx files, a uint8 .npy array [N,H,W,C], N:HxWxC, or WebDataset tar "
         "shards (a directory or glob of .tar, local or s3://: .jpg/.png/.webp + .cls)")
      ->required();
  cmd->add_option("OUT", o.output, "the HDF5 file to write (replaced atomically)")->required();
  cmd->add_option("--from", o.from, "what SRC is")
      ->check(CLI::IsMember(
          {"auto", "npy", "synthetic", "imagefolder", "cifar10", "mnist", "webdataset"}));
  cmd->add_option("--store", o.store,
                  "raw pixels, or jpeg: each image's original bytes (JPEG, PNG, WebP; auto: "
                  "jpeg for an image folder without --size, raw otherwise)")
      ->check(CLI::IsMember({"auto", "raw", "jpeg"}));
  cmd->add_option("--size", o.size, "--store raw of an image folder: resize every image to HxW");
  cmd->add_option("--quality", o.quality,
                  "--store jpeg: re-encode at this quality (arrays are encoded at 90 by default)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--max-side", o.max_side,
                  "--store jpeg: re-encode images whose longer side exceeds N, shrunk to N");
  cmd->add_option("--filter", o.filter, "resize filter")
      ->check(CLI::IsMember({"bilinear", "area"}));
  cmd->add_option("--split", o.split, "cifar10 and mnist folders: train or test files")
      ->check(CLI::IsMember({"auto", "train", "test"}));
  cmd->add_option("--labels", o.labels, "integer .npy with one label per image (npy only)");
  cmd->add_option("--chunk", o.chunk, "--store raw: samples per chunk (0: about 1 MiB a chunk)");
  cmd->add_option("--compression", o.compression,
                  "--store raw: none, gzip[:L] (level 1-9, default 4) or lz4");
  cmd->add_option("--workers", o.workers,
                  "threads that decode, encode and compress (0: all cores)");
  cmd->add_option("--seed", o.seed,
                  "seed of the stored order (a random permutation) and of the synthetic data");
  cmd->add_flag("--keep-order", o.keep_order,
                "store the samples in the source's order instead of a random permutation (the "
                "stored order mixes batches read in chunk order)");
  cmd->add_option("--classes", o.classes, "classes of the synthetic labels");
  cmd->add_option("--shard-size", o.shard_size,
                  "write OUT as a directory of shards of about this size (4GB, 512MiB) and its "
                  "manifest.json; a run started again keeps the shards already whole");
  cmd->add_option("--part", o.part,
                  "I/N: pack only part I of N of the shards (independent processes or machines "
                  "writing to one OUT; the last to finish writes the manifest)");
  cmd->add_flag("--skip-bad", o.skip_bad,
                "skip image files that cannot be read or decoded (and count them) instead of "
                "stopping at the first");
  return cmd;
}

ConvertSettings convert_settings(const ConvertOptions& o) {
  ConvertSettings s;
  s.output = o.output;
  s.workers = o.workers;
  s.skip_bad = o.skip_bad;
  const formats::ResizeFilter filter =
      o.filter == "area" ? formats::ResizeFilter::area : formats::ResizeFilter::bilinear;
  s.jpeg = {o.quality, o.max_side, filter};
  if (!o.size.empty()) s.raw = parse_size(o.size, filter);
  s.compression = parse_compression(o.compression);
  s.chunk = o.chunk;
  return s;
}

bool default_dataset_options(const InspectOptions& o) {
  return o.images == "/images" && o.layout.empty();
}

void add_reader_options(CLI::App& command, InspectOptions& o) {
  command
      .add_option("FILE", o.file,
                  "an HDF5 dataset file, or a dataset of shards: a directory with its "
                  "manifest.json, a manifest, a glob of files (local or s3://)")
      ->required();
  command.add_option("--images", o.images, "the uint8 image dataset in the file");
  command.add_option("--labels", o.labels, "the label dataset (empty: none)");
  command.add_option("--layout", o.layout, "pixel order of the images")
      ->check(CLI::IsMember({"nhwc", "nchw"}));
  command.add_flag("--no-index", o.no_index, "ignore the file's chunk index");
}

formats::ReaderOptions reader_options(const InspectOptions& o) {
  formats::ReaderOptions options;
  options.images = o.images;
  options.labels = o.labels;
  if (!o.layout.empty()) options.layout = formats::parse_layout(o.layout);
  options.use_index = !o.no_index;
  return options;
}

formats::JpegReaderOptions jpeg_reader_options(const InspectOptions& o) {
  formats::JpegReaderOptions options;
  options.labels = o.labels;
  return options;
}

CLI::App* add_info_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand("info", "Describe a dataset file or a dataset of shards");
  add_reader_options(*cmd, o);
  cmd->add_flag("--json", o.json, "print a JSON object instead of text");
  return cmd;
}

CLI::App* add_verify_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "verify", "Read every chunk (raw) or decode every image (jpeg) and check every label");
  add_reader_options(*cmd, o);
  return cmd;
}

}  // namespace gpufeed::tools::h5pack
