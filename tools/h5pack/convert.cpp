// h5pack convert SRC OUT.h5: npy arrays and synthetic data to a schema v1 file.
#include <cstdio>
#include <string>

#include "common/cli.hpp"
#include "common/pack_file.hpp"
#include "common/progress.hpp"
#include "common/synthetic.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/compression.hpp"
#include "h5pack/npy_input.hpp"

namespace gpufeed::tools::h5pack {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void reject_unsupported(const ConvertOptions& o) {
  if (o.from == "imagefolder" || o.from == "cifar10" || o.from == "mnist") {
    throw UsageError("--from " + o.from + " is not supported yet; convert to a uint8 .npy array " +
                     "[N,H,W,C] and use --from npy");
  }
  if (o.store != "raw") throw UsageError("--store is not supported yet (got " + o.store + ")");
  if (!o.size.empty()) throw UsageError("--size is not supported yet; resize before packing");
  if (o.skip_bad) throw UsageError("--skip-bad is not supported yet");
}

std::string source_kind(const ConvertOptions& o) {
  if (o.from != "auto") return o.from;
  if (ends_with(o.source, ".npy")) return "npy";
  if (looks_like_synthetic_spec(o.source)) return "synthetic";
  throw UsageError("cannot tell what '" + o.source +
                   "' is; give a .npy file, a synthetic spec N:HxWxC, or --from npy|synthetic");
}

PackInput open_input(const ConvertOptions& o) {
  const std::string kind = source_kind(o);
  if (kind == "npy") {
    PackInput input = npy_input(o.source, o.labels);
    if (o.labels.empty()) {
      print_note(kProgram, "no --labels given: every label of " + o.output + " is 0");
    }
    return input;
  }
  if (!o.labels.empty()) {
    throw UsageError("--labels applies to --from npy only; synthetic data makes its own labels");
  }
  if (o.classes == 0) throw UsageError("--classes must be at least 1");
  return synthetic_input(parse_synthetic_spec(o.source), o.seed, o.classes);
}

std::string megabytes(std::uint64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buffer;
}

void print_summary(const std::string& path, const PackResult& r, const Compression& c) {
  const double ratio = r.file_bytes == 0
                           ? 0.0
                           : static_cast<double>(r.raw_bytes) / static_cast<double>(r.file_bytes);
  char ratio_text[32];
  std::snprintf(ratio_text, sizeof ratio_text, "%.2f", ratio);
  std::printf(
      "wrote %s: %llu samples %ux%ux%u, %llu per chunk, %llu chunks, %s, %s (ratio %s), %s\n",
      path.c_str(), static_cast<unsigned long long>(r.samples), r.shape.height, r.shape.width,
      r.shape.channels, static_cast<unsigned long long>(r.samples_per_chunk),
      static_cast<unsigned long long>(r.chunks), c.to_string().c_str(),
      megabytes(r.file_bytes).c_str(), ratio_text, format_duration(r.seconds).c_str());
}

}  // namespace

CLI::App* add_convert_command(CLI::App& app, ConvertOptions& o) {
  CLI::App* cmd = app.add_subcommand("convert", "Pack images into a chunked HDF5 file");
  cmd->add_option("SRC", o.source, "a uint8 .npy array [N,H,W,C], or N:HxWxC for synthetic data")
      ->required();
  cmd->add_option("OUT", o.output, "the HDF5 file to write (replaced atomically)")->required();
  cmd->add_option("--from", o.from, "what SRC is")
      ->check(CLI::IsMember({"auto", "npy", "synthetic", "imagefolder", "cifar10", "mnist"}));
  cmd->add_option("--labels", o.labels, "integer .npy with one label per image (npy only)");
  cmd->add_option("--chunk", o.chunk, "samples per chunk (0: about 1 MiB a chunk)");
  cmd->add_option("--compression", o.compression, "none, gzip[:L] (level 1-9, default 4) or lz4");
  cmd->add_option("--workers", o.workers, "threads that fill and compress chunks (0: all cores)");
  cmd->add_option("--seed", o.seed, "seed of the synthetic data");
  cmd->add_option("--classes", o.classes, "classes of the synthetic labels");
  cmd->add_option("--store", o.store, "raw (jpeg is not supported yet)")
      ->check(CLI::IsMember({"raw", "jpeg"}));
  cmd->add_option("--size", o.size, "resize to HxW (not supported yet)");
  cmd->add_flag("--skip-bad", o.skip_bad, "skip images that fail to decode (not supported yet)");
  return cmd;
}

int run_convert(const ConvertOptions& o) {
  reject_unsupported(o);
  const Compression compression = parse_compression(o.compression);
  const PackInput input = open_input(o);
  PackSettings settings;
  settings.writer.samples_per_chunk = o.chunk;
  settings.writer.gzip_level = compression.gzip_level;
  settings.threads = o.workers;
  ProgressBar bar("packing", input.samples, input.shape.bytes());
  const PackResult result =
      pack_file(o.output, input, settings, [&bar](std::uint64_t done) { bar.update(done); });
  bar.finish();
  print_summary(o.output, result, compression);
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
