#include "loader_core.hpp"

#include "cuda/staging.hpp"

#include <algorithm>
#include <string>

#include <oneapi/tbb/info.h>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"

namespace gpufeed::detail {

namespace {

constexpr std::uint64_t kMaxPoolBytes = 64ull << 30;
constexpr std::uint64_t kDefaultMemoryBudget = 1ull << 30;  // prefetch=auto
constexpr unsigned kMaxAutoPrefetch = 16;
constexpr unsigned kStartWorkers = 2;   // workers=auto starts here (or at the budget)
constexpr unsigned kStartPrefetch = 2;  // prefetch=auto starts here
constexpr std::int64_t kMinTuneWindowNs = 100'000'000;

/// The cores this process may run on (its affinity mask), not every core of the machine.
unsigned usable_cores() {
  return static_cast<unsigned>(std::max(1, oneapi::tbb::info::default_concurrency()));
}

unsigned cpu_budget(const LoaderOptions& o) {
  return o.cpu_budget != 0 ? o.cpu_budget : usable_cores();
}

/// The arena's threads: the workers asked for, or the CPU budget with workers=auto.
unsigned resolve_workers(const LoaderOptions& o) {
  if (o.workers.is_auto()) return cpu_budget(o);
  const unsigned workers = o.workers.value_or(0);
  return workers != 0 ? workers : usable_cores();
}

/// Slots besides the prefetched batches: the consumer's and the echo stage's.
std::uint32_t extra_slots(const LoaderOptions& o) {
  return 1 + (o.echo.enabled() ? 1 : 0);
}

/// Host bytes a batch slot holds per byte of uint8 sample: the sample as read (1) and its
/// float32 output on the CPU device (4). The budget counts both on every device.
constexpr std::uint64_t kSlotBytesPerSampleByte = 1 + sizeof(float);

std::uint64_t slot_bytes(const LoaderOptions& o, std::uint64_t sample_bytes) {
  return std::uint64_t{o.batch_size} * sample_bytes * kSlotBytesPerSampleByte;
}

/// prefetch=auto: the deepest queue the memory budget holds, 1 to 16 batches.
unsigned max_auto_prefetch(const LoaderOptions& o, std::uint64_t sample_bytes) {
  const std::uint64_t budget = o.memory_bytes != 0 ? o.memory_bytes : kDefaultMemoryBudget;
  const std::uint64_t per_slot = std::max<std::uint64_t>(1, slot_bytes(o, sample_bytes));
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

std::uint64_t count_batches(const LoaderOptions& o, const Sampler& sampler) {
  const std::uint64_t per_rank = sampler.samples_per_rank();
  if (o.batch_size > per_rank) {
    throw OptionError("batch_size", "{batch_size}=" + std::to_string(o.batch_size) +
                                        " is larger than the " + std::to_string(per_rank) +
                                        " samples rank " +
                                        std::to_string(sampler.options().shard.rank) +
                                        " reads per epoch; lower {batch_size} or use a larger "
                                        "dataset");
  }
  return o.drop_last ? per_rank / o.batch_size : (per_rank + o.batch_size - 1) / o.batch_size;
}

std::uint32_t slot_count(const LoaderOptions& o, std::uint64_t sample_bytes) {
  // The prefetched batches, the consumer's, and the one the echo stage keeps for repeating.
  const unsigned prefetch =
      o.prefetch.is_auto() ? max_auto_prefetch(o, sample_bytes) : o.prefetch.value_or(0);
  const std::uint32_t slots = prefetch + extra_slots(o);
  const std::uint64_t bytes = std::uint64_t{slots} * slot_bytes(o, sample_bytes);
  if (bytes > kMaxPoolBytes) {
    throw OptionError(
        "batch_size",
        "{batch_size}=" + std::to_string(o.batch_size) + " with {prefetch}=" + o.prefetch.str() +
            " needs " + std::to_string(bytes >> 20) + " MiB of batch slots (limit " +
            std::to_string(kMaxPoolBytes >> 20) + " MiB); lower {batch_size} or {prefetch}");
  }
  return slots;
}

/// `o` with its device resolved (a CPU or an indexed CUDA device), checked against the
/// output settings only a CUDA device delivers.
LoaderOptions with_resolved_device(LoaderOptions o) {
  check_options(o);
  o.device = resolve_device(o.device);
  if (o.device.is_cpu() &&
      (o.dtype != DType::float32 || o.output_layout != formats::Layout::nchw)) {
    throw OptionError("dtype", "{dtype}=" + to_string(o.dtype) +
                                   ", {output_layout}=" + formats::to_string(o.output_layout) +
                                   " needs a CUDA device; the CPU device delivers float32 NCHW");
  }
  return o;
}

HostAllocator host_allocator(CudaStaging* staging) {
  if (staging == nullptr) return allocate_aligned;
  return [staging](std::uint64_t bytes) { return staging->allocate_host(bytes); };
}

}  // namespace

LoaderCore::LoaderCore(LoaderOptions opts)
    : options(with_resolved_device(std::move(opts))),
      arena_(static_cast<int>(resolve_workers(options)), 0),
      work_(options, arena_),
      sampler_(work_.source().num_samples(), work_.source().samples_per_chunk(),
               sampler_options(options)),
      batches_per_epoch_(count_batches(options, sampler_)),
      slots_{
          SlotPool(slot_count(options, shape().bytes()), options.batch_size, shape().bytes(),
                   work_.staging() ? 0 : shape().bytes() * sizeof(float),
                   host_allocator(work_.staging())),
          // On a CUDA device an echo is made from the source's device pixels: no host pixels.
          SlotPool(work_.reaugments_echoes() ? 1 : 0, options.batch_size,
                   work_.staging() ? 0 : shape().bytes(),
                   work_.staging() ? 0 : shape().bytes() * sizeof(float), allocate_aligned, true)} {
  // TBB's default market has hardware_concurrency - 1 worker threads; an arena asking for more
  // workers than that only gets them when the process-wide limit allows it.
  const int want = arena_.max_concurrency() + 1;
  if (want > static_cast<int>(oneapi::tbb::info::default_concurrency())) {
    thread_limit_.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(want));
  }
  if (CudaStaging* staging = work_.staging()) {
    for (const auto& slot : slots_.batches.slots()) staging->attach(*slot);
    for (const auto& slot : slots_.echoes.slots()) staging->attach(*slot);
  }
  arena_.initialize();
  const auto threads = static_cast<unsigned>(arena_.max_concurrency());
  TunerLimits limits;
  limits.workers = options.workers.is_auto();
  limits.prefetch = options.prefetch.is_auto();
  limits.max_workers = threads;
  limits.max_prefetch = slots_.batches.size() - extra_slots(options);
  const unsigned workers = limits.workers ? std::min(kStartWorkers, threads) : threads;
  const unsigned prefetch = limits.prefetch ? std::min(kStartPrefetch, limits.max_prefetch)
                                            : options.prefetch.value_or(0);
  if (limits.workers) gate_.emplace(arena_, threads, workers);
  work_.set_workers(workers);
  slots_.limit.store(prefetch + extra_slots(options));
  if (limits.workers || limits.prefetch) tuning_.emplace(Tuning{Tuner(limits, workers, prefetch)});
  reset_stats();
}

LoaderCore::~LoaderCore() {
  stop();
}

void LoaderCore::start_epoch(std::uint64_t epoch) {
  stop();
  work_.set_stopping(false);
  EpochPlan plan;
  {
    std::lock_guard lock(place_mutex_);
    if (pending_ && pending_->epoch == epoch) plan = plan_from(*pending_);
    pending_.reset();  // a restored state is for the start of its own epoch only
    place_ = Place{epoch, plan.closed, plan.consumed, plan.echoes_done, 0};
  }
  EpochSpec spec;
  spec.epoch = epoch;
  spec.order = sampler_.epoch_order(epoch, plan.closed, plan.start);
  spec.batches = batches_for(spec.order.size());
  spec.index_base = plan.start / options.batch_size;
  spec.replay = plan.replay;
  spec.echoes_done = plan.echoes_done;
  spec.echo = options.echo;
  std::shared_ptr<EpochRun> run;
  // The graph's tasks run in the arena it is built in.
  arena_.execute([&] { run = std::make_shared<EpochRun>(work_, slots_, std::move(spec)); });
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

std::shared_ptr<EpochRun> LoaderCore::current_run() noexcept {
  std::lock_guard lock(run_mutex_);
  return run_;
}

Delivery LoaderCore::next(Deadline deadline) {
  const std::shared_ptr<EpochRun> run = current_run();
  if (!run) return {};
  const Delivery d = run->next(deadline);
  work_.counters.add(Stage::wait, d.wait_ns, d.timed_out ? 0 : 1);
  delivered_.note_ready_depth(d.ready_depth);
  if (d.slot != nullptr) {
    delivered_.note_delivery(d.slot->count, d.echoed);
    advance_place(d);
  }
  if (d.slot != nullptr && tuning_) maybe_tune(d.slot->epoch);
  return d;
}

void LoaderCore::maybe_tune(std::uint64_t epoch) {
  Tuning& t = *tuning_;
  const std::uint64_t fresh = delivered_.fresh_batches();
  const std::int64_t now = profiler::now_ns();
  const StageCounters& counters = work_.counters;
  const std::int64_t wait = counters.busy_ns[static_cast<std::size_t>(Stage::wait)].load();
  auto restart = [&] {
    t.batches = fresh;
    t.start_ns = now;
    t.wait_ns = wait;
    t.epoch = epoch;
    for (std::size_t i = 0; i < kStageCount; ++i) t.busy_ns[i] = counters.busy_ns[i].load();
  };
  // The first window, one after reset_stats(), or one across the start of an epoch (its wait
  // while the queue fills again says nothing about the settings): start afresh.
  if (t.start_ns == 0 || fresh < t.batches || wait < t.wait_ns || epoch != t.epoch)
    return restart();
  if (fresh < t.batches + t.tuner.window_batches() || now - t.start_ns < kMinTuneWindowNs) return;
  TunerWindow w;
  w.wall_ns = now - t.start_ns;
  w.wait_ns = wait - t.wait_ns;
  w.batches = fresh - t.batches;
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
    work_.set_workers(gate_->active());
  } else {
    GPUFEED_RANGE_ARG("tune prefetch", change.to);
    slots_.limit.store(change.to + extra_slots(options), std::memory_order_relaxed);
    // A deeper queue: start the batches it now has room for.
    if (const auto run = current_run()) run->feed();
  }
  std::lock_guard lock(tuning_log_mutex_);
  tuning_log_.push_back(std::move(change));
}

unsigned LoaderCore::active_workers() const {
  return gate_ ? gate_->active() : static_cast<unsigned>(arena_.max_concurrency());
}

void LoaderCore::advance_place(const Delivery& d) {
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
  return options.drop_last ? samples / b : (samples + b - 1) / b;
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
  work_.set_stopping(true);
  // In the arena and isolated: waiting for the graph, this thread runs none of the arena's
  // other tasks, such as one that parks a worker (WorkerGate) and would block it for good.
  if (run) {
    arena_.execute([&] { oneapi::tbb::this_task_arena::isolate([&] { run->cancel_and_wait(); }); });
  }
}

void LoaderCore::release_ref(Slot* slot) noexcept {
  if (!slots_.unref(slot)) return;
  // The slot may be from an epoch that ended: it feeds the one in progress.
  if (const std::shared_ptr<EpochRun> run = current_run()) run->feed();
}

LoaderStats LoaderCore::stats() const {
  LoaderStats s;
  work_.fill_stats(s);
  delivered_.fill(s);
  s.workers = active_workers();
  s.prefetch = slots_.limit.load(std::memory_order_relaxed) - extra_slots(options);
  {
    std::lock_guard lock(tuning_log_mutex_);
    s.tuning = tuning_log_;
  }
  s.slot_bytes = slots_.batches.bytes() + slots_.echoes.bytes();
  return s;
}

void LoaderCore::reset_stats() {
  work_.reset_stats();
  delivered_.reset();
}

void LoaderCore::record_release(Slot& slot, std::span<void* const> streams) {
  if (CudaStaging* staging = work_.staging()) staging->record_release(slot, streams);
}
void LoaderCore::wait_ready(const Slot& slot, void* stream) const {
  if (CudaStaging* staging = work_.staging()) staging->wait_ready(slot, stream);
}
const void* LoaderCore::device_images(const Slot& slot) const {
  return work_.staging() ? slot.device->out.get() : nullptr;
}
const std::int64_t* LoaderCore::device_labels(const Slot& slot) const {
  return work_.staging() ? static_cast<const std::int64_t*>(slot.device->labels.get()) : nullptr;
}
formats::Layout LoaderCore::output_layout() const {
  return options.output_layout;
}

std::array<std::int64_t, 4> LoaderCore::output_shape(std::uint32_t count) const {
  const auto n = static_cast<std::int64_t>(count);
  const auto c = static_cast<std::int64_t>(shape().channels);
  const auto h = static_cast<std::int64_t>(shape().height);
  const auto w = static_cast<std::int64_t>(shape().width);
  if (options.output_layout == formats::Layout::nhwc) return {n, h, w, c};
  return {n, c, h, w};
}

}  // namespace gpufeed::detail
