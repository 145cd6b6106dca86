#include "stage_work.hpp"
#include "gpufeed/base/errors.hpp"

#include "cuda/staging.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_arena.h>

#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"
#include "hooks.hpp"
#include "in_flight.hpp"

namespace gpufeed::pipeline::detail {

namespace {

NormalizeParams normalize_params(const LoaderOptions& o, const DatasetSource& source,
                                 std::uint32_t channels) {
  const std::vector<float> zero(channels, 0.0f), full(channels, 255.0f);
  // uint8 output is not normalized: the file's statistics are not read (nor refused).
  if (o.output.dtype == DType::uint8) return NormalizeParams::make(zero, full, channels);
  if (!o.output.mean.empty() || !o.output.stddev.empty())
    return NormalizeParams::make(o.output.mean, o.output.stddev, channels);
  if (const auto& stats = source.channel_stats();
      stats && stats->mean.size() == channels && stats->stddev.size() == channels) {
    // A constant channel (an alpha plane, a synthetic image) has std 0: the default divides
    // it by 255, as for a file without statistics, rather than refusing the file.
    std::vector<float> stddev = stats->stddev;
    for (float& s : stddev) {
      if (!(s > 0.0f) && std::isfinite(s)) s = 255.0f;
    }
    return NormalizeParams::make(stats->mean, stddev, channels);
  }
  return NormalizeParams::make(zero, full, channels);
}

std::unique_ptr<CudaStaging> make_staging(const LoaderOptions& o, const formats::SampleShape& shape,
                                          const NormalizeParams& norm) {
  if (o.output.device.is_cpu()) return nullptr;
  NormalizeSpec spec;
  spec.in = shape;
  spec.out_height = shape.height;
  spec.out_width = shape.width;
  spec.out_layout = o.output.layout;
  spec.dtype = o.output.dtype;
  spec.params = norm;
  spec.validate();
  return std::make_unique<CudaStaging>(o.output.device.index, spec, o.sampling.batch_size);
}

std::optional<ImageSamples> make_image_samples(const LoaderOptions& o, const DatasetSource& source,
                                               const formats::SampleShape& shape) {
  if (!source.jpeg) return std::nullopt;
  return std::optional<ImageSamples>(std::in_place, *source.jpeg, shape.height, shape.width,
                                     o.image.augment, loader_geometry(o, true),
                                     o.image.resize_filter, o.sampling.seed);
}

/// decode=gpu|auto on a CUDA device with a jpeg-layout file: the engines, or null. decode=gpu
/// refuses (OptionError, one line) what auto takes quietly or with `notice`.
std::unique_ptr<GpuSamples> make_gpu_samples(const LoaderOptions& o, const DatasetSource& source,
                                             const std::optional<ImageSamples>& images,
                                             std::string& notice) {
  if (o.image.decode == Decode::cpu) return nullptr;
  const bool gpu = o.image.decode == Decode::gpu;
  if (!images) {
    if (gpu) {
      throw OptionError("decode", "{decode}=gpu decodes a jpeg-layout file's images; " +
                                      o.source.path + " holds raw pixels: use {decode}=cpu");
    }
    return nullptr;
  }
  if (o.output.device.is_cpu()) {
    if (gpu) {
      throw OptionError("decode",
                        "{decode}=gpu needs a CUDA device and this loader's {device} is "
                        "the CPU (no CUDA device usable here, or {device}=cpu): use "
                        "{decode}=cpu or auto");
    }
    return nullptr;
  }
  try {
    return std::make_unique<GpuSamples>(o.image.decode, o.output.device.index, *source.jpeg,
                                        *images);
  } catch (const UsageError& e) {
    if (gpu) throw;
    notice = std::string("{decode}=auto decodes on the CPU: ") + e.what();
    return nullptr;
  }
}

std::optional<RawSamples> make_raw_samples(const LoaderOptions& o, const DatasetSource& source) {
  if (!source.raw || !o.image.geometry.active()) return std::nullopt;
  return std::optional<RawSamples>(std::in_place, o.source.path, source.raw->sample_shape(),
                                   loader_geometry(o, false), o.image.resize_filter,
                                   o.sampling.seed);
}

/// Runs a stage's work; running out of memory in it becomes a message that says what to do
/// (the consumer gets it with the stage and batch added).
template <typename Work>
void with_memory_advice(const Work& work) {
  try {
    work();
  } catch (const std::bad_alloc&) {
    throw PipelineError(
        "out of memory; free memory, or lower the batch size, prefetch, chunk cache or workers");
  }
}

/// A parallel loop over a batch's samples [0, count), isolated: while the calling thread waits
/// for the loop it runs only the loop's own tasks. Without that, a worker could take another
/// batch's flow-graph task, or a task parking it (WorkerGate), with this batch on its stack.
template <typename Body>
void for_samples(std::uint32_t count, std::uint32_t grain, const Body& body) {
  oneapi::tbb::this_task_arena::isolate([&] {
    oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<std::uint32_t>(0, count, grain), body,
                              oneapi::tbb::simple_partitioner());
  });
}

}  // namespace

