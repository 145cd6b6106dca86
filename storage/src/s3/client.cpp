#include "client.hpp"

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "client_impl.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/storage/error.hpp"
#include "xml.hpp"

namespace gpufeed::storage::s3 {

namespace {

// The clients made by Client::shared(), not owned: a client lives as long as the objects that
// read through it, and its I/O thread is joined when the last of them goes.
struct SharedClients {
  std::mutex mutex;
  std::vector<std::weak_ptr<Client>> made;  // the last made at the back
};

SharedClients& shared_clients() {
  static SharedClients shared;
  return shared;
}

// What a blocking call waits for. The error is moved, never copied, from the I/O thread to the
// caller, which takes it out before throwing it: the exception object is released on the
// caller's thread only (ThreadSanitizer cannot see libstdc++'s exception_ptr counts).
template <typename T>
class Outcome {
 public:
  void set(std::exception_ptr error, T value) {
    const std::lock_guard lock(mutex_);
    error_ = std::move(error);
    value_ = std::move(value);
    done_ = true;
    ready_.notify_all();  // under the lock: the caller may free this once it sees done_
  }
  T take() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return done_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return std::move(value_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  std::exception_ptr error_;
  T value_{};
};

std::string byte_range_text(ByteRange range) {
  if (range.length == 0) return "bytes " + std::to_string(range.offset) + " (none)";
  return "bytes " + std::to_string(range.offset) + "-" + std::to_string(range.end() - 1);
}

}  // namespace

std::unique_ptr<Request> ClientCore::request(Method method, const Url& url, std::string what,
                                             const std::string& query) const {
  auto made = std::make_unique<Request>();
  made->method = method;
  made->url = config.object_url(url) + query;
  made->object = url.text();
  made->what = std::move(what);
  return made;
}

Response ClientCore::run(std::unique_ptr<Request> request) {
  auto outcome = std::make_shared<Outcome<Response>>();
  request->finish = [outcome](Request& done, std::exception_ptr error) {
    outcome->set(std::move(error), std::move(done.response));
  };
  io.submit(std::move(request));
  return outcome->take();
}

Client::Client(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Client::~Client() = default;

std::shared_ptr<Client> Client::shared() {
  return shared("s3");
}

std::shared_ptr<Client> Client::shared(std::string_view scheme) {
  SharedClients& shared = shared_clients();
  const std::lock_guard lock(shared.mutex);
  // The environment is read at every open: a process that points AWS_ENDPOINT_URL_S3 (or the
  // credentials) elsewhere gets a client for that; objects opened before keep theirs.
  Config config = Config::from_environment(scheme);
  std::erase_if(shared.made, [](const std::weak_ptr<Client>& made) { return made.expired(); });
  for (auto it = shared.made.rbegin(); it != shared.made.rend(); ++it) {
    if (std::shared_ptr<Client> client = it->lock(); client && client->config() == config) {
      return client;
    }
  }
  auto client = std::make_shared<Client>(std::move(config));
  shared.made.push_back(client);
  return client;
}

std::shared_ptr<Client> Client::shared_if_made() {
  SharedClients& shared = shared_clients();
  const std::lock_guard lock(shared.mutex);
  for (auto it = shared.made.rbegin(); it != shared.made.rend(); ++it) {
    if (std::shared_ptr<Client> client = it->lock()) return client;
  }
  return nullptr;
}

const Config& Client::config() const {
  return impl_->config;
}

ObjectInfo Client::head(const Url& url) {
  const std::string what = "HEAD " + url.text();
  const Response response = impl_->run(impl_->request(Method::head, url, what));
  if (!response.content_length) {
    throw IoError(what + ": the reply has no Content-Length; the endpoint is not S3-compatible");
  }
  return ObjectInfo{*response.content_length, response.etag};
}

std::vector<std::string> Client::list(const std::string& bucket, const std::string& prefix,
                                      const std::string& scheme) {
  // A listing page of 1,000 keys is a few hundred KiB of XML.
  constexpr std::size_t kListBody = std::size_t{8} << 20;
  const Url where{bucket, "", scheme};
  std::vector<std::string> keys;
  std::string token;
  do {
    // SigV4's canonical query: names sorted, values URI-encoded.
    std::string query = "?";
    if (!token.empty()) query += "continuation-token=" + uri_encode(token, false) + "&";
    query += "list-type=2&prefix=" + uri_encode(prefix, false);
    auto request =
        impl_->request(Method::get, where, "GET " + where.text() + prefix + "* (listing)", query);
    request->max_body = kListBody;
    const Response response = impl_->run(std::move(request));
    ListPage page = parse_list_page(response.body);
    keys.insert(keys.end(), std::make_move_iterator(page.keys.begin()),
                std::make_move_iterator(page.keys.end()));
    token = page.truncated ? page.next_token : std::string();
  } while (!token.empty());
  return keys;
}

ObjectEdges Client::edges(const Url& url, std::uint64_t first_bytes, std::uint64_t last_bytes) {
  struct Reply {
    ContentRange span;
    std::string etag;
    std::uint64_t received = 0;
  };
  if (first_bytes == 0 || last_bytes == 0) {
    throw UsageError("GET " + url.text() + ": edges of 0 bytes asked for");
  }
  constexpr int kVersionsTried = 3;
  for (int tried = 1;; ++tried) {
    ObjectEdges got;
    got.first.resize(first_bytes);
    got.last.resize(last_bytes);
    const auto send = [&](std::vector<std::uint8_t>& out, bool suffix) {
      const std::uint64_t bytes = out.size();
      auto request = impl_->request(Method::get, url,
                                    "GET " + url.text() +
                                        (suffix ? " last " + std::to_string(bytes) + " bytes"
                                                : " " + byte_range_text({0, bytes})));
      request->range = ByteRange{0, bytes};
      request->out = out;
      request->edge = true;
      request->suffix = suffix;
      auto outcome = std::make_shared<Outcome<Reply>>();
      request->finish = [outcome](Request& done, std::exception_ptr error) {
        Reply reply;
        if (!error) reply = Reply{*edge_span(done), done.response.etag, done.received};
        outcome->set(std::move(error), std::move(reply));
      };
      impl_->io.submit(std::move(request));
      return outcome;
    };
    const auto first = send(got.first, false);
    const auto last = send(got.last, true);
    // Both are waited for before either error is thrown: each writes into `got`.
    std::exception_ptr error;
    Reply a, b;
    try {
      a = first->take();
    } catch (...) {
      error = std::current_exception();
    }
    try {
      b = last->take();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    if (error) std::rethrow_exception(error);
    if (a.etag != b.etag || a.span.total != b.span.total) {
      if (tried < kVersionsTried) continue;
      throw IoError("GET " + url.text() + ": the object changed while it was opened (ETag " +
                    a.etag + ", then " + b.etag + "); open it again once it is written");
    }
    got.info = ObjectInfo{a.span.total, a.etag};
    got.first.resize(a.received);
    got.last_offset = a.span.total - b.received;
    got.last.resize(b.received);
    return got;
  }
}

void Client::get(const Url& url, ByteRange range, std::span<std::uint8_t> out,
                 const std::string& etag) {
  auto outcome = std::make_shared<Outcome<bool>>();
  get_async(url, range, out, etag,
            [outcome](std::exception_ptr error) { outcome->set(std::move(error), true); });
  outcome->take();
}

void Client::get_async(const Url& url, ByteRange range, std::span<std::uint8_t> out,
                       std::string etag, Done done, const void* owner) {
  if (out.size() < range.length) {
    throw UsageError("GET " + url.text() + " " + byte_range_text(range) + ": the buffer holds " +
                     std::to_string(out.size()) + " bytes, fewer than the range");
  }
  auto request =
      impl_->request(Method::get, url, "GET " + url.text() + " " + byte_range_text(range));
  request->range = range;
  request->out = out.first(static_cast<std::size_t>(range.length));
  request->if_match = std::move(etag);
  request->owner = owner;
  request->finish = [done = std::move(done)](Request& /*request*/, std::exception_ptr error) {
    done(std::move(error));
  };
  impl_->io.submit(std::move(request));
}

void Client::cancel(const void* owner) {
  impl_->io.cancel_owned(owner);
}

void Client::remove(const Url& url) {
  impl_->run(impl_->request(Method::remove, url, "DELETE " + url.text()));
}

ObjectStoreStats Client::stats() const {
  return impl_->io.stats();
}

}  // namespace gpufeed::storage::s3
