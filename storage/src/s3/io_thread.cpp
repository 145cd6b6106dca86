#include "io_thread.hpp"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/requests_in_flight.hpp"
#include "process.hpp"

namespace gpufeed::storage::s3 {

namespace {

constexpr std::size_t kMaxIdleHandles = 64;
constexpr int kMaxWaitMs = 1000;

UniqueMulti make_multi() {
  init_curl_once();
  UniqueMulti multi(curl_multi_init());
  if (!multi) throw IoError("cannot make a libcurl multi handle: out of memory");
  return multi;
}

std::exception_ptr cancelled(const Request& request) {
  return std::make_exception_ptr(
      IoError(request.what + ": cancelled (the S3 client was closed before it finished)"));
}

}  // namespace

IoThread::IoThread(const Config& config)
    : config_(config), multi_(make_multi()), random_(std::random_device{}()) {
  thread_ = std::thread([this] { run(); });
  if (!add_live_io_thread(this)) stop();  // the process is exiting: every request cancelled
}

IoThread::~IoThread() {
  stop();
  remove_live_io_thread(this, stats());
}

void IoThread::stop() noexcept {
  const std::lock_guard stopping(stop_mutex_);
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    if (multi_) curl_multi_wakeup(multi_.get());
  }
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) return;  // it stops back in run()
    thread_.join();
  }
  const std::lock_guard lock(mutex_);
  multi_.reset();  // connections closed while libcurl and OpenSSL are still set up
}

void IoThread::submit(std::unique_ptr<Request> request) {
  {
    const std::lock_guard lock(mutex_);
    if (!stopping_) {
      incoming_.push_back(std::move(request));
      curl_multi_wakeup(multi_.get());  // under the lock: stop() frees the handle under it
      return;
    }
  }
  cancel(std::move(request));
}

void IoThread::cancel_owned(const void* owner) {
  const std::lock_guard lock(mutex_);
  if (owner == nullptr || stopping_) return;  // stopping cancels everything
  cancels_.push_back(owner);
  curl_multi_wakeup(multi_.get());
}

ObjectStoreStats IoThread::stats() const {
  ObjectStoreStats s;
  s.requests = counters_.requests.load();
  s.bytes = counters_.bytes.load();
  s.retries = counters_.retries.load();
  s.throttled = counters_.throttled.load();
  s.in_flight = counters_.in_flight.load();
  s.peak_in_flight = counters_.peak_in_flight.load();
  s.backoff_ns = counters_.backoff_ns.load();
  s.rate_wait_ns = counters_.rate_wait_ns.load();
  s.rate_limit = counters_.rate_limit.load();
  s.first_byte_ns = counters_.first_byte_ns.load();
  s.request_ns = counters_.request_ns.load();
  return s;
}

void IoThread::run() {
  ::pthread_setname_np(::pthread_self(), "gpufeed-s3-io");  // as top, gdb and tests show it
  for (;;) {
    std::vector<std::unique_ptr<Request>> fresh;
    std::vector<const void*> owners;
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) break;
      fresh.swap(incoming_);
      owners.swap(cancels_);
    }
    const auto now = Clock::now();
    for (auto& request : fresh) {
      if (std::find(owners.begin(), owners.end(), request->owner) != owners.end()) {
        cancel(std::move(request));
      } else {
        request->ready_at = now;
        ready_.push_back(std::move(request));
      }
    }
    if (!owners.empty()) cancel_owned_now(owners);
    start_due_retries();
    send_ready();
    int running = 0;
    curl_multi_perform(multi_.get(), &running);
    collect_finished();
    // Returns early for socket activity, curl's own timeouts and curl_multi_wakeup.
    curl_multi_poll(multi_.get(), nullptr, 0, wait_ms(), nullptr);
  }
  cancel_everything();
}

