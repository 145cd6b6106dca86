#pragma once
// The loader options the pipeline's tests share, and what their bad-sample tests check.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::testing {

/// How the loader tests read a jpeg-layout file: batches of 8 from 2 workers in random order
/// drawn from `seed`, every image decoded to `height` x `width`, the whole file (no shard).
inline LoaderOptions jpeg_loader_options(const std::string& path, std::uint64_t seed,
                                         std::uint32_t height, std::uint32_t width) {
  LoaderOptions o;
  o.source.path = path;
  o.sampling.batch_size = 8;
  o.resources.workers = 2;
  o.sampling.order = Order::random;
  o.sampling.seed = seed;
  o.image.height = height;
  o.image.width = width;
  o.sampling.shard = Shard{};
  return o;
}

/// A small, reproducible loader: 2 workers, prefetch 2, random order with `seed`, one rank
/// (whatever the environment says).
inline LoaderOptions random_order_options(const std::string& path, std::uint32_t batch_size,
                                          std::uint64_t seed) {
  LoaderOptions o;
  o.source.path = path;
  o.sampling.batch_size = batch_size;
  o.resources.workers = 2;
  o.resources.prefetch = 2;
  o.sampling.order = Order::random;
  o.sampling.seed = seed;
  o.sampling.shard = Shard{};
  o.output.keep_raw = true;  // the tests compare Batch::raw()
  return o;
}

/// Batches of 20 from 2 workers in `order` drawn from `seed`, `chunk_window` chunks read ahead,
/// the given shard.
inline LoaderOptions windowed_options(const std::string& path, Order order, std::uint64_t seed,
                                      std::uint64_t chunk_window, Shard shard) {
  LoaderOptions o;
  o.source.path = path;
  o.sampling.batch_size = 20;
  o.resources.workers = 2;
  o.sampling.order = order;
  o.sampling.seed = seed;
  o.sampling.chunk_window = chunk_window;
  o.sampling.shard = shard;
  return o;
}

/// The OptionError a loader of `o` is refused with; nothing when it opens. Other errors propagate.
inline std::optional<OptionError> loader_option_error(const LoaderOptions& o) {
  try {
    Loader loader(o);
  } catch (const OptionError& e) {
    return e;
  }
  return std::nullopt;
}

/// What a sequential epoch 0 of `o` fails with: the error's text, or empty when it ends cleanly.
inline std::string sequential_epoch_error(LoaderOptions o) {
  o.sampling.order = Order::sequential;
  Loader loader(o);
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
  } catch (const PipelineError& e) {
    return e.what();
  }
  return {};
}

/// Epoch 0 of `o` with on_error=skip, on a file whose sample `bad` cannot be read: every other
/// sample arrives, the batches stay full (`samples` delivered) and one sample is counted skipped.
inline void expect_skipped(LoaderOptions o, std::uint64_t bad, std::uint64_t samples) {
  o.on_error = OnError::skip;
  Loader loader(o);
  std::uint64_t delivered = 0;
  for (Batch& b : loader.epoch(0)) {
    delivered += b.size();
    for (auto i : b.sample_indices()) EXPECT_NE(i, bad);
  }
  EXPECT_EQ(delivered, samples);
  EXPECT_EQ(loader.stats().skipped_samples, 1u);
}

}  // namespace gpufeed::testing
