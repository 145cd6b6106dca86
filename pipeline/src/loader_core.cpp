#include "loader_core.hpp"

#include "cuda/staging.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>

#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"

namespace gpufeed::detail {

namespace {

constexpr std::uint64_t kMaxPoolBytes = 64ull << 30;
constexpr std::uint64_t kDefaultMemoryBudget = 1ull << 30;  // prefetch=auto
constexpr unsigned kMaxAutoPrefetch = 16;
constexpr unsigned kStartWorkers = 2;   // workers=auto starts here (or at the budget)
constexpr unsigned kStartPrefetch = 2;  // prefetch=auto starts here
constexpr std::int64_t kMinTuneWindowNs = 10'000'000;

unsigned cpu_budget(const LoaderOptions& o) {
  if (o.cpu_budget > 1024) {
    throw OptionError("cpu_budget", "{cpu_budget}=" + std::to_string(o.cpu_budget) +
                                        " is too many; use 1 to 1024, or 0 for every core");
  }
  if (o.cpu_budget != 0) return o.cpu_budget;
  // The cores this process may run on (its affinity mask), not every core of the machine.
  return static_cast<unsigned>(std::max(1, oneapi::tbb::info::default_concurrency()));
}

/// The arena's threads: the workers asked for, or the CPU budget with workers=auto.
unsigned resolve_workers(const LoaderOptions& o) {
  if (o.workers == LoaderOptions::kAuto) return cpu_budget(o);
  if (o.workers > 1024) {
    throw OptionError("workers", "{workers}=" + std::to_string(o.workers) +
                                     " is too many; use 1 to 1024, 0 for every core, or auto");
  }
  if (o.workers != 0) return o.workers;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Slots besides the prefetched batches: the consumer's and the echo stage's.
std::uint32_t extra_slots(const LoaderOptions& o) {
  return 1 + (o.echo.enabled() ? 1 : 0);
}

/// prefetch=auto: the deepest queue the memory budget holds, 1 to 16 batches.
unsigned max_auto_prefetch(const LoaderOptions& o, std::uint64_t sample_bytes) {
  const std::uint64_t budget = o.memory_budget != 0 ? o.memory_budget : kDefaultMemoryBudget;
  const std::uint64_t per_slot = std::max<std::uint64_t>(1, o.batch_size * sample_bytes * 5);
  const std::uint64_t fits = budget / per_slot;
  const std::uint64_t extra = extra_slots(o);
  return static_cast<unsigned>(
      std::clamp<std::uint64_t>(fits > extra ? fits - extra : 1, 1, kMaxAutoPrefetch));
}

SamplerOptions sampler_options(const LoaderOptions& o) {
  SamplerOptions s;
  s.order = o.order;
  s.seed = o.seed;
  s.shard = o.shard ? *o.shard : Shard::from_environment();
  s.drop_tail = o.drop_tail;
  s.chunk_window = o.chunk_window;
  return s;
}

NormalizeParams normalize_params(const LoaderOptions& o, const DatasetSource& source,
                                 std::uint32_t channels) {
  if (!o.mean.empty() || !o.std.empty()) return NormalizeParams::make(o.mean, o.std, channels);
  if (const auto& stats = source.channel_stats();
      stats && stats->mean.size() == channels && stats->std.size() == channels) {
    return NormalizeParams::make(stats->mean, stats->std, channels);
  }
  const std::vector<float> zero(channels, 0.0f), full(channels, 255.0f);
  return NormalizeParams::make(zero, full, channels);
}

std::uint64_t count_batches(const LoaderOptions& o, const Sampler& sampler) {
  if (o.batch_size == 0) throw OptionError("batch_size", "{batch_size}=0: use at least 1");
  const std::uint64_t per_rank = sampler.samples_per_rank();
  if (o.batch_size > per_rank) {
    throw OptionError("batch_size", "{batch_size}=" + std::to_string(o.batch_size) +
                                        " is larger than the " + std::to_string(per_rank) +
                                        " samples rank " +
                                        std::to_string(sampler.options().shard.rank) +
                                        " reads per epoch; lower {batch_size} or use a larger "
                                        "dataset");
  }
  return o.drop_last_batch ? per_rank / o.batch_size : (per_rank + o.batch_size - 1) / o.batch_size;
}

std::uint32_t slot_count(const LoaderOptions& o, std::uint64_t sample_bytes) {
  const bool tuned = o.prefetch == LoaderOptions::kAuto;
  if (!tuned && (o.prefetch == 0 || o.prefetch > 256)) {
    throw OptionError(
        "prefetch", "{prefetch}=" + std::to_string(o.prefetch) + ": use 1 to 256 batches, or auto");
  }
  // The prefetched batches, the consumer's, and the one the echo stage keeps for repeating.
  const unsigned prefetch = tuned ? max_auto_prefetch(o, sample_bytes) : o.prefetch;
  const std::uint32_t slots = prefetch + extra_slots(o);
  const std::uint64_t bytes = std::uint64_t{slots} * o.batch_size * sample_bytes * 5;
  if (bytes > kMaxPoolBytes) {
    throw OptionError("batch_size",
                      "{batch_size}=" + std::to_string(o.batch_size) + " with {prefetch}=" +
                          std::to_string(o.prefetch) + " needs " + std::to_string(bytes >> 20) +
                          " MiB of batch slots (limit " + std::to_string(kMaxPoolBytes >> 20) +
                          " MiB); lower {batch_size} or {prefetch}");
  }
  return slots;
}

std::string check_device(const LoaderOptions& o) {
  const std::string resolved = resolve_device(o.device);
  if (resolved != "cpu") return resolved;
  if (o.dtype != DType::float32 || o.output_layout != formats::Layout::nchw) {
    throw OptionError("dtype", "{dtype}=" + to_string(o.dtype) +
                                   ", {output_layout}=" + formats::to_string(o.output_layout) +
                                   " needs a CUDA device; the CPU device delivers float32 NCHW");
  }
  return "cpu";
}

std::unique_ptr<CudaStaging> make_staging(const LoaderOptions& o, const formats::SampleShape& shape,
                                          const NormalizeParams& norm) {
  if (o.device == "cpu") return nullptr;
  NormalizeSpec spec;
  spec.in = shape;
  spec.out_height = shape.height;
  spec.out_width = shape.width;
  spec.out_layout = o.output_layout;
  spec.dtype = o.dtype;
  spec.params = norm;
  spec.validate();
  return std::make_unique<CudaStaging>(std::stoi(o.device.substr(5)), spec, o.batch_size);
}

std::optional<ImageSamples> make_image_samples(const LoaderOptions& o, const DatasetSource& source,
                                               const formats::SampleShape& shape) {
  if (!source.jpeg) return std::nullopt;
  return std::optional<ImageSamples>(std::in_place, *source.jpeg, shape.height, shape.width,
                                     o.augment, o.resize_filter, o.seed);
}

/// Runs a stage's work; running out of memory in it becomes a message that says what to do
/// (the consumer gets it with the stage and batch added).
template <typename Work>
void with_memory_advice(const Work& work) {
  try {
    work();
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(
        "out of memory; free memory, or lower the batch size, prefetch, chunk cache or workers");
  }
}

HostAllocator host_allocator(CudaStaging* staging) {
  if (staging == nullptr) return allocate_aligned;
  return [staging](std::uint64_t bytes) { return staging->allocate_host(bytes); };
}

}  // namespace

LoaderCore::LoaderCore(LoaderOptions opts)
    : options((opts.device = check_device(opts), std::move(opts))),
      source(DatasetSource::open(options)),
      shape(source.slot_shape(options)),
      image_samples(make_image_samples(options, source, shape)),
      sampler(source.num_samples(), source.samples_per_chunk(), sampler_options(options)),
      norm(normalize_params(options, source, shape.channels)),
      batches_per_epoch(count_batches(options, sampler)),
      echo(options.echo),
      staging(make_staging(options, shape, norm)),
      pool(slot_count(options, shape.bytes()), options.batch_size, shape.bytes(),
           staging ? 0 : shape.bytes() * sizeof(float), host_allocator(staging.get())),
      // On a CUDA device an echo is made from the source's device pixels: no host pixels.
      echo_pool(reaugments_echoes() ? 1 : 0, options.batch_size, staging ? 0 : shape.bytes(),
                staging ? 0 : shape.bytes() * sizeof(float), allocate_aligned, true),
      cache(options.cache_bytes),
      arena_(static_cast<int>(resolve_workers(options)), 0) {
  // TBB's default market has hardware_concurrency - 1 worker threads; an arena asking for more
  // workers than that only gets them when the process-wide limit allows it.
  const int want = arena_.max_concurrency() + 1;
  if (want > static_cast<int>(oneapi::tbb::info::default_concurrency())) {
    thread_limit_.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(want));
  }
  if (staging) {
    for (const auto& slot : pool.slots()) staging->attach(*slot);
    for (const auto& slot : echo_pool.slots()) staging->attach(*slot);
  }
  arena_.initialize();
  const auto threads = static_cast<unsigned>(arena_.max_concurrency());
  TunerLimits limits;
  limits.workers = options.workers == LoaderOptions::kAuto;
  limits.prefetch = options.prefetch == LoaderOptions::kAuto;
  limits.max_workers = threads;
  limits.max_prefetch = pool.size() - extra_slots(options);
  const unsigned workers = limits.workers ? std::min(kStartWorkers, threads) : threads;
  const unsigned prefetch =
      limits.prefetch ? std::min(kStartPrefetch, limits.max_prefetch) : options.prefetch;
  if (limits.workers) gate_.emplace(arena_, threads, workers);
  slot_limit_.store(prefetch + extra_slots(options));
  if (limits.workers || limits.prefetch) tuning_.emplace(Tuning{Tuner(limits, workers, prefetch)});
  reset_stats();
}

LoaderCore::~LoaderCore() {
  stop();
}

void LoaderCore::start_epoch(std::uint64_t epoch) {
  stop();
  stopping.store(false);
  EpochPlan plan;
  {
    std::lock_guard lock(place_mutex_);
    if (pending_ && pending_->epoch == epoch) plan = plan_from(*pending_);
    pending_.reset();  // a restored state is for the start of its own epoch only
    place_ = Place{epoch, plan.closed, plan.consumed, plan.echoes_done, 0};
  }
  std::shared_ptr<EpochRun> run;
  arena_.execute([&] { run = std::make_shared<EpochRun>(*this, epoch, plan); });
  {
    std::lock_guard lock(place_mutex_);
    place_.batches = run->fresh_batches();
  }
  {
    std::lock_guard lock(run_mutex_);
    run_ = run;
  }
  run->feed();
}

Delivery LoaderCore::next(Deadline deadline) {
  std::shared_ptr<EpochRun> run;
  {
    std::lock_guard lock(run_mutex_);
    run = run_;
  }
  if (!run) return {};
  const Delivery d = run->next(deadline);
  if (d.slot != nullptr) note_delivery(d);
  if (d.slot != nullptr && tuning_) maybe_tune();
  return d;
}

void LoaderCore::maybe_tune() {
  Tuning& t = *tuning_;
  const std::uint64_t fresh = fresh_.load(std::memory_order_relaxed);
  const std::int64_t now = profiler::now_ns();
  const std::int64_t wait = counters.busy_ns[static_cast<std::size_t>(Stage::wait)].load();
  auto restart = [&] {
    t.batches = fresh;
    t.start_ns = now;
    t.wait_ns = wait;
    for (std::size_t i = 0; i < kStageCount; ++i) t.busy_ns[i] = counters.busy_ns[i].load();
  };
  if (t.start_ns == 0 || fresh < t.batches || wait < t.wait_ns)
    return restart();  // first, or reset
  if (fresh < t.batches + t.tuner.window_batches() || now - t.start_ns < kMinTuneWindowNs) return;
  TunerWindow w;
  w.wall_ns = now - t.start_ns;
  w.wait_ns = wait - t.wait_ns;
  std::int64_t most = 0;
  for (const Stage s : {Stage::read, Stage::decode, Stage::assemble, Stage::normalize}) {
    const std::size_t i = static_cast<std::size_t>(s);
    const std::int64_t busy = counters.busy_ns[i].load() - t.busy_ns[i];
    w.loader_busy_ns += std::max<std::int64_t>(0, busy);
    if (busy > most) {
      most = busy;
      w.busiest = s;
    }
  }
  restart();
  if (auto change = t.tuner.observe(w)) {
    change->time_ns = now;
    apply(std::move(*change));
  }
}

void LoaderCore::apply(TuningChange change) {
  if (change.knob == Knob::workers) {
    GPUFEED_RANGE_ARG("tune workers", change.to);
    gate_->set_active(change.to);
  } else {
    GPUFEED_RANGE_ARG("tune prefetch", change.to);
    slot_limit_.store(change.to + extra_slots(options), std::memory_order_relaxed);
    std::shared_ptr<EpochRun> run;
    {
      std::lock_guard lock(run_mutex_);
      run = run_;
    }
    if (run) run->feed();  // a deeper queue: start the batches it now has room for
  }
  std::lock_guard lock(tuning_log_mutex_);
  tuning_log_.push_back(std::move(change));
}

unsigned LoaderCore::active_workers() const {
  return gate_ ? gate_->active() : static_cast<unsigned>(arena_.max_concurrency());
}

void LoaderCore::note_delivery(const Delivery& d) {
  batches_.fetch_add(1, std::memory_order_relaxed);
  samples_.fetch_add(d.slot->count, std::memory_order_relaxed);
  (d.echoed ? echoed_ : fresh_).fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(place_mutex_);
  if (d.echoed) {
    ++place_.echo_repeats;
  } else {
    place_.consumed += d.slot->count;
    place_.echo_repeats = 0;
  }
}

std::uint64_t LoaderCore::batches_for(std::uint64_t samples) const {
  const std::uint64_t b = options.batch_size;
  return options.drop_last_batch ? samples / b : (samples + b - 1) / b;
}

std::uint64_t LoaderCore::batches_in_epoch() const {
  std::lock_guard lock(place_mutex_);
  return place_.batches;
}

void LoaderCore::stop() {
  std::shared_ptr<EpochRun> run;
  {
    std::lock_guard lock(run_mutex_);
    run = std::move(run_);
  }
  stopping.store(true);
  if (run) run->cancel_and_wait();
}

void LoaderCore::release_ref(Slot* slot) noexcept {
  if (slot->refs.fetch_sub(1) != 1) return;
  if (slot->echo_target) {
    echo_pool.release(slot);
    return;
  }
  pool.release(slot);
  std::shared_ptr<EpochRun> run;
  {
    std::lock_guard lock(run_mutex_);
    run = run_;
  }
  if (run) run->feed();
}

void LoaderCore::prepare(Slot& slot, std::uint64_t epoch, std::uint64_t position,
                         std::uint64_t index, const std::vector<std::uint64_t>& order) const {
  const std::uint64_t first = position * options.batch_size;
  const auto count =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(options.batch_size, order.size() - first));
  slot.epoch = epoch;
  slot.index = index;
  slot.count = count;
  slot.repeat = 0;
  const auto& labels = source.labels();
  for (std::uint32_t i = 0; i < count; ++i) {
    slot.indices[i] = order[first + i];
    slot.labels[i] = labels[slot.indices[i]];
    slot.by_chunk[i] = i;
  }
  const std::uint64_t k = source.samples_per_chunk();
  std::sort(
      slot.by_chunk.begin(), slot.by_chunk.begin() + count,
      [&](std::uint32_t a, std::uint32_t b) { return slot.indices[a] / k < slot.indices[b] / k; });
}

