#pragma once
// The loader options the pipeline's tests share.
#include <cstdint>
#include <string>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::testing {

/// How the loader tests read a jpeg-layout file: batches of 8 from 2 workers in random order
/// drawn from `seed`, every image decoded to `height` x `width`, the whole file (no shard).
inline LoaderOptions jpeg_loader_options(const std::string& path, std::uint64_t seed,
                                         std::uint32_t height, std::uint32_t width) {
  LoaderOptions o;
  o.path = path;
  o.batch_size = 8;
  o.workers = 2;
  o.order = Order::random;
  o.seed = seed;
  o.height = height;
  o.width = width;
  o.shard = Shard{};
  return o;
}

/// A small, reproducible loader: 2 workers, prefetch 2, random order with `seed`, one rank
/// (whatever the environment says).
inline LoaderOptions random_order_options(const std::string& path, std::uint32_t batch_size,
                                          std::uint64_t seed) {
  LoaderOptions o;
  o.path = path;
  o.batch_size = batch_size;
  o.workers = 2;
  o.prefetch = 2;
  o.order = Order::random;
  o.seed = seed;
  o.shard = Shard{};
  return o;
}

}  // namespace gpufeed::testing
