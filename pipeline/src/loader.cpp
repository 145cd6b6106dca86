#include "gpufeed/pipeline/loader.hpp"

#include <cstdio>

#include "gpufeed/base/errors.hpp"

#include "loader_core.hpp"

namespace gpufeed::pipeline {

// ---- Batch ----

Batch::Batch(std::shared_ptr<detail::LoaderCore> core, detail::Slot* slot, bool echoed) noexcept
    : core_(std::move(core)), slot_(slot), echoed_(echoed) {}

Batch::Batch(Batch&& other) noexcept
    : core_(std::move(other.core_)),
      slot_(std::exchange(other.slot_, nullptr)),
      echoed_(other.echoed_) {}

namespace {

/// Releases `batch` where nothing may throw (a destructor, a noexcept move): the slot always
/// returns to the pool; a failure to record the device-side release (a CUDA error, which also
/// fails the loader's next device call) is reported on stderr instead of terminating.
void release_quietly(Batch& batch) noexcept {
  try {
    batch.release();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpufeed: releasing a batch: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "gpufeed: releasing a batch failed\n");
  }
}

}  // namespace

Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    release_quietly(*this);
    core_ = std::move(other.core_);
    slot_ = std::exchange(other.slot_, nullptr);
    echoed_ = other.echoed_;
  }
  return *this;
}

Batch::~Batch() {
  release_quietly(*this);
}

void Batch::release() {
  release_after(nullptr);
}

void Batch::release_after(void* stream) {
  release_after(std::span<void* const>(&stream, 1));
}

void Batch::release_after(std::span<void* const> streams) {
  if (slot_ == nullptr) return;
  detail::Slot* slot = std::exchange(slot_, nullptr);
  auto core = std::move(core_);
  try {
    core->record_release(*slot, streams);
  } catch (...) {
    core->release_ref(slot);  // the slot goes back even when recording the event failed
    throw;
  }
  core->release_ref(slot);
}

void Batch::wait_ready(void* stream) const {
  core_->wait_ready(*slot_, stream);
}

std::uint64_t Batch::epoch() const {
  return slot_->epoch;
}
std::uint64_t Batch::index() const {
  return slot_->index;
}
std::uint32_t Batch::size() const {
  return slot_->count;
}
formats::SampleShape Batch::sample_shape() const {
  return slot_->format->sample;
}

const LabelMix& Loader::label_mix() const {
  return core_->label_mix();
}

const std::vector<std::string>& Loader::notices() const {
  return core_->notices();
}

const void* Batch::host_images() const {
  return slot_->images.get();
}

std::span<const float> Batch::images() const {
  if (!slot_->images || slot_->format->dtype != DType::float32) return {};
  return {reinterpret_cast<const float*>(slot_->images.get()),
          slot_->count * slot_->format->sample.bytes()};
}
Device Batch::device() const {
  return slot_->format->device;
}
DType Batch::dtype() const {
  return slot_->format->dtype;
}
formats::Layout Batch::layout() const {
  return slot_->format->layout;
}
std::array<std::int64_t, 4> Batch::shape() const {
  return slot_->format->output_shape(slot_->count);
}
const void* Batch::device_images() const {
  return slot_->device_images();
}
const std::int64_t* Batch::device_labels() const {
  return slot_->device_labels();
}
std::span<const std::int64_t> Batch::labels() const {
  return {slot_->labels.data(), slot_->count};
}
std::span<const std::uint64_t> Batch::sample_indices() const {
  return {slot_->indices.data(), slot_->count};
}
std::span<const std::uint8_t> Batch::raw() const {
  if (!slot_->raw) return {};
  return {slot_->raw.get(), slot_->count * slot_->format->sample.bytes()};
}

// ---- Epoch ----

Epoch::iterator::iterator(Loader* loader) : loader_(loader), batch_(loader->next()) {}

Epoch::iterator& Epoch::iterator::operator++() {
  batch_.release();  // return the slot before waiting for the next batch
  batch_ = loader_->next();
  return *this;
}

// ---- Loader ----

namespace {

/// `paths` named in `path` when it names nothing: messages and states speak of the dataset.
LoaderOptions with_dataset_name(LoaderOptions o) {
  if (o.source.path.empty() && o.source.paths.size() == 1) o.source.path = o.source.paths.front();
  if (o.source.path.empty() && o.source.paths.size() > 1) {
    o.source.path =
        o.source.paths.front() + " (and " + std::to_string(o.source.paths.size() - 1) + " more)";
  }
  return o;
}

}  // namespace

Loader::Loader(LoaderOptions options)
    : core_(std::make_shared<detail::LoaderCore>(with_dataset_name(std::move(options)))) {}

Loader::~Loader() {
  core_->stop();
}

Epoch Loader::epoch(std::uint64_t epoch) {
  start_epoch(epoch);
  return Epoch(this);
}

void Loader::start_epoch(std::uint64_t epoch) {
  core_->start_epoch(epoch);
}

Batch Loader::next() {
  const detail::Delivery d = core_->next();
  return d.slot ? Batch(core_, d.slot, d.echoed) : Batch();
}

std::optional<Batch> Loader::try_next(std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const detail::Delivery d = core_->next(deadline);
  if (d.timed_out) return std::nullopt;
  return d.slot ? Batch(core_, d.slot, d.echoed) : Batch();
}

const LoaderOptions& Loader::options() const {
  return core_->options;
}
const formats::ShardedDataset& Loader::dataset() const {
  return core_->source().dataset();
}
const formats::RawShards* Loader::raw_dataset() const {
  return core_->source().raw.get();
}
const formats::JpegShards* Loader::jpeg_dataset() const {
  return core_->source().jpeg.get();
}
formats::SampleShape Loader::sample_shape() const {
  return core_->shape();
}
std::uint64_t Loader::batches_per_epoch() const {
  return core_->batches_per_epoch();
}
std::uint64_t Loader::samples_per_epoch() const {
  return core_->sampler().samples_per_rank();
}
std::uint64_t Loader::batches_in_epoch() const {
  return core_->place().batches();
}
LoaderState Loader::state() const {
  return core_->place().state();
}
void Loader::restore(const LoaderState& state) {
  core_->place().restore(state);
}
unsigned Loader::workers() const {
  return core_->stats().workers;
}
LoaderStats Loader::stats() const {
  return core_->stats();
}
void Loader::add_stage_work(Stage stage, std::int64_t busy_ns, std::uint64_t items) {
  core_->add_stage_work(stage, busy_ns, items);
}

void Loader::reset_stats() {
  core_->reset_stats();
}

}  // namespace gpufeed::pipeline