void LoaderCore::copy_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) {
  const formats::DatasetReader& reader = *source.raw;
  const std::uint64_t k = reader.samples_per_chunk();
  const std::uint64_t sample_bytes = shape.bytes();
  std::int64_t read_ns = 0;
  const std::int64_t t0 = profiler::now_ns();
  std::uint32_t i = begin;
  while (i < end && !stopping.load(std::memory_order_relaxed)) {
    const std::uint64_t chunk = slot.indices[slot.by_chunk[i]] / k;
    bool hit = true;
    const std::int64_t r0 = profiler::now_ns();
    ChunkHandle data = cache.get(
        chunk, reader.chunk_buffer_bytes(),
        [&](std::span<std::uint8_t> out) {
          GPUFEED_RANGE(stage_name(Stage::read));
          reader.read_chunk(chunk, out);
        },
        &hit);
    if (!hit) {
      const std::int64_t r = profiler::now_ns() - r0;
      read_ns += r;
      counters.add(Stage::read, r);
      chunk_reads_.fetch_add(1, std::memory_order_relaxed);
      bytes_read_.fetch_add(reader.chunk_buffer_bytes(), std::memory_order_relaxed);
    }
    const std::uint64_t chunk_first = chunk * k;
    for (; i < end && slot.indices[slot.by_chunk[i]] / k == chunk; ++i) {
      const std::uint32_t pos = slot.by_chunk[i];
      std::memcpy(slot.raw.get() + pos * sample_bytes,
                  data->bytes.get() + (slot.indices[pos] - chunk_first) * sample_bytes,
                  sample_bytes);
    }
  }
  counters.add(Stage::assemble, profiler::now_ns() - t0 - read_ns, 0);
}