void IoThread::start(std::unique_ptr<Request> request) {
  if (request->method == Method::get && request->range && request->range->length == 0) {
    complete(std::move(request), nullptr);  // nothing to read: no request
    return;
  }
  UniqueEasy easy;
  if (idle_.empty()) {
    easy.reset(curl_easy_init());
  } else {
    easy = std::move(idle_.back());
    idle_.pop_back();
    curl_easy_reset(easy.get());  // options only: connections stay in the multi handle's cache
  }
  std::exception_ptr error;
  try {
    if (!easy) throw IoError(request->what + ": cannot make a libcurl handle: out of memory");
    prepare(easy.get(), *request, config_);
    if (curl_multi_add_handle(multi_.get(), easy.get()) != CURLM_OK) {
      throw IoError(request->what + ": libcurl refused the transfer (curl_multi_add_handle)");
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (error) {  // handed over once the handler let go of the exception
    complete(std::move(request), std::move(error));
    return;
  }
  ++request->attempts;
  request->sent_at = Clock::now();
  counters_.requests.fetch_add(1);
  const std::uint64_t now_running = counters_.in_flight.fetch_add(1) + 1;
  std::uint64_t peak = counters_.peak_in_flight.load();
  while (now_running > peak && !counters_.peak_in_flight.compare_exchange_weak(peak, now_running)) {
  }
  storage::detail::request_sent(request.get(), request->what, request->attempts);
  running_.emplace(easy.release(), std::move(request));
}

void IoThread::start_due_retries() {
  const auto now = Clock::now();
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    std::unique_ptr<Request> request = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    counters_.retries.fetch_add(1);
    counters_.backoff_ns.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - request->failed_at).count());
    request->ready_at = now;
    ready_.push_front(std::move(request));  // before fresh requests: it was sent first
  }
}

void IoThread::send_ready() {
  const auto now = Clock::now();
  while (!ready_.empty()) {
    Request& next = *ready_.front();
    const bool empty =
        next.method == Method::get && next.range && next.range->length == 0;  // sends nothing
    if (!empty && !rate_.try_send(now)) break;
    std::unique_ptr<Request> request = std::move(ready_.front());
    ready_.pop_front();
    counters_.rate_wait_ns.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - request->ready_at).count());
    start(std::move(request));
  }
}

void IoThread::collect_finished() {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_.get(), &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    // Copied out: the message does not outlive curl_multi_remove_handle.
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    finished(easy, code);
  }
}

void IoThread::finished(CURL* easy, CURLcode code) {
  const auto found = running_.find(easy);
  if (found == running_.end()) return;
  std::unique_ptr<Request> request = std::move(found->second);
  running_.erase(found);
  storage::detail::request_ended(request.get());

  curl_off_t first_byte_us = 0;
  curl_off_t total_us = 0;
  curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &first_byte_us);
  curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us);
  counters_.first_byte_ns.fetch_add(static_cast<std::int64_t>(first_byte_us) * 1000);
  counters_.request_ns.fetch_add(static_cast<std::int64_t>(total_us) * 1000);
  if (request->method == Method::get) counters_.bytes.fetch_add(request->received);
  const RetryDecision decision = decide(easy, *request, code, config_);

  curl_multi_remove_handle(multi_.get(), easy);
  request->easy = nullptr;
  request->headers.reset();
  UniqueEasy handle(easy);
  if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(handle));
  counters_.in_flight.fetch_sub(1);
  if (decision.throttled) {
    counters_.throttled.fetch_add(1);
    rate_.refused(Clock::now(), request->sent_at);
  } else if (decision.kind == RetryDecision::success) {
    rate_.succeeded(Clock::now());
  }
  counters_.rate_limit.store(rate_.limit());

  if (decision.kind == RetryDecision::success) {
    complete(std::move(request), nullptr);
  } else if (decision.kind == RetryDecision::retry && request->attempts < config_.max_attempts) {
    request->failed_at = Clock::now();
    const auto due = request->failed_at + backoff(request->attempts);
    waiting_.emplace(due, std::move(request));
  } else {
    // Made in a statement of its own: the temporary IoError (which shares its message with the
    // thrown copy) is gone before the request's owner can see the error.
    std::exception_ptr error =
        std::make_exception_ptr(IoError(failure_message(*request, decision, config_)));
    complete(std::move(request), std::move(error));
  }
}

