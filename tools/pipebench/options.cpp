#include "pipebench/options.hpp"

#include <regex>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/sampler.hpp"

namespace gpufeed::tools::pipebench {

namespace {

void add_data_options(CLI::App& cmd, BenchOptions& o) {
  LoaderOptions& lo = o.loader;
  CLI::Option* data =
      cmd.add_option_function<std::vector<std::string>>(
             "--data",
             [&o](const std::vector<std::string>& paths) {
               // Several: shards read as one dataset, named by the first in messages.
               o.data = paths.size() == 1
                            ? paths[0]
                            : paths[0] + " (and " + std::to_string(paths.size() - 1) + " more)";
               o.loader.source.paths = paths.size() == 1 ? std::vector<std::string>{} : paths;
             },
             "the dataset to read: an HDF5 file, a directory of shards with its manifest, a "
             "glob, or several of these (read as one); local paths or s3:// / gs:// URLs")
          ->expected(1, -1);
  cmd.add_option("--synthetic", o.synthetic,
                 "generate N:HxWxC synthetic samples into a temporary file")
      ->excludes(data);
  cmd.add_option("--images", lo.source.images, "the uint8 image dataset in the file");
  cmd.add_option("--labels", lo.source.labels, "the label dataset (empty: none)");
  cmd.add_option_function<std::string>(
         "--layout", [&lo](const std::string& v) { lo.source.layout = formats::parse_layout(v); },
         "pixel order of the images")
      ->check(CLI::IsMember({"nhwc", "nchw"}));
  cmd.add_flag_function(
      "--no-index", [&lo](std::int64_t count) { lo.source.use_index = count == 0; },
      "ignore the file's chunk index (H5Dread_chunk path)");
}

/// The range of `field` (kLoaderFields) in the unit of its flag.
CLI::Range flag_range(std::string_view field) {
  const FieldRange r = flag_unit_range(field);
  return CLI::Range(r.low, r.high);
}

/// --workers / --prefetch: a count in the field's range, or auto.
AutoCount auto_count(std::string_view field, const std::string& text) {
  const std::optional<AutoCount> count = AutoCount::parse(text);
  if (!count || !field_takes(field, *count)) {
    throw CLI::ValidationError(field_flag(field), text + ": use " + range_text(field));
  }
  return *count;
}

/// A flag in MiB for a field in bytes (--memory-mb, --cache-mb).
void add_mib_option(CLI::App& cmd, std::string_view field, std::uint64_t& bytes,
                    const std::string& help) {
  const unsigned shift = flag_shift(field);
  cmd.add_option_function<std::uint64_t>(
         field_flag(field), [&bytes, shift](std::uint64_t mib) { bytes = mib << shift; }, help)
      ->check(flag_range(field));
}

void add_loader_options(CLI::App& cmd, BenchOptions& o, SweepAxes* axes) {
  LoaderOptions& lo = o.loader;
  cmd.add_option("--device", o.device, "auto, cpu, cuda or cuda:N");
  cmd.add_option("--batch", lo.sampling.batch_size, "samples per batch")
      ->check(flag_range("batch_size"));
  cmd.add_option("--seed", lo.sampling.seed, "seed of the sample order (and of synthetic data)")
      ->check(flag_range("seed"));
  if (axes != nullptr) {
    cmd.add_option("--workers", axes->workers,
                   "loader threads to try, e.g. 1,2,4,auto (0: the rank's share of the cores)");
    cmd.add_option("--prefetch", axes->prefetch, "prefetch depths to try, e.g. 2,4,auto");
    cmd.add_option("--echo", axes->echo, "echo settings to try, e.g. 1,2,auto");
    cmd.add_option("--order", axes->order, "sample orders to try, e.g. random,chunk");
    cmd.add_option("--cache-mb", axes->cache_mb, "chunk cache budgets to try in MiB, e.g. 64,512");
    cmd.add_option("--decode", axes->decode, "jpeg layout: decoders to try, e.g. cpu,gpu,auto");
    cmd.add_option("--csv", axes->csv, "write the table as CSV (default pipebench-sweep.csv)");
    return;
  }
  cmd.add_option_function<std::string>(
         "--workers",
         [&lo](const std::string& v) { lo.resources.workers = auto_count("workers", v); },
         "loader threads (0: the rank's share of the cores; auto: tuned while it runs, up to "
         "--cpu-budget)")
      ->type_name("N|auto");
  cmd.add_option_function<std::string>(
         "--prefetch",
         [&lo](const std::string& v) { lo.resources.prefetch = auto_count("prefetch", v); },
         "batches prepared ahead (auto: tuned while it runs, within --memory-mb)")
      ->type_name("N|auto");
  cmd.add_option("--cpu-budget", lo.resources.cpu_budget,
                 "--workers auto: at most this many (0: the rank's share of the cores)")
      ->check(flag_range("cpu_budget"));
  add_mib_option(cmd, "memory_bytes", lo.resources.memory_bytes,
                 "--prefetch auto: batch slots within this many MiB (0: 1024)");
  cmd.add_option_function<std::string>(
      "--decode", [&lo](const std::string& v) { lo.image.decode = parse_decode(v); },
      "jpeg layout: cpu, gpu (the GPU's JPEG engines) or auto (engines first, CPU for the rest)");
  cmd.add_option_function<std::string>(
         "--order", [&lo](const std::string& v) { lo.sampling.order = parse_order(v); },
         "sample order")
      ->check(CLI::IsMember(std::vector<std::string>(kOrderNames.begin(), kOrderNames.end())));
  add_mib_option(cmd, "cache_bytes", lo.storage.cache_bytes, "chunk cache budget in MiB");
  cmd.add_option_function<std::string>(
         "--read-requests",
         [&lo](const std::string& v) { lo.storage.read_requests = auto_count("read_requests", v); },
         "s3:// data: GETs in flight ahead of the reads (auto: from the read-ahead budget)")
      ->type_name("N|auto");
  cmd.add_option("--cache-dir", lo.storage.cache_dir,
                 "s3:// data: a local directory that keeps what was read for later epochs");
  add_mib_option(cmd, "cache_dir_bytes", lo.storage.cache_dir_bytes,
                 "--cache-dir budget in MiB (0: half the free space)");
  cmd.add_option_function<std::string>(
      "--echo", [&lo](const std::string& v) { lo.echo = EchoOptions::parse(v); },
      "deliver each batch N times, or auto[:CAP]: only when input is late");
}

void add_length_options(CLI::App& cmd, BenchOptions& o) {
  CLI::Option* epochs = cmd.add_option("--epochs", o.epochs, "epochs to run (default 3)")
                            ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--steps", o.steps, "batches to run, across epochs")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->excludes(epochs);
  cmd.add_option("--json", o.json, "write the results as JSON to this file");
  cmd.add_flag("--no-profile", o.no_profile,
               "run with the profiler's recorder off (no diagnosis; to measure its cost)");
  cmd.add_option("--progress", o.progress,
                 "auto (a live line on a terminal, else plain lines), line, plain or off")
      ->check(CLI::IsMember({"auto", "line", "plain", "off"}));
  cmd.add_option("--progress-every", o.progress_every,
                 "seconds between progress updates (default 0.5 on a terminal, 10 otherwise)")
      ->check(CLI::Range(0.0, 3600.0));
}

/// "224x224" into height and width.
void set_size(LoaderOptions& lo, const std::string& text) {
  static const std::regex size_pattern(R"(^([1-9][0-9]{0,3})x([1-9][0-9]{0,3})$)");
  std::smatch m;
  if (!std::regex_match(text, m, size_pattern)) {
    throw UsageError("--size " + text + ": expected HxW, e.g. 224x224");
  }
  lo.image.height = static_cast<std::uint32_t>(std::stoul(m[1].str()));
  lo.image.width = static_cast<std::uint32_t>(std::stoul(m[2].str()));
}

/// torchvision's geometric transforms as LoaderOptions::image.geometry (--crop's size is --size).
void add_geometry_options(CLI::App& cmd, LoaderOptions& lo) {
  Geometry& g = lo.image.geometry;
  cmd.add_option_function<std::string>(
      "--resize", [&g](const std::string& v) { pipeline::parse_resize(v, g); },
      "N (the shorter side, Resize(N)) or HxW, before the crop");
  cmd.add_option("--resize-max", g.resize_max, "Resize's max_size for the longer side")
      ->check(CLI::Range(0, 16384));
  cmd.add_option_function<std::string>(
         "--resize-filter",
         [&lo](const std::string& v) {
           if (v == "bilinear") lo.image.resize_filter = formats::ResizeFilter::bilinear;
           if (v == "bicubic") lo.image.resize_filter = formats::ResizeFilter::bicubic;
           if (v == "area") lo.image.resize_filter = formats::ResizeFilter::area;
         },
         "bilinear, bicubic or area (Pillow's, antialiased)")
      ->check(CLI::IsMember({"bilinear", "bicubic", "area"}));
  cmd.add_option_function<std::string>(
      "--crop", [&g](const std::string& v) { g.crop = pipeline::parse_crop(v); },
      "none, center, random or random-resized, to --size");
  cmd.add_option_function<std::string>(
      "--crop-scale",
      [&g](const std::string& v) {
        pipeline::parse_range("crop_scale", v, g.scale_min, g.scale_max);
      },
      "LOW,HIGH: random-resized area fraction (default 0.08,1)");
  cmd.add_option_function<std::string>(
      "--crop-ratio",
      [&g](const std::string& v) {
        pipeline::parse_range("crop_ratio", v, g.ratio_min, g.ratio_max);
      },
      "LOW,HIGH: random-resized aspect ratio (default 0.75,1.333)");
  cmd.add_option_function<std::string>(
      "--crop-padding", [&g](const std::string& v) { pipeline::parse_padding(v, g); },
      "N, H,V or L,T,R,B: random crop's zero padding");
  cmd.add_flag("--pad-if-needed", g.pad_if_needed, "random crop: pad images smaller than it");
  cmd.add_option("--hflip", g.hflip, "probability of a horizontal flip")
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--vflip", g.vflip, "probability of a vertical flip")->check(CLI::Range(0.0, 1.0));
}

void add_sample_options(CLI::App& cmd, BenchOptions& o) {
  LoaderOptions& lo = o.loader;
  cmd.add_option_function<std::string>(
      "--size", [&lo](const std::string& v) { set_size(lo, v); },
      "HxW: decode size of jpeg-layout files (default 224x224)");
  cmd.add_option_function<std::string>(
      "--augment", [&lo](const std::string& v) { lo.image.augment = parse_augment(v); },
      "none, flip, crop-flip or center");
  add_geometry_options(cmd, lo);
  cmd.add_option_function<std::string>(
      "--on-error", [&lo](const std::string& v) { lo.on_error = parse_on_error(v); },
      "fail or skip undecodable samples");
  cmd.add_option_function<std::string>(
      "--dtype", [&lo](const std::string& v) { lo.output.dtype = parse_dtype(v); },
      "float32, float16 or bfloat16 (CUDA device), or uint8 (not normalized)");
  cmd.add_option("--trace", o.trace, "write a Chrome trace (opens in Perfetto) to OUT.json");
  cmd.add_option("--report", o.report, "write a self-contained HTML report to OUT.html");
  cmd.add_option_function<std::string>(
      "--inject-stall",
      [&o](const std::string& v) {
        o.inject_stall = pipeline::StallInjection::parse(v, "--inject-stall");
      },
      "STAGE:MS@EVERY: sleep MS ms in STAGE every EVERY batches");
}

void add_training_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--model", o.model,
                 "training stage fed by the loader (default: cnn for the embedded dataset, "
                 "else none)")
      ->check(CLI::IsMember({"none", "mlp", "cnn", "resnet18"}));
  cmd.add_option("--optimizer", o.optimizer, "sgd (momentum 0.9) or adamw")
      ->check(CLI::IsMember({"sgd", "adamw"}));
  cmd.add_option("--lr", o.lr, "learning rate (default 0.01 for sgd, 0.001 for adamw)")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--eval", o.eval, "forward passes only, without gradients (eval mode)");
  cmd.add_option("--amp", o.amp, "autocast the forward pass: none, float16 (CUDA) or bfloat16")
      ->check(CLI::IsMember({"none", "float16", "bfloat16"}));
  cmd.add_flag("--channels-last", o.channels_last, "channels-last (NHWC) model weights");
  cmd.add_flag("--cudnn-benchmark", o.cudnn_benchmark, "let cuDNN time and pick algorithms");
  cmd.add_flag("--deterministic", o.deterministic, "deterministic algorithms only");
  cmd.add_option("--sync-every", o.sync_every,
                 "read the loss on the host every K steps (a device sync; 0: never)");
}

}  // namespace

