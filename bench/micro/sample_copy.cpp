// Gathering samples from decoded chunks into a batch slot (what the assemble stage does) in
// random order, against the same bytes moved by one large memcpy: the physical limit.
//
// The source is a pool of 64 chunks of 64 samples of 64x64x3 (48 MiB, larger than the last
// level cache of most machines) so neither variant runs from cache.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr std::size_t kSampleBytes = 64 * 64 * 3;  // 12288
constexpr std::size_t kSamplesPerChunk = 64;
constexpr std::size_t kChunks = 64;
constexpr std::size_t kBatch = 256;
constexpr std::size_t kChunkBytes = kSampleBytes * kSamplesPerChunk;
constexpr std::size_t kBatchBytes = kSampleBytes * kBatch;

struct ChunkPool {
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks;
  std::unique_ptr<std::uint8_t[]> contiguous;  // the same bytes, one buffer
  ChunkPool() {
    std::mt19937 rng(7);
    contiguous = std::make_unique<std::uint8_t[]>(kChunkBytes * kChunks);
    for (std::size_t i = 0; i < kChunkBytes * kChunks; ++i)
      contiguous[i] = static_cast<std::uint8_t>(rng());
    for (std::size_t c = 0; c < kChunks; ++c) {
      chunks.push_back(std::make_unique<std::uint8_t[]>(kChunkBytes));
      std::memcpy(chunks.back().get(), contiguous.get() + c * kChunkBytes, kChunkBytes);
    }
  }
};

const ChunkPool& pool() {
  static const ChunkPool p;
  return p;
}

std::vector<std::uint32_t> sample_order(bool shuffled, std::uint32_t seed) {
  std::vector<std::uint32_t> order(kChunks * kSamplesPerChunk);
  std::iota(order.begin(), order.end(), 0u);
  if (shuffled) std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  return order;
}

// One batch per iteration: kBatch samples gathered from the chunk pool.
void BM_GatherSamples(benchmark::State& state, bool shuffled) {
  const ChunkPool& p = pool();
  const auto order = sample_order(shuffled, 11u + static_cast<std::uint32_t>(state.thread_index()));
  auto batch = std::make_unique<std::uint8_t[]>(kBatchBytes);
  std::memset(batch.get(), 0, kBatchBytes);
  std::size_t next = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      const std::uint32_t s = order[next];
      next = next + 1 == order.size() ? 0 : next + 1;
      const std::uint8_t* src =
          p.chunks[s / kSamplesPerChunk].get() + (s % kSamplesPerChunk) * kSampleBytes;
      std::memcpy(batch.get() + i * kSampleBytes, src, kSampleBytes);
    }
    benchmark::DoNotOptimize(batch.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBatchBytes));
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kBatch), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_GatherSamples, random, true)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_GatherSamples, sequential, false)->Threads(1)->Threads(2)->UseRealTime();

// The same bytes per iteration as one memcpy, walking through the same pool.
void BM_BatchMemcpy(benchmark::State& state) {
  const ChunkPool& p = pool();
  auto batch = std::make_unique<std::uint8_t[]>(kBatchBytes);
  std::memset(batch.get(), 0, kBatchBytes);
  constexpr std::size_t kBatchesInPool = kChunks * kChunkBytes / kBatchBytes;
  std::size_t next = static_cast<std::size_t>(state.thread_index()) * (kBatchesInPool / 2);
  for (auto _ : state) {
    std::memcpy(batch.get(), p.contiguous.get() + (next % kBatchesInPool) * kBatchBytes,
                kBatchBytes);
    ++next;
    benchmark::DoNotOptimize(batch.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBatchBytes));
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kBatch), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BatchMemcpy)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