void LoaderCore::assemble(Slot& slot) {
  if (staging) staging->reclaim(slot, counters);
  // Injected stalls sit outside the assemble range, in a range of their own stage.
  maybe_stall(Stage::read, slot);
  maybe_stall(Stage::decode, slot);
  maybe_stall(Stage::assemble, slot);
  GPUFEED_RANGE(stage_name(Stage::assemble));
  with_memory_advice([&] {
    run_hook(test_hooks.assembling);
    const std::uint32_t grain = std::max(16u, slot.count / (2 * active_workers()));
    oneapi::tbb::parallel_for(
        oneapi::tbb::blocked_range<std::uint32_t>(0, slot.count, grain),
        [&](const auto& r) {
          if (image_samples) {
            decode_samples(slot, r.begin(), r.end());
          } else {
            copy_samples(slot, r.begin(), r.end());
          }
          if (options.augment == Augment::flip && !image_samples)
            flip_samples(slot, r.begin(), r.end());
        },
        oneapi::tbb::simple_partitioner());
  });
  counters.add(image_samples ? Stage::decode : Stage::assemble, 0, 1);
}

void LoaderCore::decode_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) {
  for (std::uint32_t i = begin; i < end && !stopping.load(std::memory_order_relaxed); ++i) {
    decode_or_replace(slot, i);
  }
}