void IoThread::complete(std::unique_ptr<Request> request, std::exception_ptr error) {
  request->headers.reset();
  try {
    if (request->finish) request->finish(*request, std::move(error));
  } catch (...) {  // a Done must not throw; one that does cannot stop the I/O thread
  }
}

void IoThread::cancel(std::unique_ptr<Request> request) {
  std::exception_ptr error = cancelled(*request);
  complete(std::move(request), std::move(error));
}

void IoThread::cancel_owned_now(const std::vector<const void*>& owners) {
  const auto owned = [&](const std::unique_ptr<Request>& request) {
    return request->owner != nullptr &&
           std::find(owners.begin(), owners.end(), request->owner) != owners.end();
  };
  for (auto it = running_.begin(); it != running_.end();) {
    if (!owned(it->second)) {
      ++it;
      continue;
    }
    CURL* easy = it->first;
    std::unique_ptr<Request> request = std::move(it->second);
    it = running_.erase(it);
    storage::detail::request_ended(request.get());
    curl_multi_remove_handle(multi_.get(), easy);
    request->easy = nullptr;
    UniqueEasy handle(easy);
    if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(handle));
    counters_.in_flight.fetch_sub(1);
    cancel(std::move(request));
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (!owned(it->second)) {
      ++it;
      continue;
    }
    std::unique_ptr<Request> request = std::move(it->second);
    it = waiting_.erase(it);
    cancel(std::move(request));
  }
  std::deque<std::unique_ptr<Request>> kept;
  for (auto& request : ready_) {
    if (owned(request)) {
      cancel(std::move(request));
    } else {
      kept.push_back(std::move(request));
    }
  }
  ready_.swap(kept);
}

void IoThread::cancel_everything() {
  for (auto& [easy, request] : running_) {
    storage::detail::request_ended(request.get());
    curl_multi_remove_handle(multi_.get(), easy);
    curl_easy_cleanup(easy);
    request->easy = nullptr;
    counters_.in_flight.fetch_sub(1);
    cancel(std::move(request));
  }
  running_.clear();
  for (auto& [due, request] : waiting_) cancel(std::move(request));
  waiting_.clear();
  for (auto& request : ready_) cancel(std::move(request));
  ready_.clear();
  std::vector<std::unique_ptr<Request>> queued;
  {
    const std::lock_guard lock(mutex_);
    queued.swap(incoming_);
  }
  for (auto& request : queued) cancel(std::move(request));
  idle_.clear();
}

// Full jitter: uniform in [0, min(cap, base * 2^(retry - 1))].
IoThread::Clock::duration IoThread::backoff(int retry) {
  const auto base = std::chrono::duration_cast<std::chrono::microseconds>(config_.backoff_base);
  const auto cap = std::chrono::duration_cast<std::chrono::microseconds>(config_.backoff_cap);
  const int doublings = std::clamp(retry - 1, 0, 30);
  const auto ceiling = std::min(cap.count(), base.count() << doublings);
  if (ceiling <= 0) return Clock::duration::zero();
  std::uniform_int_distribution<std::int64_t> pick(0, ceiling);
  return std::chrono::microseconds(pick(random_));
}

int IoThread::wait_ms() const {
  const auto now = Clock::now();
  auto wake = now + std::chrono::milliseconds(kMaxWaitMs);
  if (!waiting_.empty()) wake = std::min(wake, waiting_.begin()->first);
  if (!ready_.empty()) wake = std::min(wake, rate_.next_send(now));
  const auto until = wake - now;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, kMaxWaitMs));
}

}  // namespace gpufeed::storage::s3