StageWork::StageWork(const LoaderOptions& options, oneapi::tbb::task_arena& arena)
    : options_(options),
      arena_(arena),
      stall_(testing::injected_stall()),
      source_(DatasetSource::open(options)),
      shape_(source_.slot_shape(options)),
      image_samples_(make_image_samples(options, source_, shape_)),
      raw_samples_(make_raw_samples(options, source_)),
      norm_(normalize_params(options, source_, shape_.channels)),
      staging_(make_staging(options, shape_, norm_)),
      gpu_samples_(make_gpu_samples(options, source_, image_samples_, decode_notice_)),
      cache_(options.storage.cache_bytes),
      direct_(!options.output.keep_raw && !staging_ && !image_samples_ && !raw_samples_ &&
              options.image.augment == Augment::none && !options.echo.enabled()) {
  if (source_.dataset().remote()) network_base_ = source_.dataset().network();
}

StageWork::~StageWork() = default;

void StageWork::prepare(Slot& slot, std::uint64_t epoch, std::uint64_t position,
                        std::uint64_t index, const std::vector<std::uint64_t>& order) const {
  const std::uint64_t first = position * options_.sampling.batch_size;
  const auto count = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(options_.sampling.batch_size, order.size() - first));
  slot.epoch = epoch;
  slot.index = index;
  slot.count = count;
  slot.repeat = 0;
  const auto& labels = source_.labels();
  for (std::uint32_t i = 0; i < count; ++i) {
    slot.indices[i] = order[first + i];
    slot.labels[i] = labels[slot.indices[i]];
    slot.by_chunk[i] = i;
  }
  const formats::ShardMap& map = source_.shard_map();
  std::sort(slot.by_chunk.begin(), slot.by_chunk.begin() + count,
            [&](std::uint32_t a, std::uint32_t b) {
              return map.chunk_of(slot.indices[a]) < map.chunk_of(slot.indices[b]);
            });
}

