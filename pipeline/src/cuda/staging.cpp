#include "cuda/staging.hpp"

#include <cstdio>
#include <cstring>

namespace gpufeed::pipeline::detail {

void DeviceSlotFree::operator()(DeviceSlot* d) const noexcept {
  delete d;
}

const void* Slot::device_images() const noexcept {
  return device ? device->out.get() : nullptr;
}
const std::int64_t* Slot::device_labels() const noexcept {
  return device ? static_cast<const std::int64_t*>(device->labels.get()) : nullptr;
}

CudaStaging::CudaStaging(int device, const NormalizeSpec& spec, std::uint32_t batch_size)
    : device_(device),
      args_(normalize_kernel_args(spec)),
      batch_size_(batch_size),
      sample_bytes_(spec.in.bytes()),
      out_sample_bytes_(spec.out_bytes()) {
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  copy_stream_ = make_stream();
  compute_stream_ = make_stream();
  release_stream_ = make_stream();
  measure_h2d();
}

HostBuffer CudaStaging::allocate_host(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  if (stats_.pinned) {
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) == cudaSuccess) {
      stats_.pinned_bytes += bytes;
      return HostBuffer(static_cast<std::uint8_t*>(p), HostFree{true});
    }
    cudaGetLastError();
    stats_.pinned = false;
    std::fprintf(stderr,
                 "gpufeed: warning: cannot pin %llu bytes of host memory (ulimit -l?); batch "
                 "slots use pageable memory and host-to-device copies will be slower\n",
                 static_cast<unsigned long long>(bytes));
  }
  return allocate_aligned(bytes);
}

void CudaStaging::attach(Slot& slot) {
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  auto d = std::unique_ptr<DeviceSlot, DeviceSlotFree>(new DeviceSlot);
  d->raw = device_alloc(std::uint64_t{batch_size_} * sample_bytes_);
  d->out = device_alloc(std::uint64_t{batch_size_} * out_sample_bytes_);
  d->labels = device_alloc(std::uint64_t{batch_size_} * sizeof(std::int64_t));
  void* host_labels = nullptr;
  GPUFEED_CUDA_CHECK(cudaHostAlloc(&host_labels, batch_size_ * sizeof(std::int64_t), 0));
  d->host_labels = PinnedMemory(host_labels);
  d->copy_start = make_event();
  d->copied = make_event();
  d->normalize_start = make_event();
  d->ready = make_event();
  d->released = make_event();
  d->echo_read = make_event();
  d->decoded = make_event();
  d->augments = device_alloc(std::uint64_t{batch_size_} * sizeof(SampleAugment));
  void* host_augments = nullptr;
  GPUFEED_CUDA_CHECK(cudaHostAlloc(&host_augments, 2 * batch_size_ * sizeof(SampleAugment), 0));
  d->host_augments = PinnedMemory(host_augments);
  d->augments_copied[0] = make_event();
  d->augments_copied[1] = make_event();
  std::lock_guard lock(mutex_);
  stats_.device_bytes +=
      std::uint64_t{batch_size_} * (sample_bytes_ + out_sample_bytes_ + 8 + sizeof(SampleAugment));
  slot.device = std::move(d);
}

void CudaStaging::reclaim(Slot& slot, StageCounters& counters) {
  DeviceSlot& d = *slot.device;
  if (d.echo_read_recorded) {  // an echo slot's kernel read these pixels
    GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
    GPUFEED_CUDA_CHECK(cudaEventSynchronize(d.echo_read.get()));
    d.echo_read_recorded = false;
  }
  if (!d.used) return;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  GPUFEED_CUDA_CHECK(cudaEventSynchronize(d.ready.get()));  // the copy precedes it on the device
  float copy_ms = 0, normalize_ms = 0;
  GPUFEED_CUDA_CHECK(cudaEventElapsedTime(&copy_ms, d.copy_start.get(), d.copied.get()));
  GPUFEED_CUDA_CHECK(cudaEventElapsedTime(&normalize_ms, d.normalize_start.get(), d.ready.get()));
  counters.add(Stage::h2d, static_cast<std::int64_t>(copy_ms * 1e6f));
  counters.add(Stage::normalize, static_cast<std::int64_t>(normalize_ms * 1e6f));
  d.used = false;
}

