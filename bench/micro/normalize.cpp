// uint8 -> float32 NCHW normalization of one batch (256 x 64x64x3) on the CPU:
// gpufeed::pipeline::normalize_cpu (vectorized) vs gpufeed::pipeline::normalize_reference (plain
// double loop) vs a memcpy of the float output size (the memory-bandwidth floor for writing the
// output); and uint8 NHWC -> NCHW (gpufeed::pipeline::planar_cpu) vs a memcpy of the uint8 batch.
//
// Bytes processed are bytes moved: input read + output written for normalize, source read +
// destination written for memcpy, so the bytes/s columns compare directly.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/pipeline/normalize.hpp"

namespace {

using gpufeed::formats::Layout;
using gpufeed::formats::SampleShape;

constexpr std::uint64_t kBatch = 256;
constexpr std::array<float, 3> kMean = {125.3f, 123.0f, 113.9f};
constexpr std::array<float, 3> kStd = {63.0f, 62.1f, 66.7f};

SampleShape shape_for(Layout layout) {
  return SampleShape{64, 64, 3, layout};
}

struct BatchBuffers {
  std::vector<std::uint8_t> in;
  std::vector<float> out;
  explicit BatchBuffers(const SampleShape& shape)
      : in(shape.bytes() * kBatch), out(shape.bytes() * kBatch) {
    std::mt19937 rng(3);
    for (auto& v : in) v = static_cast<std::uint8_t>(rng());
  }
  [[nodiscard]] std::int64_t moved_bytes() const {
    return static_cast<std::int64_t>(in.size() + out.size() * sizeof(float));
  }
};

void set_counters(benchmark::State& state, std::int64_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * static_cast<std::int64_t>(kBatch)),
      benchmark::Counter::kIsRate);
}

// Times `write`, which fills `out` with one batch, moving `bytes_per_iteration`.
template <typename Write>
void time_batch_writes(benchmark::State& state, const void* out, std::int64_t bytes_per_iteration,
                       Write write) {
  for (auto _ : state) {
    write();
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  set_counters(state, bytes_per_iteration);
}

void BM_NormalizeCpu(benchmark::State& state, Layout layout) {
  const SampleShape shape = shape_for(layout);
  BatchBuffers buf(shape);
  const auto params = gpufeed::pipeline::NormalizeParams::make(kMean, kStd, shape.channels);
  time_batch_writes(state, buf.out.data(), buf.moved_bytes(), [&] {
    gpufeed::pipeline::normalize_cpu(buf.in.data(), shape, kBatch, params, buf.out.data());
  });
}
BENCHMARK_CAPTURE(BM_NormalizeCpu, nhwc, Layout::nhwc)->UseRealTime();
BENCHMARK_CAPTURE(BM_NormalizeCpu, nchw, Layout::nchw)->UseRealTime();

void BM_NormalizeReference(benchmark::State& state, Layout layout) {
  const SampleShape shape = shape_for(layout);
  BatchBuffers buf(shape);
  time_batch_writes(state, buf.out.data(), buf.moved_bytes(), [&] {
    gpufeed::pipeline::normalize_reference(buf.in.data(), shape, kBatch, kMean, kStd,
                                           buf.out.data());
  });
}
BENCHMARK_CAPTURE(BM_NormalizeReference, nhwc, Layout::nhwc)->UseRealTime();
BENCHMARK_CAPTURE(BM_NormalizeReference, nchw, Layout::nchw)->UseRealTime();

// uint8 out, unnormalized (dtype="uint8"): planar_cpu's NHWC -> NCHW de-interleave against a
// memcpy of the same 3 MiB (BM_Memcpy/uint8_output), which is all an NCHW batch costs.
void BM_PlanarCpu(benchmark::State& state, Layout layout) {
  const SampleShape shape = shape_for(layout);
  BatchBuffers buf(shape);
  std::vector<std::uint8_t> out(buf.in.size());
  time_batch_writes(state, out.data(), static_cast<std::int64_t>(2 * buf.in.size()), [&] {
    gpufeed::pipeline::planar_cpu(buf.in.data(), shape, kBatch, out.data());
  });
}
BENCHMARK_CAPTURE(BM_PlanarCpu, nhwc, Layout::nhwc)->UseRealTime();

// memcpy of a batch's output: the bandwidth floor of writing it (float32: 12 MiB a batch, the
// floor for normalize_cpu; uint8: 3 MiB, the floor for planar_cpu).
void BM_Memcpy(benchmark::State& state, std::size_t element_bytes) {
  const std::size_t bytes = shape_for(Layout::nhwc).bytes() * kBatch * element_bytes;
  std::vector<std::uint8_t> src(bytes, 1), dst(bytes, 0);
  time_batch_writes(state, dst.data(), static_cast<std::int64_t>(2 * bytes),
                    [&] { std::memcpy(dst.data(), src.data(), bytes); });
}
BENCHMARK_CAPTURE(BM_Memcpy, float32_output, sizeof(float))->UseRealTime();
BENCHMARK_CAPTURE(BM_Memcpy, uint8_output, sizeof(std::uint8_t))->UseRealTime();

}  // namespace
