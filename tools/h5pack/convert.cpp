// h5pack convert SRC OUT.h5: image folders, CIFAR-10 and MNIST files, npy arrays and synthetic
// data to a schema v1 file, in the raw or the jpeg layout.
#include <filesystem>
#include <regex>
#include <string>

#include "common/cli.hpp"
#include "common/synthetic.hpp"
#include "gpufeed/formats/pending_files.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "h5pack/array_sources.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/convert_report.hpp"
#include "h5pack/convert_settings.hpp"
#include "h5pack/npy_input.hpp"

namespace gpufeed::tools::h5pack {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string detect_kind(const std::string& source) {
  if (ends_with(source, ".npy")) return "npy";
  if (looks_like_synthetic_spec(source)) return "synthetic";
  std::error_code ec;
  if (std::filesystem::exists(source, ec)) {
    if (looks_like_cifar10(source)) return "cifar10";
    if (looks_like_mnist(source)) return "mnist";
    if (looks_like_image_folder(source)) return "imagefolder";
  }
  throw UsageError("cannot tell what '" + source +
                   "' is; give an image folder, CIFAR-10 .bin batches, MNIST idx files, a .npy "
                   "file or a synthetic spec N:HxWxC, or name it with --from");
}

std::string source_kind(const ConvertOptions& o) {
  return o.from == "auto" ? detect_kind(o.source) : o.from;
}

/// --store auto: jpeg for an image folder (raw when --size is given), raw for arrays.
std::string store_of(const ConvertOptions& o, const std::string& kind) {
  if (o.store != "auto") return o.store;
  return kind == "imagefolder" && o.size.empty() ? "jpeg" : "raw";
}

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

void check_store_options(const ConvertOptions& o, const std::string& kind,
                         const std::string& store) {
  if (store == "jpeg") {
    if (!o.size.empty()) {
      throw UsageError("--size applies to --store raw; use --max-side N to shrink JPEG images");
    }
    if (o.compression != "none" || o.chunk != 0) {
      throw UsageError(
          "--compression and --chunk apply to --store raw; the jpeg layout stores "
          "the encoded bytes as they are");
    }
    return;
  }
  if (o.quality != 0 || o.max_side != 0) {
    throw UsageError("--quality and --max-side apply to --store jpeg");
  }
  if (kind == "imagefolder" && o.size.empty()) {
    throw UsageError("--store raw of an image folder needs --size HxW: its images differ in size");
  }
  if (kind != "imagefolder" && !o.size.empty()) {
    throw UsageError("--size applies to image folders; " + kind + " images keep their size");
  }
}

ConvertSettings make_settings(const ConvertOptions& o) {
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

PackInput open_array(const ConvertOptions& o, const std::string& kind) {
  if (kind != "npy" && !o.labels.empty()) {
    throw UsageError("--labels applies to --from npy only; " + kind + " data has its own labels");
  }
  if (kind == "npy") {
    PackInput input = npy_input(o.source, o.labels);
    if (o.labels.empty()) {
      print_note(kProgram, "no --labels given: every label of " + o.output + " is 0");
    }
    return input;
  }
  if (kind == "cifar10") return cifar10_input(o.source, o.split);
  if (kind == "mnist") return mnist_input(o.source, o.split);
  if (o.classes == 0) throw UsageError("--classes must be at least 1");
  return synthetic_input(parse_synthetic_spec(o.source), o.seed, o.classes);
}

}  // namespace

CLI::App* add_convert_command(CLI::App& app, ConvertOptions& o) {
  CLI::App* cmd = app.add_subcommand("convert", "Pack images into a chunked HDF5 file");
  cmd->add_option(
         "SRC", o.source,
         "an image folder (one subfolder of JPEG, PNG or WebP files per class), CIFAR-10 binary "
         "batches, MNIST idx files, a uint8 .npy array [N,H,W,C], or N:HxWxC")
      ->required();
  cmd->add_option("OUT", o.output, "the HDF5 file to write (replaced atomically)")->required();
  cmd->add_option("--from", o.from, "what SRC is")
      ->check(CLI::IsMember({"auto", "npy", "synthetic", "imagefolder", "cifar10", "mnist"}));
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
  cmd->add_option("--seed", o.seed, "seed of the synthetic data");
  cmd->add_option("--classes", o.classes, "classes of the synthetic labels");
  cmd->add_flag("--skip-bad", o.skip_bad,
                "skip image files that cannot be read or decoded (and count them) instead of "
                "stopping at the first");
  return cmd;
}

int run_convert(const ConvertOptions& o) {
  for (const formats::StaleTemporary& stale : formats::remove_stale_temporaries(o.output)) {
    print_note(kProgram, "removed " + stale.path + " (" + megabytes(stale.bytes) +
                             "), left behind by an earlier conversion to " + o.output +
                             " that was killed");
  }
  const std::string kind = source_kind(o);
  const std::string store = store_of(o, kind);
  check_store_options(o, kind, store);
  const ConvertSettings settings = make_settings(o);
  if (kind == "imagefolder") {
    if (!o.labels.empty()) throw UsageError("--labels applies to --from npy only");
    const ImageFolder folder = scan_image_folder(o.source);
    return store == "jpeg" ? convert_folder_to_jpeg(folder, settings)
                           : convert_folder_to_raw(folder, settings);
  }
  const PackInput input = open_array(o, kind);
  return store == "jpeg" ? convert_array_to_jpeg(input, settings)
                         : convert_array_to_raw(input, settings);
}

}  // namespace gpufeed::tools::h5pack