storage::ReadAhead StageWork::read_ahead() const {
  storage::ReadAhead r;
  r.budget_bytes =
      std::max<std::uint64_t>(std::uint64_t{64} << 20, options_.storage.cache_bytes / 2);
  if (!options_.storage.read_requests.is_auto()) {
    r.requests = options_.storage.read_requests.value_or(r.requests);
    return r;
  }
  // Enough GETs of the file's mean read to fill half the budget: the other half holds what was
  // fetched and is not yet read. And no more than the workers can take: one reads at most about
  // 0.9 GB/s of raw samples (75,000 of 12 KiB a second), which a GET of a 768 KiB chunk over a
  // request of 20-40 ms brings at 20-40 MB/s: kGetsPerWorker of them. More only queue: the same
  // bytes over more connections, each request slower (a 20 ms link whose servers share the
  // loader's 2 cores: 170 GETs in flight took 74-91 ms to their first byte, 64 took 37-42 ms
  // and delivered 4-9% more samples a second, on 0.15-0.3 core-seconds an epoch less), and on
  // a node each rank sends its own.
  constexpr std::uint64_t kGetsPerWorker = 32;
  const formats::Dataset& d = source_.dataset();
  const std::uint64_t stored =
      source_.raw ? source_.raw->stored_bytes() : source_.jpeg->total_bytes();
  const std::uint64_t mean =
      std::max<std::uint64_t>(1, stored / std::max<std::uint64_t>(1, d.num_chunks()));
  const std::uint64_t workers_take = kGetsPerWorker * threads_.load(std::memory_order_relaxed);
  r.requests = static_cast<unsigned>(
      std::clamp<std::uint64_t>(std::min(r.budget_bytes / 2 / mean, workers_take), 16, 256));
  return r;
}

void StageWork::plan_reads(const std::vector<std::uint64_t>& order) const {
  const formats::Dataset& d = source_.dataset();
  if (!d.remote()) return;
  if (source_.jpeg && options_.sampling.order != Order::chunk) {
    // Sample by sample: each image's own range (a block fetched for one image would waste it).
    d.plan_sample_reads(order, read_ahead());
    return;
  }
  const formats::ShardMap& map = source_.shard_map();
  std::vector<bool> planned(d.num_chunks(), false);
  std::vector<std::uint64_t> units;
  std::vector<std::uint64_t> batch;
  storage::ReadAhead settings = read_ahead();
  for (std::uint64_t first = 0; first < order.size(); first += options_.sampling.batch_size) {
    const std::uint64_t end =
        std::min<std::uint64_t>(order.size(), first + options_.sampling.batch_size);
    batch.clear();
    for (std::uint64_t i = first; i < end; ++i) {
      const std::uint64_t unit = map.chunk_of(order[i]);
      if (unit < planned.size() && !planned[unit]) {
        planned[unit] = true;
        // A chunk the cache holds is read from it: fetching it again wastes a GET.
        if (source_.raw && cache_.holds(unit)) continue;
        batch.push_back(unit);
      }
    }
    std::sort(batch.begin(), batch.end());
    units.insert(units.end(), batch.begin(), batch.end());
    if (first == 0) settings.first_ranges = units.size();
  }
  d.plan_reads(units, settings);
}

void StageWork::copy_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) {
  const formats::RawShards& reader = *source_.raw;
  const formats::ShardMap& map = source_.shard_map();
  const std::uint64_t sample_bytes = shape_.bytes();
  const std::uint64_t stored_bytes = reader.sample_shape().bytes();
  std::int64_t read_ns = 0;
  std::int64_t convert_ns = 0;  // direct_: the samples' conversion into the output
  const std::int64_t t0 = profiler::now_ns();
  std::uint32_t i = begin;
  std::uint64_t chunk = 0;
  // An object's planned chunk is kept as a view of its GET (a local file's is read: pread
  // copies it either way).
  ChunkCache::ViewFn view;
  if (reader.remote()) {
    view = [&] {
      GPUFEED_RANGE(stage_name(Stage::read));
      return reader.view_chunk(chunk);
    };
  }
  WorkScope work(options_.source.path, Stage::read, slot.epoch, slot.index);
  while (i < end && !stopping_.load(std::memory_order_relaxed)) {
    work.sample(slot.indices[slot.by_chunk[i]]);
    chunk = map.chunk_of(slot.indices[slot.by_chunk[i]]);
    bool hit = true;
    const std::int64_t r0 = profiler::now_ns();
    ChunkHandle data = cache_.get(
        chunk, reader.chunk_buffer_bytes(),
        [&](std::span<std::uint8_t> out) {
          GPUFEED_RANGE(stage_name(Stage::read));
          reader.read_chunk(chunk, out);
        },
        &hit, view);
    if (!hit) {
      const std::int64_t r = profiler::now_ns() - r0;
      read_ns += r;
      counters.add(Stage::read, r);
      chunk_reads_.fetch_add(1, std::memory_order_relaxed);
      bytes_read_.fetch_add(reader.chunk_buffer_bytes(), std::memory_order_relaxed);
    }
    const std::uint64_t chunk_first = map.chunk_first_sample(chunk);
    const std::int64_t c0 = direct_ ? profiler::now_ns() : 0;
    for (; i < end && map.chunk_of(slot.indices[slot.by_chunk[i]]) == chunk; ++i) {
      const std::uint32_t pos = slot.by_chunk[i];
      const std::uint8_t* in = data->data() + (slot.indices[pos] - chunk_first) * stored_bytes;
      if (direct_) {
        convert_on_host(in, slot, pos, 1);
      } else if (raw_samples_) {
        raw_samples_->place(in, slot.indices[pos], slot.epoch, slot.raw.get() + pos * sample_bytes);
      } else {
        std::memcpy(slot.raw.get() + pos * sample_bytes, in, sample_bytes);
      }
    }
    if (direct_) convert_ns += profiler::now_ns() - c0;
  }
  counters.add(Stage::assemble, profiler::now_ns() - t0 - read_ns - convert_ns, 0);
  if (direct_) counters.add(Stage::normalize, convert_ns, 0);
}

