#include "pipebench/report.hpp"

namespace gpufeed::tools::pipebench {

namespace {

DatasetSummary summarize(const formats::DatasetReader& reader, const BenchDataset& data) {
  DatasetSummary d;
  d.path = data.path();
  d.synthetic = data.synthetic();
  d.samples = reader.num_samples();
  d.shape = reader.sample_shape();
  d.chunk = reader.samples_per_chunk();
  d.chunks = reader.num_chunks();
  d.compression = reader.compression();
  d.read_path = formats::to_string(reader.read_path());
  return d;
}

DatasetSummary summarize(const Loader& loader, const BenchDataset& data) {
  const formats::JpegDatasetReader* jpeg = loader.jpeg_dataset();
  if (jpeg == nullptr) return summarize(loader.dataset(), data);
  DatasetSummary d;
  d.path = data.path();
  d.synthetic = data.synthetic();
  d.samples = jpeg->num_samples();
  d.shape = loader.sample_shape();
  d.chunk = 1;
  d.chunks = jpeg->num_samples();
  d.compression = "jpeg";
  d.read_path = "jpeg " + std::string(jpeg->read_path() == formats::JpegReadPath::contiguous
                                          ? "contiguous (pread)"
                                          : "hyperslab");
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
  return samples_per_s(r) * static_cast<double>(r.dataset.shape.bytes() * sizeof(float));
}

double input_wait_share(const BenchReport& r) {
  if (r.run.wall_s <= 0) return 0.0;
  const double wait_s = static_cast<double>(r.run.stats[Stage::wait].busy_ns) * 1e-9;
  return wait_s / r.run.wall_s;
}

RunFacts run_facts(const BenchReport& r) {
  RunFacts f;
  f.stats = r.run.stats;
  f.workers = r.workers;
  f.prefetch = r.run.stats.prefetch;
  f.echo = EchoOptions::parse(r.options.echo);
  f.cuda = r.device.used != "cpu";
  f.sample = r.dataset.shape;
  f.batch_size = r.options.batch;
  f.samples_per_chunk = r.dataset.chunk;
  f.chunks = r.dataset.chunks;
  f.epochs = r.run.epochs;
  f.steps = r.run.batches;
  f.seed = r.options.seed;
  f.order = r.options.order;
  f.cache_bytes = r.options.cache_mb << 20;
  f.augment = r.options.augment;
  if (const Shard shard = Shard::from_environment(); shard.world_size > 1) {
    f.rank = static_cast<std::int32_t>(shard.rank);  // the loader's shard under torchrun
    f.world_size = static_cast<std::int32_t>(shard.world_size);
  }
  f.training = r.run.training.has_value();
  if (f.training) {
    f.torch_threads = r.run.training->threads;
    f.deterministic = r.run.training->deterministic;
  }
  return f;
}

double ms_per_item(const StageStats& s) {
  return s.items == 0 ? 0.0 : static_cast<double>(s.busy_ns) * 1e-6 / static_cast<double>(s.items);
}

}  // namespace gpufeed::tools::pipebench
