#include "gpufeed/profiler/recorder.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <memory>
#include <mutex>

#include "collect/name_registry.hpp"
#include "collect/thread_ring.hpp"

namespace gpufeed::profiler {

namespace detail {
constinit std::atomic<bool> recording{true};
}  // namespace detail

namespace {

std::uint32_t os_thread_id() noexcept {
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

}  // namespace

namespace detail {

struct RingEntry {
  std::unique_ptr<ThreadRing> ring;
  bool in_use = false;
};

class RecorderState {
 public:
  NameRegistry names;
  mutable std::mutex mutex;  // guards rings (the list, not their contents) and capacity
  std::vector<RingEntry> rings;
  std::size_t capacity = Recorder::kDefaultCapacity;

  ThreadRing* acquire_ring();
  void release_ring(const ThreadRing* ring) noexcept;
};

}  // namespace detail

namespace {

/// Hands the thread's ring back when the thread exits, so a later thread can reuse it.
struct RingLease {
  detail::ThreadRing* ring = nullptr;
  ~RingLease();
};

thread_local detail::ThreadRing* tls_ring = nullptr;  // trivial: no TLS guard on the hot path
thread_local std::uint32_t tls_thread_id = 0;
thread_local RingLease tls_lease;

detail::RecorderState* global_state = nullptr;  // set once by the global Recorder

}  // namespace

detail::ThreadRing* detail::RecorderState::acquire_ring() {
  const std::lock_guard lock(mutex);
  for (RingEntry& e : rings) {
    if (e.in_use) continue;
    if (e.ring->capacity() != capacity) e.ring = std::make_unique<ThreadRing>(capacity);
    e.in_use = true;
    return e.ring.get();
  }
  rings.push_back({std::make_unique<ThreadRing>(capacity), true});
  return rings.back().ring.get();
}

void detail::RecorderState::release_ring(const ThreadRing* ring) noexcept {
  const std::lock_guard lock(mutex);
  for (RingEntry& e : rings) {
    if (e.ring.get() == ring) e.in_use = false;
  }
}

RingLease::~RingLease() {
  if (ring == nullptr) return;
  tls_ring = nullptr;
  global_state->release_ring(ring);
}

Recorder& Recorder::global() noexcept {
  static Recorder* const recorder = new Recorder();  // leaked on purpose: see the header
  return *recorder;
}

Recorder::Recorder() : state_(new detail::RecorderState) {
  global_state = state_;
}
Recorder::~Recorder() {
  delete state_;
}

NameId Recorder::register_name(std::string_view name) {
  return state_->names.intern(name);
}

void Recorder::set_enabled(bool enabled) noexcept {
  detail::recording.store(enabled, std::memory_order_relaxed);
}

bool Recorder::enabled() const noexcept {
  return detail::recorder_enabled();
}

void Recorder::set_capacity(std::size_t events_per_thread) {
  const std::lock_guard lock(state_->mutex);
  state_->capacity = std::bit_ceil(std::max<std::size_t>(events_per_thread, 16));
}

std::size_t Recorder::capacity() const noexcept {
  const std::lock_guard lock(state_->mutex);
  return state_->capacity;
}

RecorderSnapshot Recorder::snapshot() const {
  RecorderSnapshot snap;
  {
    const std::lock_guard lock(state_->mutex);
    for (const detail::RingEntry& e : state_->rings) snap.dropped += e.ring->collect(snap.events);
    snap.threads = state_->rings.size();
  }
  snap.names = state_->names.names();
  std::stable_sort(
      snap.events.begin(), snap.events.end(),
      [](const RangeEvent& a, const RangeEvent& b) { return a.begin_ns < b.begin_ns; });
  return snap;
}

void Recorder::clear() noexcept {
  const std::lock_guard lock(state_->mutex);
  for (detail::RingEntry& e : state_->rings) e.ring->clear();
}

void record_range(NameId name, std::int64_t begin_ns, std::int64_t end_ns,
                  std::int64_t arg) noexcept {
  if (!detail::recorder_enabled()) return;
  if (tls_ring == nullptr) {
    try {
      if (global_state == nullptr) Recorder::global();
      tls_ring = global_state->acquire_ring();
    } catch (const std::exception&) {
      return;  // this thread stays unrecorded; the host program carries on
    }
    tls_thread_id = os_thread_id();
    tls_lease.ring = tls_ring;
  }
  tls_ring->push(name, tls_thread_id, begin_ns, end_ns, arg);
}

}  // namespace gpufeed::profiler
