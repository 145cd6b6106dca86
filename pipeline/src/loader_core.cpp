#include "loader_core.hpp"

#include "cuda/staging.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <oneapi/tbb/info.h>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"

namespace gpufeed::pipeline::detail {

namespace {

constexpr unsigned kStartWorkers = 2;  // workers=auto starts here (or at the budget)

/// The arena's threads: the workers asked for, or the CPU budget with workers=auto; what is
/// left open (workers=0, cpu_budget=0) is the rank's share of the cores, so the ranks of a node
/// (and the tuner, which stays within the arena) take its cores once between them.
unsigned resolve_workers(const LoaderOptions& o, const CpuShare& share) {
  if (o.resources.workers.is_auto())
    return o.resources.cpu_budget != 0 ? o.resources.cpu_budget : share.cores;
  const unsigned workers = o.resources.workers.value_or(0);
  return workers != 0 ? workers : share.cores;
}

SamplerOptions sampler_options(const LoaderOptions& o) {
  SamplerOptions s;
  s.order = o.sampling.order;
  s.seed = o.sampling.seed;
  s.shard = o.sampling.shard ? *o.sampling.shard : Shard::from_environment();
  s.drop_tail = o.sampling.drop_tail;
  s.chunk_window = o.sampling.chunk_window;
  return s;
}

std::uint64_t count_batches(const LoaderOptions& o, const Sampler& sampler) {
  const std::uint64_t per_rank = sampler.samples_per_rank();
  if (o.sampling.batch_size > per_rank) {
    throw OptionError("batch_size", "{batch_size}=" + std::to_string(o.sampling.batch_size) +
                                        " is larger than the " + std::to_string(per_rank) +
                                        " samples rank " +
                                        std::to_string(sampler.options().shard.rank) +
                                        " reads per epoch; lower {batch_size} or use a larger "
                                        "dataset");
  }
  return o.sampling.drop_last ? per_rank / o.sampling.batch_size
                              : (per_rank + o.sampling.batch_size - 1) / o.sampling.batch_size;
}

/// A file whose labels run in sorted stretches, read in chunk order: batches of few classes.
std::vector<std::string> order_notices(const LoaderOptions& o, const LabelMix& mix) {
  if (o.sampling.order != Order::chunk || !mix.poor()) return {};
  const auto whole = [](double v) { return std::to_string(std::lround(v)); };
  return {o.source.path +
          ": its labels run in sorted stretches, so batches in {order}=chunk hold " +
          whole(mix.median_distinct) + " distinct labels (median) against " +
          whole(mix.random_distinct) +
          " in a random order; repack it shuffled (h5pack convert and gpufeed.pack shuffle "
          "unless told to keep the order) or use {order}=random"};
}

/// `o` with its device resolved (a CPU or an indexed CUDA device), checked against the
/// output settings only a CUDA device delivers.
LoaderOptions with_resolved_device(LoaderOptions o) {
  check_options(o);
  o.output.device = resolve_device(o.output.device);
  if (o.output.device.is_cpu() &&
      ((o.output.dtype != DType::float32 && o.output.dtype != DType::uint8) ||
       o.output.layout != formats::Layout::nchw)) {
    throw OptionError("dtype", "{dtype}=" + to_string(o.output.dtype) +
                                   ", {output_layout}=" + formats::to_string(o.output.layout) +
                                   " needs a CUDA device; the CPU device delivers float32 or "
                                   "uint8, NCHW");
  }
  return o;
}

/// What the slots deliver: the resolved device's output of samples of `sample`.
SlotFormat slot_format(const LoaderOptions& o, const formats::SampleShape& sample) {
  return {o.output.device, o.output.dtype, o.output.layout, sample};
}

std::vector<std::string> loader_notices(const LoaderOptions& o, const LabelMix& mix,
                                        const std::string& decode_notice) {
  std::vector<std::string> notices = order_notices(o, mix);
  if (!decode_notice.empty()) notices.push_back(decode_notice);
  return notices;
}

HostAllocator host_allocator(CudaStaging* staging) {
  if (staging == nullptr) return allocate_aligned;
  return [staging](std::uint64_t bytes) { return staging->allocate_host(bytes); };
}

}  // namespace

LoaderCore::LoaderCore(LoaderOptions opts)
    : options(with_resolved_device(std::move(opts))),
      cpu_share_(this_process_share()),
      arena_(static_cast<int>(resolve_workers(options, cpu_share_)), 0),
      work_(options, arena_),
      sampler_(work_.source().shard_map(), sampler_options(options)),
      batches_per_epoch_(count_batches(options, sampler_)),
      label_mix_(pipeline::label_mix(work_.source().labels(), sampler_.global_order(0),
                                     options.sampling.batch_size)),
      notices_(loader_notices(options, label_mix_, work_.decode_notice())),
      slots_(plan_slots(options, shape().bytes(), work_.staging() != nullptr,
                        work_.reaugments_echoes(), work_.keeps_raw()),
             slot_format(options, shape()), host_allocator(work_.staging())),
      place_(options, work_.source(), sampler_) {
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
  limits.workers = options.resources.workers.is_auto();
  limits.prefetch = slots_.plan.tuned_prefetch;
  limits.max_workers = threads;
  limits.max_prefetch = slots_.plan.max_prefetch;
  const unsigned workers = limits.workers ? std::min(kStartWorkers, threads) : threads;
  const unsigned prefetch = slots_.plan.start_prefetch;
  if (limits.workers) gate_.emplace(arena_, threads, workers);
  work_.set_workers(workers);
  work_.set_threads(threads);
  slots_.set_prefetch(prefetch);
  if (limits.workers || limits.prefetch) tuning_.emplace(limits, workers, prefetch);
  reset_stats();
}

LoaderCore::~LoaderCore() {
  stop();
}

void LoaderCore::start_epoch(std::uint64_t epoch) {
  stop();
  work_.set_stopping(false);
  const EpochPlan plan = place_.start_epoch(epoch);
  EpochSpec spec;
  spec.epoch = epoch;
  spec.order = sampler_.epoch_order(epoch, plan.closed, plan.start);
  spec.batches = batches_for(spec.order.size());
  spec.index_base = plan.start / options.sampling.batch_size;
  spec.replay = plan.replay;
  spec.echoes_done = plan.echoes_done;
  spec.echo = options.echo;
  std::shared_ptr<EpochRun> run;
  // The graph's tasks run in the arena it is built in.
  arena_.execute([&] { run = std::make_shared<EpochRun>(work_, slots_, std::move(spec)); });
  place_.set_batches(run->fresh_batches());
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
    if (!d.echoed) work_.consumer_took(d.slot->count, d.wait_ns);
    delivered_.note_delivery(d.slot->count, d.echoed);
    place_.advance(d.slot->count, d.echoed);
  }
  if (d.slot != nullptr && tuning_) maybe_tune(d.slot->epoch);
  return d;
}