void StageWork::assemble(Slot& slot) {
  if (staging_) staging_->reclaim(slot, counters);
  const WorkScope work(options_.source.path, first_stage(), slot.epoch, slot.index);
  // Injected stalls sit outside the assemble range, in a range of their own stage.
  maybe_stall(Stage::read, slot);
  maybe_stall(Stage::decode, slot);
  maybe_stall(Stage::assemble, slot);
  GPUFEED_RANGE(stage_name(Stage::assemble));
  with_memory_advice([&] {
    run_hook(test_hooks.assembling);
    const std::uint32_t grain =
        std::max(16u, slot.count / (2 * workers_.load(std::memory_order_relaxed)));
    if (gpu_samples_) return decode_on_engines(slot);
    for_samples(slot.count, grain, [&](const oneapi::tbb::blocked_range<std::uint32_t>& r) {
      if (image_samples_) {
        decode_samples(slot, r.begin(), r.end());
      } else {
        copy_samples(slot, r.begin(), r.end());
      }
      if (options_.image.augment == Augment::flip && !image_samples_)
        flip_samples(slot, r.begin(), r.end());
    });
  });
  counters.add(image_samples_ ? Stage::decode : Stage::assemble, 0, 1);
}

void StageWork::decode_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) {
  WorkScope work(options_.source.path, Stage::decode, slot.epoch, slot.index);
  for (std::uint32_t i = begin; i < end && !stopping_.load(std::memory_order_relaxed); ++i) {
    work.sample(slot.indices[i]);
    decode_or_replace(slot, i);
  }
}