void CudaStaging::submit(Slot& slot) {
  DeviceSlot& d = *slot.device;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  cudaStream_t copy = copy_stream_.get();
  cudaStream_t compute = compute_stream_.get();
  std::memcpy(d.host_labels.get(), slot.labels.data(), slot.count * sizeof(std::int64_t));
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.copy_start.get(), copy));
  if (d.engine_pixels) {
    copy_host_positions(slot, copy);
  } else {
    GPUFEED_CUDA_CHECK(cudaMemcpyAsync(d.raw.get(), slot.raw.get(), slot.count * sample_bytes_,
                                       cudaMemcpyHostToDevice, copy));
  }
  GPUFEED_CUDA_CHECK(cudaMemcpyAsync(d.labels.get(), d.host_labels.get(),
                                     slot.count * sizeof(std::int64_t), cudaMemcpyHostToDevice,
                                     copy));
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.copied.get(), copy));
  GPUFEED_CUDA_CHECK(cudaStreamWaitEvent(compute, d.copied.get(), 0));
  if (d.engine_pixels) {
    GPUFEED_CUDA_CHECK(cudaStreamWaitEvent(compute, d.decoded.get(), 0));
    d.engine_pixels = false;
  }
  if (d.released_recorded) GPUFEED_CUDA_CHECK(cudaStreamWaitEvent(compute, d.released.get(), 0));
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.normalize_start.get(), compute));
  launch_normalize(args_, static_cast<const std::uint8_t*>(d.raw.get()), slot.count, nullptr,
                   d.out.get(), compute);
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.ready.get(), compute));
  d.used = true;
  d.released_recorded = false;
}

void CudaStaging::expect_engine_pixels(Slot& slot, std::vector<std::uint32_t> host_positions) {
  DeviceSlot& d = *slot.device;
  d.engine_pixels = true;
  d.host_positions = std::move(host_positions);
}

void CudaStaging::copy_host_positions(const Slot& slot, cudaStream_t copy) {
  // Runs of neighbouring positions in one copy each.
  const DeviceSlot& d = *slot.device;
  const std::vector<std::uint32_t>& p = d.host_positions;
  auto* device = static_cast<std::uint8_t*>(d.raw.get());
  for (std::size_t i = 0; i < p.size();) {
    std::size_t j = i + 1;
    while (j < p.size() && p[j] == p[j - 1] + 1) ++j;
    const std::uint64_t at = p[i] * sample_bytes_;
    GPUFEED_CUDA_CHECK(cudaMemcpyAsync(device + at, slot.raw.get() + at, (j - i) * sample_bytes_,
                                       cudaMemcpyHostToDevice, copy));
    i = j;
  }
}

