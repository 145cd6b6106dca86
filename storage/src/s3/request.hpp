#pragma once
// One S3 request on a libcurl easy handle: what it sends, what came back, and what to do about
// a failed attempt (retry it, or fail with a message a user can act on).
#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "client.hpp"
#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::storage::s3 {

struct EasyTraits {
  using handle_type = CURL*;
  static constexpr CURL* null() noexcept { return nullptr; }
  static void destroy(CURL* easy) noexcept { curl_easy_cleanup(easy); }
};
using UniqueEasy = UniqueHandle<EasyTraits>;

struct SlistTraits {
  using handle_type = curl_slist*;
  static constexpr curl_slist* null() noexcept { return nullptr; }
  static void destroy(curl_slist* list) noexcept { curl_slist_free_all(list); }
};
using UniqueSlist = UniqueHandle<SlistTraits>;

enum class Method { get, head, put, post, remove };

/// What the last attempt got back.
struct Response {
  long status = 0;
  std::string etag;
  std::optional<std::uint64_t> content_length;
  std::string content_range;  ///< "bytes 0-99/1000"
  std::string bucket_region;  ///< x-amz-bucket-region (a request sent to the wrong region)
  std::string body;           ///< bodies other than a GET's data, at most kMaxBody bytes
  static constexpr std::size_t kMaxBody = 64 * 1024;
};

/// A request and its state across attempts. Filled by the caller, then owned by the I/O thread
/// until `finish` ran there (with null, or the IoError that ended it).
struct Request {
  using Finish = std::function<void(Request& request, std::exception_ptr error)>;

  Method method = Method::get;
  std::string url;     ///< the HTTP URL
  std::string object;  ///< "s3://bucket/key", for messages
  std::string what;    ///< "GET s3://b/k bytes 0-99": how messages name the request
  // A GET's target: exactly range->length bytes into `out`, sent If-Match `if_match` if set.
  std::span<std::uint8_t> out;
  std::optional<ByteRange> range;
  std::string if_match;
  /// An edge of an object of unknown size: the range may reach past the object's end (the
  /// reply's Content-Range says where it ends, and the body is that long), and with `suffix`
  /// it is the object's last range->length bytes ("bytes=-N"; range->offset unused).
  bool edge = false;
  bool suffix = false;
  // A PUT's body: `upload_length` bytes of the file `upload_fd` from `upload_offset`.
  int upload_fd = -1;
  std::string upload_path;
  std::uint64_t upload_offset = 0;
  std::uint64_t upload_length = 0;
  std::string post_body;  ///< a POST's body
  /// A body other than a GET's data is kept up to this many bytes (a listing's pages are larger
  /// than an error's).
  std::size_t max_body = Response::kMaxBody;
  Finish finish;
  /// Who sent it, for IoThread::cancel_owned (null: nobody cancels it but the client's end).
  const void* owner = nullptr;

  CURL* easy = nullptr;  ///< the handle of the attempt in flight
  // State of the attempt in flight (the I/O thread's).
  int attempts = 0;
  Response response;
  std::uint64_t received = 0;  ///< GET data bytes of this attempt
  std::uint64_t sent = 0;      ///< upload bytes of this attempt
  bool overlong = false;       ///< the server sent more than range->length bytes
  bool range_ignored = false;  ///< 200 with the whole object for a part of it
  int read_error = 0;          ///< errno of a failed read of the upload file
  bool file_shrank = false;
  bool stalled = false;  ///< no byte moved either way for the configured stall_timeout
  std::chrono::steady_clock::duration stall_timeout{};
  std::chrono::steady_clock::time_point last_progress{};
  curl_off_t progress_down = 0;
  curl_off_t progress_up = 0;
  std::chrono::steady_clock::time_point failed_at{};
  std::chrono::steady_clock::time_point ready_at{};  ///< when it began waiting for the rate
  std::chrono::steady_clock::time_point sent_at{};   ///< when the attempt in flight was sent
  UniqueSlist headers;
  char error_buffer[CURL_ERROR_SIZE] = {};
};

/// `text` URI-encoded as SigV4 wants it: unreserved characters as they are, '/' too where
/// `keep_slash` (an object key in a path), every other byte as %XX.
std::string uri_encode(std::string_view text, bool keep_slash);

/// Sets every option of the (fresh or reset) handle `easy` for the next attempt of `request`
/// and clears the attempt's state. Throws IoError when libcurl refuses an option.
void prepare(CURL* easy, Request& request, const Config& config);

/// What to do after an attempt ended with `code` (CURLE_OK: a response arrived).
struct RetryDecision {
  enum Kind { success, retry, fail };
  Kind kind = fail;
  bool throttled = false;  ///< the server asked to slow down (503, SlowDown)
  std::string reason;      ///< "HTTP 503 SlowDown", "the connection was reset"
  std::string advice;      ///< "; the server is throttling: ..." (said when the request fails)
  std::string message;     ///< the whole message instead, where it needs no other words (412)
};
RetryDecision decide(CURL* easy, const Request& request, CURLcode code, const Config& config);

/// "bytes 0-99/1000" split: the first and last byte sent and the object's size.
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t total = 0;
};
std::optional<ContentRange> parse_content_range(std::string_view text);

/// Where the body of an edge GET (Request::edge) lies in its object, from its reply; nothing
/// when the reply does not say (a reply decided a success always does).
std::optional<ContentRange> edge_span(const Request& request);

/// The one-line message of a request that failed with `decision` at its last attempt; the
/// secret key and session token never appear in it, whatever the server sent.
std::string failure_message(const Request& request, const RetryDecision& decision,
                            const Config& config);

/// `text` with the configuration's secret key and session token blanked out.
std::string redact(std::string text, const Config& config);

}  // namespace gpufeed::storage::s3