void LoaderCore::decode_or_replace(Slot& slot, std::uint32_t position) {
  std::uint8_t* out = slot.raw.get() + position * shape.bytes();
  const std::uint64_t n = source.num_samples();
  // --on-error skip: a sample that cannot be decoded is replaced by the next one that can
  // (a fixed stride through the dataset, so the replacement is reproducible too).
  constexpr int kReplacementTries = 16;
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t sample = slot.indices[position];
    try {
      const DecodeTiming t = image_samples->decode(sample, slot.epoch, out);
      counters.add(Stage::read, t.read_ns, 1);
      counters.add(Stage::decode, t.decode_ns, 0);
      bytes_read_.fetch_add(source.jpeg->sample_size(sample), std::memory_order_relaxed);
      return;
    } catch (const formats::IoError&) {
      throw;  // the disk failed, not the sample: skipping would hide it
    } catch (const formats::FormatError&) {
      if (options.on_error == OnError::fail || attempt == kReplacementTries) throw;
      skipped_.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t replacement = (sample + 7919) % n;
      slot.indices[position] = replacement;
      slot.labels[position] = source.labels()[replacement];
    }
  }
}

void LoaderCore::flip_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) const {
  // The same positions copy_samples() filled for this range: by_chunk[begin, end).
  for (std::uint32_t i = begin; i < end; ++i) {
    const std::uint32_t pos = slot.by_chunk[i];
    if (!formats::random_flip(options.seed, slot.epoch, slot.indices[pos])) continue;
    flip_horizontal(slot.raw.get() + pos * shape.bytes(), shape.height, shape.width, shape.channels,
                    shape.layout == formats::Layout::nchw);
  }
}

