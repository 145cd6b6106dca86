#include "gpufeed/pipeline/sampler.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "random.hpp"

namespace gpufeed::pipeline {

std::string to_string(Order order) {
  return order_name(order);
}

Order parse_order(const std::string& text) {
  if (const auto order = find_order(text)) return *order;
  throw OptionError("order", "unknown {order} '" + text + "'; use " + order_choices());
}

namespace {

std::optional<std::uint64_t> env_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || text[0] == '-' || value > (1u << 30)) {
    throw UsageError(std::string("environment variable ") + name + "='" + text +
                     "' is not a valid number; unset it or fix the launcher");
  }
  return value;
}

}  // namespace

Shard Shard::from_environment() {
  const auto rank = env_number("RANK");
  const auto world = env_number("WORLD_SIZE");
  if (!rank && !world) return {};
  if (!rank || !world) {
    throw UsageError("RANK and WORLD_SIZE must be set together (torchrun sets both)");
  }
  if (*world == 0 || *rank >= *world) {
    throw UsageError("RANK=" + std::to_string(*rank) +
                     " is not below WORLD_SIZE=" + std::to_string(*world));
  }
  return {static_cast<std::uint32_t>(*rank), static_cast<std::uint32_t>(*world)};
}

Sampler::Sampler(std::uint64_t num_samples, std::uint64_t samples_per_chunk, SamplerOptions options)
    : Sampler(formats::ShardMap::single(num_samples, samples_per_chunk), options) {}

Sampler::Sampler(formats::ShardMap chunks, SamplerOptions options)
    : chunks_(std::move(chunks)), num_samples_(chunks_.num_samples()), options_(options) {
  const std::uint64_t world = options_.shard.world_size;
  if (world == 0 || options_.shard.rank >= world) {
    throw OptionError("shard", "{shard}: rank " + std::to_string(options_.shard.rank) +
                                   " is not below world size " + std::to_string(world));
  }
  if (options_.chunk_window == 0) {
    throw OptionError("chunk_window", "{chunk_window}=0: use at least 1 chunk");
  }
  per_rank_ = options_.drop_tail ? num_samples_ / world : (num_samples_ + world - 1) / world;
  if (per_rank_ == 0) {
    throw UsageError("the dataset has " + std::to_string(num_samples_) +
                     " samples, too few for world size " + std::to_string(world));
  }
}

std::vector<std::uint64_t> Sampler::global_order(std::uint64_t epoch) const {
  SplitMix64 rng(mix_seed(options_.seed, epoch));
  std::vector<std::uint64_t> order(num_samples_);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  if (options_.order == Order::random) {
    shuffle(order.begin(), order.end(), rng);
  } else if (options_.order == Order::chunk) {
    const std::uint64_t chunks = chunks_.num_chunks();
    std::vector<std::uint64_t> chunk_order(chunks);
    std::iota(chunk_order.begin(), chunk_order.end(), std::uint64_t{0});
    shuffle(chunk_order.begin(), chunk_order.end(), rng);
    // Window by window: the samples of W chunks, shuffled together. Each chunk is opened in
    // exactly one window, so it is read once per epoch when the cache holds a window.
    std::size_t out = 0;
    for (std::uint64_t w = 0; w < chunks; w += options_.chunk_window) {
      const std::size_t window_begin = out;
      const std::uint64_t w_end = std::min(chunks, w + options_.chunk_window);
      for (std::uint64_t c = w; c < w_end; ++c) {
        const std::uint64_t first = chunks_.chunk_first_sample(chunk_order[c]);
        const std::uint64_t last = first + chunks_.chunk_samples(chunk_order[c]);
        for (std::uint64_t s = first; s < last; ++s) order[out++] = s;
      }
      shuffle(order.begin() + static_cast<std::ptrdiff_t>(window_begin),
              order.begin() + static_cast<std::ptrdiff_t>(out), rng);
    }
  }
  return order;
}

std::uint64_t Sampler::share_size(std::uint64_t samples, std::uint64_t world) const {
  return options_.drop_tail ? samples / world : (samples + world - 1) / world;
}

std::vector<std::uint64_t> Sampler::deal(const std::vector<std::uint64_t>& order,
                                         std::uint64_t rank, std::uint64_t world) const {
  const std::uint64_t per = share_size(order.size(), world);
  std::vector<std::uint64_t> mine(per);
  // DistributedSampler: positions past the end wrap around (repeatedly if the order is tiny).
  for (std::uint64_t j = 0; j < per; ++j) {
    const std::uint64_t position =
        options_.order == Order::chunk ? rank * per + j : rank + j * world;
    mine[j] = order[position % order.size()];
  }
  return mine;
}

std::vector<std::uint64_t> Sampler::remaining(const std::vector<std::uint64_t>& order,
                                              const EpochSegment& segment) const {
  const std::uint64_t world = segment.world_size;
  const std::uint64_t per = share_size(order.size(), world);
  const std::uint64_t consumed = std::min(segment.samples_per_rank, per);
  std::vector<std::uint64_t> out;
  out.reserve(order.size());
  for (std::uint64_t p = 0; p < order.size(); ++p) {
    // Which rank's share position p is in, and where in it.
    const std::uint64_t rank = options_.order == Order::chunk ? (per ? p / per : world) : p % world;
    const std::uint64_t j = options_.order == Order::chunk ? (per ? p % per : 0) : p / world;
    if (rank < world && j < consumed) continue;
    out.push_back(order[p]);
  }
  return out;
}

std::vector<std::uint64_t> Sampler::unconsumed(std::uint64_t epoch,
                                               std::span<const EpochSegment> segments) const {
  std::vector<std::uint64_t> order = global_order(epoch);
  for (const EpochSegment& segment : segments) {
    if (segment.world_size == 0) throw UsageError("an epoch segment has world size 0");
    order = remaining(order, segment);
  }
  return order;
}

std::vector<std::uint64_t> Sampler::epoch_order(std::uint64_t epoch,
                                                std::span<const EpochSegment> closed,
                                                std::uint64_t skip) const {
  std::vector<std::uint64_t> order = unconsumed(epoch, closed);
  if (order.empty()) return {};
  std::vector<std::uint64_t> mine = deal(order, options_.shard.rank, options_.shard.world_size);
  mine.erase(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(std::min(skip, mine.size())));
  return mine;
}

}  // namespace gpufeed::pipeline
