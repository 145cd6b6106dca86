#include "pipebench/report.hpp"

#include "gpufeed/pipeline/dtype.hpp"

namespace gpufeed::tools::pipebench {

namespace {

DatasetSummary summarize(const Loader& loader, const BenchDataset& data) {
  const formats::Dataset& file = loader.dataset();
  DatasetSummary d;
  d.path = data.path();
  d.synthetic = data.synthetic();
  d.samples = file.num_samples();
  d.shape = loader.sample_shape();
  d.chunk = file.samples_per_chunk();
  d.chunks = file.num_chunks();
  d.compression = file.compression();
  d.read_path = file.read_path_name();
  return d;
}

}  // namespace

BenchReport make_report(const Loader& loader, const BenchDataset& data, const BenchOptions& options,
                        const DeviceChoice& device, const RunResult& run) {
  BenchReport r;
  r.dataset = summarize(loader, data);
  r.options = options;
  r.plan = run_plan(options);
  r.device = device;
  r.workers = loader.workers();
  r.batches_per_epoch = loader.batches_per_epoch();
  r.run = run;
  r.peak_rss_bytes = peak_rss_bytes();
  r.facts = diagnosis::run_facts(loader, run.stats);
  r.facts.epochs = run.epochs;
  r.facts.steps = run.batches;
  if (run.training) {
    r.facts.training = true;
    r.facts.torch_threads = run.training->threads;
    r.facts.deterministic = run.training->deterministic;
  }
  return r;
}

double samples_per_s(const BenchReport& r) {
  return r.run.wall_s > 0 ? static_cast<double>(r.run.samples) / r.run.wall_s : 0.0;
}

std::optional<double> steady_samples_per_s(const BenchReport& r) {
  if (r.run.steady_samples == 0 || r.run.steady_s <= 0) return std::nullopt;
  return static_cast<double>(r.run.steady_samples) / r.run.steady_s;
}

double output_bytes_per_s(const BenchReport& r) {
  return samples_per_s(r) *
         static_cast<double>(r.dataset.shape.bytes() * dtype_size(r.options.loader.output.dtype));
}

double ms_per_item(const StageStats& s) {
  return s.items == 0 ? 0.0 : static_cast<double>(s.busy_ns) * 1e-6 / static_cast<double>(s.items);
}

}  // namespace gpufeed::tools::pipebench