void StageWork::decode_on_engines(Slot& slot) {
  GpuSamples& engines = *gpu_samples_;
  const std::uint32_t count = slot.count;
  const unsigned workers = workers_.load(std::memory_order_relaxed);
  const std::uint32_t cpu_from = count - engines.cpu_positions(count, workers);
  EngineBatch batch = engines.begin(count);
  const std::uint32_t grain = std::max(8u, count / (4 * std::max(1u, workers)));
  for_samples(count, grain, [&](const oneapi::tbb::blocked_range<std::uint32_t>& r) {
    for (std::uint32_t i = r.begin(); i < r.end(); ++i) {
      if (stopping_.load(std::memory_order_relaxed)) return;
      std::int64_t read_ns = 0;
      const std::uint64_t sample = slot.indices[i];
      engines.plan(batch, i, sample, slot.epoch, cpu_from, read_ns);
      counters.add(Stage::read, read_ns, 1);
      bytes_read_.fetch_add(source_.jpeg->sample_size(sample), std::memory_order_relaxed);
    }
  });
  std::vector<std::uint32_t> on_cpu;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (batch.routes[i] != Route::engines) on_cpu.push_back(i);
  }
  std::vector<std::uint32_t> refused;
  std::string why;
  std::int64_t cpu_ns = 0;
  DeviceSlot& d = *slot.device;
  oneapi::tbb::this_task_arena::isolate([&] {
    oneapi::tbb::parallel_invoke(
        [&] {
          const std::int64_t t0 = profiler::now_ns();
          engines.submit(batch, static_cast<std::uint8_t*>(d.raw.get()), d.decoded.get(), refused,
                         why);
          counters.add(Stage::decode, profiler::now_ns() - t0, 0);
        },
        [&] { cpu_ns = decode_positions(slot, on_cpu); });
  });
  if (!refused.empty()) {
    warn_engine_refusal(why);
    cpu_ns += decode_positions(slot, refused);
    on_cpu.insert(on_cpu.end(), refused.begin(), refused.end());
    std::sort(on_cpu.begin(), on_cpu.end());
  }
  engines.record_cpu(static_cast<std::uint32_t>(on_cpu.size()), cpu_ns);
  staging_->expect_engine_pixels(slot, std::move(on_cpu));
}

std::int64_t StageWork::decode_positions(Slot& slot, const std::vector<std::uint32_t>& positions) {
  std::atomic<std::int64_t> busy{0};
  for_samples(static_cast<std::uint32_t>(positions.size()), 1,
              [&](const oneapi::tbb::blocked_range<std::uint32_t>& r) {
                const std::int64_t t0 = profiler::now_ns();
                for (std::uint32_t k = r.begin(); k < r.end(); ++k) {
                  if (stopping_.load(std::memory_order_relaxed)) break;
                  decode_or_replace(slot, positions[k]);
                }
                busy.fetch_add(profiler::now_ns() - t0, std::memory_order_relaxed);
              });
  return busy.load();
}

void StageWork::warn_engine_refusal(const std::string& why) {
  if (warned_refusal_.exchange(true)) return;
  std::fprintf(stderr,
               "gpufeed: warning: the JPEG engines refused a batch of %s (%s); its images were "
               "decoded on the CPU, and so will be any other batch they refuse\n",
               options_.source.path.c_str(), why.c_str());
}

void StageWork::consumer_took(std::uint32_t images, std::int64_t wait_ns) {
  const std::int64_t now = profiler::now_ns();
  const std::int64_t last = last_delivery_ns_.exchange(now, std::memory_order_relaxed);
  if (gpu_samples_ && last > 0) gpu_samples_->record_consumer(images, now - last, wait_ns);
}

void StageWork::decode_or_replace(Slot& slot, std::uint32_t position) {
  std::uint8_t* out = slot.raw.get() + position * shape_.bytes();
  const std::uint64_t n = source_.num_samples();
  // --on-error skip: a sample that cannot be decoded is replaced by the next one that can
  // (a fixed stride through the dataset, so the replacement is reproducible too).
  constexpr int kReplacementTries = 16;
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t sample = slot.indices[position];
    try {
      const DecodeTiming t = image_samples_->decode(sample, slot.epoch, out);
      cpu_decoded_.fetch_add(1, std::memory_order_relaxed);
      counters.add(Stage::read, t.read_ns, 1);
      counters.add(Stage::decode, t.decode_ns, 0);
      bytes_read_.fetch_add(source_.jpeg->sample_size(sample), std::memory_order_relaxed);
      return;
    } catch (const formats::IoError&) {
      throw;  // the disk failed, not the sample: skipping would hide it
    } catch (const formats::FormatError&) {
      if (options_.on_error == OnError::fail || attempt == kReplacementTries) throw;
      skipped_.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t replacement = (sample + 7919) % n;
      slot.indices[position] = replacement;
      slot.labels[position] = source_.labels()[replacement];
    }
  }
}

