#include "process.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "gpufeed/storage/error.hpp"
#include "io_thread.hpp"

namespace gpufeed::storage::s3 {

namespace {

struct LiveThreads {
  std::mutex mutex;
  std::condition_variable unpinned;
  std::vector<IoThread*> live;
  IoThread* pinned = nullptr;  // being stopped by the exit handler, outside the lock
  bool exiting = false;
  ObjectStoreStats retired;  // the counters of threads removed
};

// Never destroyed: I/O threads are removed by destructors that may run after every static's.
LiveThreads& live_threads() {
  static auto* const threads = new LiveThreads;
  return *threads;
}

void add_counters(ObjectStoreStats& total, const ObjectStoreStats& s) {
  total.requests += s.requests;
  total.bytes += s.bytes;
  total.retries += s.retries;
  total.throttled += s.throttled;
  total.in_flight += s.in_flight;
  total.peak_in_flight = std::max(total.peak_in_flight, s.peak_in_flight);
  total.backoff_ns += s.backoff_ns;
  total.rate_wait_ns += s.rate_wait_ns;
  total.rate_limit += s.rate_limit;
  total.first_byte_ns += s.first_byte_ns;
  total.request_ns += s.request_ns;
}

// The exit handler. Each thread is stopped outside the lock (a request's Done, run as its
// thread stops, may destroy another client, whose destructor takes the lock); a pinned thread's
// destructor waits until it was stopped.
void stop_every_io_thread() {
  LiveThreads& threads = live_threads();
  std::unique_lock lock(threads.mutex);
  threads.exiting = true;
  const std::vector<IoThread*> running = threads.live;
  for (IoThread* thread : running) {
    if (std::find(threads.live.begin(), threads.live.end(), thread) == threads.live.end()) {
      continue;  // destroyed meanwhile
    }
    threads.pinned = thread;
    lock.unlock();
    thread->stop();
    lock.lock();
    threads.pinned = nullptr;
    threads.unpinned.notify_all();
  }
}

}  // namespace

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    live_threads();  // made before the handler that uses it can run
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw IoError("cannot initialize libcurl (curl_global_init failed)");
    }
    // After curl_global_init, so before the exit handler OpenSSL registered there.
    if (std::atexit(stop_every_io_thread) != 0) {
      throw IoError("cannot register the S3 client's exit handler (atexit failed)");
    }
  });
}

bool add_live_io_thread(IoThread* thread) {
  LiveThreads& threads = live_threads();
  const std::lock_guard lock(threads.mutex);
  if (threads.exiting) return false;
  threads.live.push_back(thread);
  return true;
}

void remove_live_io_thread(IoThread* thread, const ObjectStoreStats& final) {
  LiveThreads& threads = live_threads();
  std::unique_lock lock(threads.mutex);
  threads.unpinned.wait(lock, [&] { return threads.pinned != thread; });
  const auto found = std::find(threads.live.begin(), threads.live.end(), thread);
  if (found == threads.live.end()) return;
  threads.live.erase(found);
  ObjectStoreStats ended = final;
  ended.in_flight = 0;
  add_counters(threads.retired, ended);
}

ObjectStoreStats process_stats() {
  LiveThreads& threads = live_threads();
  const std::lock_guard lock(threads.mutex);
  ObjectStoreStats total = threads.retired;
  for (const IoThread* thread : threads.live) add_counters(total, thread->stats());
  return total;
}

}  // namespace gpufeed::storage::s3
