#include "pipebench/options.hpp"

#include <regex>
#include <string>

#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/pipeline/sampler.hpp"

namespace gpufeed::tools::pipebench {

namespace {

void add_data_options(CLI::App& cmd, BenchOptions& o) {
  CLI::Option* data = cmd.add_option("--data", o.data, "the HDF5 dataset to read");
  cmd.add_option("--synthetic", o.synthetic,
                 "generate N:HxWxC synthetic samples into a temporary file")
      ->excludes(data);
  cmd.add_option("--images", o.images, "the uint8 image dataset in the file");
  cmd.add_option("--labels", o.labels, "the label dataset (empty: none)");
  cmd.add_option("--layout", o.layout, "pixel order of the images")
      ->check(CLI::IsMember({"nhwc", "nchw"}));
  cmd.add_flag("--no-index", o.no_index, "ignore the file's chunk index (H5Dread_chunk path)");
}

void add_loader_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--device", o.device, "auto, cpu, cuda or cuda:N");
  cmd.add_option("--batch", o.batch, "samples per batch")->check(CLI::Range(1, 1 << 24));
  cmd.add_option("--workers", o.workers, "loader threads (0: all cores)")
      ->check(CLI::Range(0, 4096));
  cmd.add_option("--prefetch", o.prefetch, "batches prepared ahead")->check(CLI::Range(1, 4096));
  cmd.add_option("--order", o.order, "sample order")
      ->check(CLI::IsMember({"sequential", "random", "chunk"}));
  cmd.add_option("--seed", o.seed, "seed of the sample order (and of synthetic data)");
  cmd.add_option("--cache-mb", o.cache_mb, "chunk cache budget in MiB")
      ->check(CLI::Range(0, 1 << 20));
}

void add_length_options(CLI::App& cmd, BenchOptions& o) {
  CLI::Option* epochs = cmd.add_option("--epochs", o.epochs, "epochs to run (default 3)")
                            ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--steps", o.steps, "batches to run, across epochs")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->excludes(epochs);
  cmd.add_option("--json", o.json, "write the results as JSON to this file");
}

void add_later_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--echo", o.echo, "1, N or auto (not supported yet)");
  cmd.add_option("--size", o.size, "HxW (not supported yet)");
  cmd.add_option("--augment", o.augment, "(not supported yet)")
      ->check(CLI::IsMember({"none", "flip", "crop-flip"}));
  cmd.add_option("--on-error", o.on_error, "(not supported yet)")
      ->check(CLI::IsMember({"fail", "skip"}));
  cmd.add_option("--dtype", o.dtype, "(not supported yet)")
      ->check(CLI::IsMember({"float32", "float16", "bfloat16"}));
  cmd.add_option("--model", o.model, "(not supported yet)")
      ->check(CLI::IsMember({"none", "mlp", "cnn", "resnet18"}));
  cmd.add_option("--trace", o.trace, "OUT.json (not supported yet)");
  cmd.add_option("--report", o.report, "OUT.html (not supported yet)");
  cmd.add_option("--inject-stall", o.inject_stall, "STAGE:MS@EVERY (not supported yet)");
}

void reject_if_set(const char* option, const std::string& value, const std::string& default_value) {
  if (value == default_value) return;
  const std::string keep = default_value.empty() ? "leave it out" : "leave it at " + default_value;
  throw UsageError(std::string(option) + " is not supported yet (got " + value + "); " + keep);
}

}  // namespace

void add_run_options(CLI::App& command, BenchOptions& options) {
  add_data_options(command, options);
  add_loader_options(command, options);
  add_length_options(command, options);
  add_later_options(command, options);
}

void reject_unsupported(const BenchOptions& o) {
  static const std::regex echo_pattern(R"(^(auto|[1-9][0-9]*)$)");
  if (!std::regex_match(o.echo, echo_pattern)) {
    throw UsageError("--echo " + o.echo + " is not a repeat count; use 1, N >= 2 or auto");
  }
  reject_if_set("--echo", o.echo, "1");
  reject_if_set("--size", o.size, "");
  reject_if_set("--augment", o.augment, "none");
  reject_if_set("--on-error", o.on_error, "fail");
  reject_if_set("--dtype", o.dtype, "float32");
  reject_if_set("--model", o.model, "none");
  reject_if_set("--trace", o.trace, "");
  reject_if_set("--report", o.report, "");
  reject_if_set("--inject-stall", o.inject_stall, "");
}

LoaderOptions loader_options(const BenchOptions& o) {
  LoaderOptions lo;
  lo.images = o.images;
  lo.labels = o.labels;
  if (!o.layout.empty()) lo.layout = formats::parse_layout(o.layout);
  lo.batch_size = o.batch;
  lo.workers = o.workers;
  lo.prefetch = o.prefetch;
  lo.order = parse_order(o.order);
  lo.seed = o.seed;
  lo.cache_bytes = o.cache_mb << 20;
  lo.use_index = !o.no_index;
  return lo;
}

RunPlan run_plan(const BenchOptions& o) {
  RunPlan plan;
  plan.steps = o.steps;
  plan.epochs = o.epochs != 0 ? o.epochs : kDefaultEpochs;
  return plan;
}

}  // namespace gpufeed::tools::pipebench