void StageWork::flip_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) const {
  // The same positions copy_samples() filled for this range: by_chunk[begin, end).
  for (std::uint32_t i = begin; i < end; ++i) {
    const std::uint32_t pos = slot.by_chunk[i];
    if (!formats::random_flip(options_.sampling.seed, slot.epoch, slot.indices[pos])) continue;
    flip_horizontal(slot.raw.get() + pos * shape_.bytes(), shape_.height, shape_.width,
                    shape_.channels, shape_.layout == formats::Layout::nchw);
  }
}

void StageWork::maybe_stall(Stage stage, const Slot& slot) {
  const auto& stall = stall_;
  if (!stall || stall->stage != stage || !stall->hits(slot.index)) return;
  const std::int64_t t0 = profiler::now_ns();
  const auto sleep = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(stall->ms)); };
  switch (stage) {
    case Stage::read: {
      GPUFEED_RANGE(stage_name(Stage::read));
      sleep();
      break;
    }
    case Stage::decode: {
      GPUFEED_RANGE(stage_name(Stage::decode));
      sleep();
      break;
    }
    case Stage::normalize: {
      GPUFEED_RANGE(stage_name(Stage::normalize));
      sleep();
      break;
    }
    default: {
      GPUFEED_RANGE(stage_name(Stage::assemble));
      sleep();
      break;
    }
  }
  counters.add(stage, profiler::now_ns() - t0, 0);
}

void StageWork::normalize(Slot& slot) {
  maybe_stall(Stage::normalize, slot);
  GPUFEED_RANGE(stage_name(Stage::normalize));
  with_memory_advice([&] {
    run_hook(test_hooks.normalizing);
    if (staging_) {
      staging_->submit(slot);
      counters.add(Stage::h2d, 0, 1);
    } else if (!direct_) {
      normalize_on_host(slot);
    }
  });
  counters.add(Stage::normalize, 0, 1);
}

void StageWork::convert_on_host(const std::uint8_t* in, Slot& slot, std::uint32_t position,
                                std::uint32_t count) const {
  const std::uint64_t offset = std::uint64_t{position} * shape_.bytes();
  if (options_.output.dtype == DType::uint8) {
    // The pixels as they are, NCHW: a transpose of HWC samples, a copy of CHW ones.
    planar_cpu(in, shape_, count, slot.images.get() + offset);
  } else {
    normalize_cpu(in, shape_, count, norm_, reinterpret_cast<float*>(slot.images.get()) + offset);
  }
}

void StageWork::normalize_on_host(Slot& slot) {
  const std::uint64_t bytes = shape_.bytes();
  for_samples(slot.count, 16, [&](const oneapi::tbb::blocked_range<std::uint32_t>& r) {
    const std::int64_t t0 = profiler::now_ns();
    convert_on_host(slot.raw.get() + r.begin() * bytes, slot, r.begin(),
                    static_cast<std::uint32_t>(r.size()));
    counters.add(Stage::normalize, profiler::now_ns() - t0, 0);
  });
}

bool StageWork::reaugments_echoes() const {
  // An echo's flip is a fair coin relative to the fresh one: it keeps the flip's distribution
  // only where that is a fair coin too.
  return options_.echo.reaugment && options_.echo.enabled() &&
         (options_.image.augment == Augment::flip || options_.image.augment == Augment::crop_flip ||
          options_.image.geometry.hflip == 0.5);
}