void add_run_options(CLI::App& command, BenchOptions& options, SweepAxes* axes) {
  add_data_options(command, options);
  add_loader_options(command, options, axes);
  add_length_options(command, options);
  add_sample_options(command, options);
  add_training_options(command, options);
}

void reject_unsupported(const BenchOptions& o) {
  if (o.no_profile && (!o.trace.empty() || !o.report.empty())) {
    throw UsageError("--trace and --report need the profiler; leave out --no-profile");
  }
}

std::string size_text(const LoaderOptions& o) {
  return std::to_string(o.image.height) + "x" + std::to_string(o.image.width);
}

RunPlan run_plan(const BenchOptions& o) {
  RunPlan plan;
  plan.steps = o.steps;
  plan.epochs = o.epochs != 0 ? o.epochs : kDefaultEpochs;
  return plan;
}

bool embedded_default(const BenchOptions& o) {
  return o.data.empty() && o.synthetic.empty();
}

std::string model_name(const BenchOptions& o) {
  if (!o.model.empty()) return o.model;
  return embedded_default(o) ? "cnn" : "none";
}

TrainingOptions training_options(const BenchOptions& o) {
  TrainingOptions t;
  t.model = model_name(o);
  t.optimizer = o.optimizer;
  t.learning_rate = o.lr > 0 ? o.lr : (o.optimizer == "adamw" ? 0.001 : 0.01);
  t.eval = o.eval;
  t.amp = o.amp;
  t.channels_last = o.channels_last;
  t.cudnn_benchmark = o.cudnn_benchmark;
  t.deterministic = o.deterministic;
  t.sync_every = o.sync_every;
  return t;
}

}  // namespace gpufeed::tools::pipebench