void LoaderCore::maybe_stall(Stage stage, const Slot& slot) {
  const auto& stall = options.inject_stall;
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

void LoaderCore::normalize(Slot& slot) {
  maybe_stall(Stage::normalize, slot);
  GPUFEED_RANGE(stage_name(Stage::normalize));
  with_memory_advice([&] {
    run_hook(test_hooks.normalizing);
    if (staging) {
      staging->submit(slot);
      counters.add(Stage::h2d, 0, 1);
    } else {
      normalize_on_host(slot);
    }
  });
  counters.add(Stage::normalize, 0, 1);
}

void LoaderCore::normalize_on_host(Slot& slot) {
  const std::uint64_t bytes = shape.bytes();
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<std::uint32_t>(0, slot.count, 16),
      [&](const auto& r) {
        const std::int64_t t0 = profiler::now_ns();
        float* out = reinterpret_cast<float*>(slot.images.get());
        normalize_cpu(slot.raw.get() + r.begin() * bytes, shape, r.size(), norm,
                      out + r.begin() * bytes);
        counters.add(Stage::normalize, profiler::now_ns() - t0, 0);
      },
      oneapi::tbb::simple_partitioner());
}

bool LoaderCore::reaugments_echoes() const {
  return options.reaugment_echoes && echo.enabled() &&
         (options.augment == Augment::flip || options.augment == Augment::crop_flip);
}