void StageWork::reaugment(Slot& from, Slot& target, std::uint32_t repeat) {
  GPUFEED_RANGE(stage_name(Stage::echo));
  const std::int64_t t0 = profiler::now_ns();
  if (&target != &from) {
    target.count = from.count;
    target.epoch = from.epoch;
    target.index = from.index;
    std::copy_n(from.labels.begin(), from.count, target.labels.begin());
    std::copy_n(from.indices.begin(), from.count, target.indices.begin());
  }
  if (staging_) {
    // The device keeps the fresh batch's pixels; the kernel applies this repeat's flips.
    std::vector<std::uint8_t> flips(from.count);
    for (std::uint32_t i = 0; i < from.count; ++i) {
      flips[i] = echo_flip(options_.sampling.seed, from.epoch, from.indices[i], repeat) ? 1 : 0;
    }
    staging_->reaugment(from, target, flips, repeat);
  } else {
    if (&target != &from) {
      std::memcpy(target.raw.get(), from.raw.get(), from.count * shape_.bytes());
      target.repeat = from.repeat;
    }
    // The host pixels show repeat target.repeat; mirror the samples whose flip changes.
    for (std::uint32_t i = 0; i < target.count; ++i) {
      const std::uint64_t sample = target.indices[i];
      if (echo_flip(options_.sampling.seed, target.epoch, sample, target.repeat) ==
          echo_flip(options_.sampling.seed, target.epoch, sample, repeat)) {
        continue;
      }
      flip_horizontal(target.raw.get() + i * shape_.bytes(), shape_.height, shape_.width,
                      shape_.channels, shape_.layout == formats::Layout::nchw);
    }
    // The consumer runs this inside EpochRun::next(). The loop is isolated: the consumer runs
    // only its tasks, not a flow-graph task that would keep it from a batch it does not need.
    arena_.execute([&] { normalize_on_host(target); });
  }
  target.repeat = repeat;
  reaugmented_.fetch_add(1, std::memory_order_relaxed);
  counters.add(Stage::echo, profiler::now_ns() - t0, 0);
}

void StageWork::fill_stats(LoaderStats& s) const {
  for (std::size_t i = 0; i < kStageCount; ++i) {
    s.stages[i].busy_ns = counters.busy_ns[i].load(std::memory_order_relaxed);
    s.stages[i].items = counters.items[i].load(std::memory_order_relaxed);
  }
  if (!image_samples_) s.stages[static_cast<std::size_t>(Stage::read)].items = chunk_reads_.load();
  s.skipped_samples = skipped_.load();
  s.reaugmented_batches = reaugmented_.load();
  s.chunk_reads = chunk_reads_.load();
  s.bytes_read = bytes_read_.load();
  const ChunkCacheStats c = cache_.stats();
  s.cache_hits = c.hits;
  s.cache_misses = c.misses;
  s.cache_peak_bytes = c.peak_bytes;
  if (source_.dataset().remote()) {
    const storage::ObjectStoreStats now = source_.dataset().network();
    const storage::ObjectStoreStats base = [this] {
      std::lock_guard lock(network_mutex_);
      return network_base_;
    }();
    NetworkStats& n = s.network.emplace();
    static_cast<storage::ObjectStoreStats&>(n) = now.since(base);
    n.read_requests = read_ahead().requests;
  }
  if (gpu_samples_) {
    s.decode = gpu_samples_->stats();
  } else if (image_samples_) {
    s.decode.cpu_images = cpu_decoded_.load();
  }
  if (staging_) {
    const StagingStats g = staging_->stats();
    s.pinned = g.pinned;
    s.pinned_bytes = g.pinned_bytes;
    s.device_bytes = g.device_bytes;
    s.pinned_h2d_bytes_per_s = g.pinned_h2d_bytes_per_s;
    s.pageable_h2d_bytes_per_s = g.pageable_h2d_bytes_per_s;
  }
}

void StageWork::reset_stats() {
  counters.reset();
  if (source_.dataset().remote()) {
    std::lock_guard lock(network_mutex_);
    network_base_ = source_.dataset().network();
  }
  chunk_reads_ = 0;
  bytes_read_ = 0;
  skipped_ = 0;
  reaugmented_ = 0;
  cpu_decoded_ = 0;
  if (gpu_samples_) gpu_samples_->reset_stats();
}

}  // namespace gpufeed::pipeline::detail
