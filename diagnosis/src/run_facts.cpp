#include "gpufeed/diagnosis/run_facts.hpp"

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::diagnosis {

RunFacts run_facts(const Loader& loader, const LoaderStats& stats) {
  const LoaderOptions& o = loader.options();
  RunFacts f;
  f.stats = stats;
  f.workers = loader.workers();
  f.prefetch = stats.prefetch;
  f.echo = o.echo;
  f.cuda = o.output.device.is_cuda();  // the device the loader resolved
  f.sample = loader.sample_shape();
  f.batch_size = o.sampling.batch_size;
  f.samples_per_chunk = loader.dataset().samples_per_chunk();
  f.chunks = loader.dataset().num_chunks();
  f.encoded = loader.jpeg_dataset() != nullptr;
  f.seed = o.sampling.seed;
  f.order = o.sampling.order;
  f.cache_bytes = o.storage.cache_bytes;
  f.augment = o.image.augment;
  f.label_mix = loader.label_mix();
  if (const Shard shard = o.sampling.shard.value_or(Shard::from_environment());
      shard.world_size > 1) {
    f.rank = static_cast<std::int32_t>(shard.rank);
    f.world_size = static_cast<std::int32_t>(shard.world_size);
  }
  return f;
}

std::optional<double> cache_hit_rate(const LoaderStats& s) {
  const std::uint64_t lookups = s.cache_hits + s.cache_misses;
  if (lookups == 0) return std::nullopt;
  return static_cast<double>(s.cache_hits) / static_cast<double>(lookups);
}

double input_wait_share(const LoaderStats& s) {
  return s.busy_fraction(Stage::wait);
}

}  // namespace gpufeed::diagnosis