void LoaderCore::reaugment(Slot& from, Slot& target, std::uint32_t repeat) {
  GPUFEED_RANGE(stage_name(Stage::echo));
  const std::int64_t t0 = profiler::now_ns();
  if (&target != &from) {
    target.count = from.count;
    target.epoch = from.epoch;
    target.index = from.index;
    std::copy_n(from.labels.begin(), from.count, target.labels.begin());
    std::copy_n(from.indices.begin(), from.count, target.indices.begin());
  }
  if (staging) {
    // The device keeps the fresh batch's pixels; the kernel applies this repeat's flips.
    std::vector<std::uint8_t> flips(from.count);
    for (std::uint32_t i = 0; i < from.count; ++i) {
      flips[i] = echo_flip(options.seed, from.epoch, from.indices[i], repeat) ? 1 : 0;
    }
    staging->reaugment(from, target, flips, repeat);
  } else {
    if (&target != &from) {
      std::memcpy(target.raw.get(), from.raw.get(), from.count * shape.bytes());
      target.repeat = from.repeat;
    }
    // The host pixels show repeat target.repeat; mirror the samples whose flip changes.
    for (std::uint32_t i = 0; i < target.count; ++i) {
      const std::uint64_t sample = target.indices[i];
      if (echo_flip(options.seed, target.epoch, sample, target.repeat) ==
          echo_flip(options.seed, target.epoch, sample, repeat)) {
        continue;
      }
      flip_horizontal(target.raw.get() + i * shape.bytes(), shape.height, shape.width,
                      shape.channels, shape.layout == formats::Layout::nchw);
    }
    // The consumer runs this inside EpochRun::next(). Isolated, the thread waiting for the
    // parallel_for runs only the parallel_for's own tasks, not a flow-graph task of this arena
    // that would keep the consumer waiting for a batch it does not need.
    arena_.execute(
        [&] { oneapi::tbb::this_task_arena::isolate([&] { normalize_on_host(target); }); });
  }
  target.repeat = repeat;
  reaugmented_.fetch_add(1, std::memory_order_relaxed);
  counters.add(Stage::echo, profiler::now_ns() - t0, 0);
}

