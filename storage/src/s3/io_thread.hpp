#pragma once
// The S3 client's I/O thread: every request of a client on one curl multi handle (connections
// reused, easy handles pooled), retries waiting on a timer queue so that a backoff never holds
// up other transfers, and the client's counters. The thread, named "gpufeed-s3-io", is joined by
// its destructor, or earlier by the process's exit handler (process.hpp), never left running.
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "rate.hpp"
#include "request.hpp"

namespace gpufeed::storage::s3 {

struct MultiTraits {
  using handle_type = CURLM*;
  static constexpr CURLM* null() noexcept { return nullptr; }
  static void destroy(CURLM* multi) noexcept { curl_multi_cleanup(multi); }
};
using UniqueMulti = UniqueHandle<MultiTraits>;

/// Runs requests to completion: each attempt on the multi handle, a retryable failure again
/// after a full-jitter backoff while attempts remain, then the request's `finish` on this
/// thread. Every attempt is paced by the client's RequestRate: once the server asked to slow
/// down, attempts wait their turn in `ready_`. submit(), cancel_owned(), stop() and stats() are
/// thread-safe. stop() (the destructor, or the process's exit handler) cancels what is still
/// queued, waiting or running (their `finish` gets an IoError "... cancelled ...") and joins the
/// thread. The thread must not be destroyed by a `finish` it runs: a `finish` never owns the client
/// it was sent through.
class IoThread {
 public:
  /// `config` must outlive the thread. Made while the process exits, it is stopped at once: it
  /// cancels every request.
  explicit IoThread(const Config& config);
  ~IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  /// Queues `request` (its `finish` set); once stop() began, cancels it at once (its `finish`
  /// runs on the caller's thread).
  void submit(std::unique_ptr<Request> request);
  /// Cancels the requests submitted with Request::owner `owner` (their `finish` gets the
  /// "cancelled" IoError on the I/O thread, soon after). Does not wait.
  void cancel_owned(const void* owner);
  /// Cancels everything, joins the thread and frees the curl handles; later calls do nothing.
  /// Called on the thread itself (exit() from a `finish`), it only tells it to stop.
  void stop() noexcept;
  [[nodiscard]] ObjectStoreStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;

  void run();
  void start(std::unique_ptr<Request> request);
  void start_due_retries();
  /// Starts the ready attempts the request rate allows now.
  void send_ready();
  void collect_finished();
  void finished(CURL* easy, CURLcode code);
  void complete(std::unique_ptr<Request> request, std::exception_ptr error);
  void cancel(std::unique_ptr<Request> request);
  void cancel_owned_now(const std::vector<const void*>& owners);
  void cancel_everything();
  [[nodiscard]] Clock::duration backoff(int retry);
  [[nodiscard]] int wait_ms() const;

  const Config& config_;

  std::mutex stop_mutex_;  // one stop() at a time: the destructor's and the exit handler's
  std::mutex mutex_;       // guards multi_ (freed by stop()), incoming_, cancels_, stopping_
  UniqueMulti multi_;
  std::vector<std::unique_ptr<Request>> incoming_;
  std::vector<const void*> cancels_;  // owners whose requests to cancel
  bool stopping_ = false;

  // The I/O thread's own.
  std::unordered_map<CURL*, std::unique_ptr<Request>> running_;
  std::multimap<Clock::time_point, std::unique_ptr<Request>> waiting_;  // retries, by due time
  std::deque<std::unique_ptr<Request>> ready_;  // attempts waiting for the request rate
  RequestRate rate_;
  std::vector<UniqueEasy> idle_;
  std::mt19937_64 random_;

  struct Counters {
    std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> retries{0};
    std::atomic<std::uint64_t> throttled{0};
    std::atomic<std::uint64_t> in_flight{0};
    std::atomic<std::uint64_t> peak_in_flight{0};
    std::atomic<std::int64_t> backoff_ns{0};
    std::atomic<std::int64_t> rate_wait_ns{0};
    std::atomic<double> rate_limit{0};
    std::atomic<std::int64_t> first_byte_ns{0};
    std::atomic<std::int64_t> request_ns{0};
  };
  Counters counters_;

  std::thread thread_;  // last: starts once everything above is made
};

}  // namespace gpufeed::storage::s3