void CudaStaging::reaugment(Slot& source, Slot& target, const std::vector<std::uint8_t>& flips,
                            std::uint32_t repeat) {
  DeviceSlot& s = *source.device;
  DeviceSlot& d = *target.device;
  const std::uint32_t count = source.count;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  cudaStream_t compute = compute_stream_.get();
  const std::uint32_t half = repeat % 2;
  if (d.augments_used[half])
    GPUFEED_CUDA_CHECK(cudaEventSynchronize(d.augments_copied[half].get()));
  auto* host = static_cast<SampleAugment*>(d.host_augments.get()) + half * batch_size_;
  for (std::uint32_t i = 0; i < count; ++i) host[i] = SampleAugment{0, 0, flips[i]};
  // The output is rewritten only after the consumer's work on the previous delivery.
  if (d.released_recorded) GPUFEED_CUDA_CHECK(cudaStreamWaitEvent(compute, d.released.get(), 0));
  GPUFEED_CUDA_CHECK(cudaMemcpyAsync(d.augments.get(), host, count * sizeof(SampleAugment),
                                     cudaMemcpyHostToDevice, compute));
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.augments_copied[half].get(), compute));
  d.augments_used[half] = true;
  if (&target != &source) {
    // The source's labels came in on the copy stream, which the compute stream waited for
    // before the source's own kernel.
    GPUFEED_CUDA_CHECK(cudaMemcpyAsync(d.labels.get(), s.labels.get(), count * sizeof(std::int64_t),
                                       cudaMemcpyDeviceToDevice, compute));
  }
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.normalize_start.get(), compute));
  launch_normalize(args_, static_cast<const std::uint8_t*>(s.raw.get()), count,
                   static_cast<const SampleAugment*>(d.augments.get()), d.out.get(), compute);
  GPUFEED_CUDA_CHECK(cudaEventRecord(d.ready.get(), compute));
  if (&target != &source) {
    GPUFEED_CUDA_CHECK(cudaEventRecord(s.echo_read.get(), compute));
    s.echo_read_recorded = true;
  } else {
    d.used = true;
  }
  d.released_recorded = false;
}

void CudaStaging::record_release(Slot& slot, std::span<void* const> streams) {
  DeviceSlot& d = *slot.device;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  if (streams.size() == 1) {
    GPUFEED_CUDA_CHECK(cudaEventRecord(d.released.get(), static_cast<cudaStream_t>(streams[0])));
  } else {
    // One event per stream joined on a stream of our own, so no consumer stream waits on
    // another; `released` then marks the point after all of them.
    cudaStream_t join = release_stream_.get();
    for (void* stream : streams) {
      const CudaEvent done = make_event();
      GPUFEED_CUDA_CHECK(cudaEventRecord(done.get(), static_cast<cudaStream_t>(stream)));
      GPUFEED_CUDA_CHECK(cudaStreamWaitEvent(join, done.get(), 0));
    }
    GPUFEED_CUDA_CHECK(cudaEventRecord(d.released.get(), join));
  }
  d.released_recorded = true;
}

void CudaStaging::wait_ready(const Slot& slot, void* stream) const {
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  GPUFEED_CUDA_CHECK(
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), slot.device->ready.get(), 0));
}

StagingStats CudaStaging::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CudaStaging::measure_h2d() {
  // One batch per copy, best of a few: what the copy stream can reach from pinned and from
  // pageable memory on this machine. Printed by pipebench; the pinned figure is the one the
  // pipeline gets, the pageable one is what a loader without pinning would get.
  const std::uint64_t bytes = std::uint64_t{batch_size_} * sample_bytes_;
  DeviceMemory dst = device_alloc(bytes);
  HostBuffer pageable = allocate_aligned(bytes);
  std::memset(pageable.get(), 1, bytes);
  void* pinned = nullptr;
  const bool have_pinned = cudaHostAlloc(&pinned, bytes, 0) == cudaSuccess;
  if (!have_pinned) cudaGetLastError();
  PinnedMemory pinned_owner(have_pinned ? pinned : nullptr);
  CudaEvent start = make_event(), stop = make_event();
  auto rate = [&](const void* src) {
    float best_ms = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      GPUFEED_CUDA_CHECK(cudaEventRecord(start.get(), copy_stream_.get()));
      GPUFEED_CUDA_CHECK(
          cudaMemcpyAsync(dst.get(), src, bytes, cudaMemcpyHostToDevice, copy_stream_.get()));
      GPUFEED_CUDA_CHECK(cudaEventRecord(stop.get(), copy_stream_.get()));
      GPUFEED_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      GPUFEED_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      best_ms = std::min(best_ms, ms);
    }
    return static_cast<double>(bytes) / (static_cast<double>(best_ms) * 1e-3);
  };
  stats_.pageable_h2d_bytes_per_s = rate(pageable.get());
  if (have_pinned) stats_.pinned_h2d_bytes_per_s = rate(pinned);
}

}  // namespace gpufeed::pipeline::detail