LoaderStats LoaderCore::stats() const {
  LoaderStats s;
  for (std::size_t i = 0; i < kStageCount; ++i) {
    s.stages[i].busy_ns = counters.busy_ns[i].load(std::memory_order_relaxed);
    s.stages[i].items = counters.items[i].load(std::memory_order_relaxed);
  }
  if (!image_samples) s.stages[static_cast<std::size_t>(Stage::read)].items = chunk_reads_.load();
  s.skipped_samples = skipped_.load();
  s.wall_ns = profiler::now_ns() - stats_start_ns_.load();
  s.workers = active_workers();
  s.prefetch = slot_limit() - extra_slots(options);
  {
    std::lock_guard lock(tuning_log_mutex_);
    s.tuning = tuning_log_;
  }
  s.batches = batches_.load();
  s.samples = samples_.load();
  s.fresh_batches = fresh_.load();
  s.echoed_batches = echoed_.load();
  s.reaugmented_batches = reaugmented_.load();
  const std::uint64_t asks = ready_count_.load();
  s.mean_ready_batches =
      asks ? static_cast<double>(ready_sum_.load()) / static_cast<double>(asks) : 0.0;
  s.max_ready_batches = ready_max_.load();
  s.ready_batches = ready_last_.load(std::memory_order_relaxed);
  s.chunk_reads = chunk_reads_.load();
  s.bytes_read = bytes_read_.load();
  const ChunkCacheStats c = cache.stats();
  s.cache_hits = c.hits;
  s.cache_misses = c.misses;
  s.cache_peak_bytes = c.peak_bytes;
  s.slot_bytes = pool.bytes() + echo_pool.bytes();
  if (staging) {
    const StagingStats g = staging->stats();
    s.pinned = g.pinned;
    s.pinned_bytes = g.pinned_bytes;
    s.device_bytes = g.device_bytes;
    s.pinned_h2d_bytes_per_s = g.pinned_h2d_bytes_per_s;
    s.pageable_h2d_bytes_per_s = g.pageable_h2d_bytes_per_s;
  }
  return s;
}

void LoaderCore::reset_stats() {
  counters.reset();
  batches_ = 0;
  samples_ = 0;
  fresh_ = 0;
  echoed_ = 0;
  reaugmented_ = 0;
  ready_sum_ = 0;
  ready_count_ = 0;
  ready_max_ = 0;
  ready_last_ = 0;
  chunk_reads_ = 0;
  bytes_read_ = 0;
  skipped_ = 0;
  stats_start_ns_ = profiler::now_ns();
}

}  // namespace gpufeed::detail

namespace gpufeed::detail {

void LoaderCore::note_ready_depth(std::size_t depth) noexcept {
  const auto d = static_cast<std::uint64_t>(depth);
  ready_sum_.fetch_add(d, std::memory_order_relaxed);
  ready_count_.fetch_add(1, std::memory_order_relaxed);
  ready_last_.store(d, std::memory_order_relaxed);
  std::uint64_t seen = ready_max_.load(std::memory_order_relaxed);
  while (d > seen && !ready_max_.compare_exchange_weak(seen, d)) {
  }
}

void LoaderCore::record_release(Slot& slot, std::span<void* const> streams) {
  if (staging) staging->record_release(slot, streams);
}
void LoaderCore::wait_ready(const Slot& slot, void* stream) const {
  if (staging) staging->wait_ready(slot, stream);
}
const void* LoaderCore::device_images(const Slot& slot) const {
  return staging ? slot.device->out.get() : nullptr;
}
const std::int64_t* LoaderCore::device_labels(const Slot& slot) const {
  return staging ? static_cast<const std::int64_t*>(slot.device->labels.get()) : nullptr;
}
formats::Layout LoaderCore::output_layout() const {
  return options.output_layout;
}

std::array<std::int64_t, 4> LoaderCore::output_shape(std::uint32_t count) const {
  const auto n = static_cast<std::int64_t>(count);
  const auto c = static_cast<std::int64_t>(shape.channels);
  const auto h = static_cast<std::int64_t>(shape.height);
  const auto w = static_cast<std::int64_t>(shape.width);
  if (options.output_layout == formats::Layout::nhwc) return {n, h, w, c};
  return {n, c, h, w};
}

}  // namespace gpufeed::detail
