// DatasetReader::read_chunk on its two chunked paths:
//   index         the file's /index chunk table + pread + own decompression: no HDF5 call,
//                 no lock, so it should scale with threads;
//   direct_chunk  H5Dread_chunk under HDF5's global lock, decompression outside it
//                 (ReaderOptions::use_index = false): the read itself is serialized.
// Both on an uncompressed and a gzip:4 file (64x64x3 samples, 64 per chunk, 768 KiB chunks)
// written once per run in a temporary directory; the file sits in the page cache, so this is
// the CPU cost of a chunk read, not the disk. Bytes processed are decoded bytes; with
// ->Threads(2) the rate is the sum over both threads per wall second.
//
// BM_ParallelReference is the yardstick for "scales": a register-only loop that shares
// nothing, so its threads:2 / threads:1 ratio is what this machine gives two threads right
// now (2 on an idle machine with two free cores, less when other work takes a core). A read
// path scales when its own ratio comes close to that one.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/pack.hpp"

namespace {

namespace fs = std::filesystem;
using gpufeed::formats::DatasetReader;
using gpufeed::formats::ReaderOptions;
using gpufeed::formats::SampleShape;

constexpr std::uint64_t kSamples = 4096;
constexpr std::uint64_t kSamplesPerChunk = 64;
const SampleShape kShape{64, 64, 3, gpufeed::formats::Layout::nhwc};

enum class Compression { none, gzip4 };

// Smooth gradients plus a little noise: compresses about as well as natural images do under
// deflate, unlike uniform noise (incompressible) or constants (trivial).
void fill_samples(std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
  std::mt19937 rng(static_cast<std::uint32_t>(first));
  std::size_t at = 0;
  for (std::uint64_t s = first; s < first + count; ++s)
    for (std::uint32_t y = 0; y < kShape.height; ++y)
      for (std::uint32_t x = 0; x < kShape.width; ++x)
        for (std::uint32_t c = 0; c < kShape.channels; ++c)
          out[at++] = static_cast<std::uint8_t>(2 * x + y + 40 * c + 13 * s + (rng() & 7u));
}

std::string write_file(const fs::path& path, int gzip_level) {
  gpufeed::formats::DatasetWriter writer(
      path.string(), kSamples, kShape,
      {.samples_per_chunk = kSamplesPerChunk, .gzip_level = gzip_level});
  gpufeed::formats::pack_images(writer, fill_samples, 0);
  std::vector<std::int64_t> labels(kSamples);
  for (std::uint64_t i = 0; i < kSamples; ++i) labels[i] = static_cast<std::int64_t>(i % 10);
  writer.write_labels(labels);
  writer.commit();
  return path.string();
}

// The two files, written on first use and removed at exit.
class Files {
 public:
  Files() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gpufeed-bench-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
    none_ = write_file(dir_ / "none.h5", 0);
    gzip_ = write_file(dir_ / "gzip4.h5", 4);
  }
  ~Files() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
  [[nodiscard]] const std::string& path(Compression c) const {
    return c == Compression::none ? none_ : gzip_;
  }

 private:
  fs::path dir_;
  std::string none_;
  std::string gzip_;
};

const Files& files() {
  static const Files f;
  return f;
}

// One shared reader per (file, path), as the loader's workers share one.
const DatasetReader& reader(Compression c, bool use_index) {
  static const auto make = [](Compression comp, bool index) {
    ReaderOptions o;
    o.use_index = index;
    return std::make_unique<DatasetReader>(files().path(comp), o);
  };
  static const std::unique_ptr<DatasetReader> readers[2][2] = {
      {make(Compression::none, false), make(Compression::none, true)},
      {make(Compression::gzip4, false), make(Compression::gzip4, true)}};
  return *readers[c == Compression::none ? 0 : 1][use_index ? 1 : 0];
}

// Every case on one thread and on two, rated per wall second (the threads' sum).
void one_and_two_threads(benchmark::internal::Benchmark* b) {
  b->Threads(1)->Threads(2)->UseRealTime();
}

void BM_ReadChunk(benchmark::State& state, Compression compression, bool use_index) {
  const DatasetReader* maybe_reader = nullptr;
  try {
    maybe_reader = &reader(compression, use_index);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const DatasetReader& r = *maybe_reader;
  std::vector<std::uint8_t> buffer(r.chunk_buffer_bytes());
  const std::uint64_t chunks = r.num_chunks();
  // Threads start at different chunks and stride through all of them.
  std::uint64_t next = static_cast<std::uint64_t>(state.thread_index()) * chunks / 2;
  std::uint64_t decoded = 0;
  for (auto _ : state) {
    const std::uint64_t chunk = next % chunks;
    r.read_chunk(chunk, buffer);
    decoded += r.chunk_sample_count(chunk) * r.sample_shape().bytes();
    ++next;
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(decoded));
  state.counters["chunks_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["stored_ratio"] =
      benchmark::Counter(static_cast<double>(r.stored_bytes()) /
                             static_cast<double>(r.num_samples() * r.sample_shape().bytes()),
                         benchmark::Counter::kAvgThreads);
  state.SetLabel(gpufeed::formats::to_string(r.read_path()) + " " + r.compression());
}
BENCHMARK_CAPTURE(BM_ReadChunk, none_index, Compression::none, true)->Apply(one_and_two_threads);
BENCHMARK_CAPTURE(BM_ReadChunk, none_direct_chunk, Compression::none, false)
    ->Apply(one_and_two_threads);
BENCHMARK_CAPTURE(BM_ReadChunk, gzip4_index, Compression::gzip4, true)->Apply(one_and_two_threads);
BENCHMARK_CAPTURE(BM_ReadChunk, gzip4_direct_chunk, Compression::gzip4, false)
    ->Apply(one_and_two_threads);

// Pure ALU work, no memory traffic and nothing shared: perfect scaling on this machine.
void BM_ParallelReference(benchmark::State& state) {
  constexpr int kSteps = 100000;
  std::uint64_t x = static_cast<std::uint64_t>(state.thread_index()) + 1;
  for (auto _ : state) {
    for (int i = 0; i < kSteps; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations() * kSteps);
}
BENCHMARK(BM_ParallelReference)->Apply(one_and_two_threads);

}  // namespace