void LoaderCore::maybe_tune(std::uint64_t epoch) {
  if (const auto change =
          tuning_->observe(epoch, delivered_.fresh_batches(), work_.counters, profiler::now_ns())) {
    apply(*change);
    tuning_->record(*change);
  }
}

void LoaderCore::apply(const TuningChange& change) {
  if (change.knob == Knob::workers) {
    GPUFEED_RANGE_ARG("tune workers", change.to);
    gate_->set_active(change.to);
    work_.set_workers(gate_->active());
  } else {
    GPUFEED_RANGE_ARG("tune prefetch", change.to);
    slots_.set_prefetch(change.to);
    // A deeper queue: start the batches it now has room for.
    if (const auto run = current_run()) run->feed();
  }
}

unsigned LoaderCore::active_workers() const {
  return gate_ ? gate_->active() : static_cast<unsigned>(arena_.max_concurrency());
}

std::uint64_t LoaderCore::batches_for(std::uint64_t samples) const {
  const std::uint64_t b = options.sampling.batch_size;
  return options.sampling.drop_last ? samples / b : (samples + b - 1) / b;
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
  s.cpu_share = cpu_share_.cores;
  s.prefetch = slots_.prefetch();
  if (tuning_) s.tuning = tuning_->log();
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

}  // namespace gpufeed::pipeline::detail
