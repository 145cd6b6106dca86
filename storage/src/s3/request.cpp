#include "request.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "gpufeed/storage/error.hpp"

namespace gpufeed::storage::s3 {

namespace {

// SHA-256 of an empty body: the x-amz-content-sha256 of a request without one. A body (a PUT's
// part, a POST's XML) is sent UNSIGNED-PAYLOAD, as the AWS SDKs do over HTTPS.
constexpr const char* kEmptyPayload =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

constexpr long kReceiveBufferBytes = 128L << 10;  // CURLOPT_BUFFERSIZE (see prepare())

template <typename T>
void set(CURL* easy, CURLoption option, T value) {
  if (curl_easy_setopt(easy, option, value) != CURLE_OK) {
    throw IoError(std::string("libcurl refused option ") + std::to_string(option) +
                  ": it lacks a feature the S3 client needs (libcurl 7.75 or newer with HTTP)");
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& request = *static_cast<Request*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {  // a new response (after a 100 Continue): forget the last
    std::string body = std::move(request.response.body);
    request.response = Response{};
    request.response.body = std::move(body);
    return line.size();
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return line.size();
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string_view value = trim(line.substr(colon + 1));
  Response& response = request.response;
  if (name == "etag") response.etag = value;
  if (name == "content-range") response.content_range = value;
  if (name == "x-amz-bucket-region") response.bucket_region = value;
  if (name == "content-length") {
    std::uint64_t length = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (error == std::errc() && end == value.data() + value.size())
      response.content_length = length;
  }
  return line.size();
}

// A 200 to a ranged GET is the whole object: right only when the range is all of it (or, for
// an edge, holds all of it).
bool whole_object(const Request& request) {
  const std::optional<std::uint64_t>& length = request.response.content_length;
  if (request.edge) return length && *length <= request.range->length;
  return request.range->offset == 0 && (!length || *length == request.range->length);
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& request = *static_cast<Request*>(user);
  const std::size_t bytes = size * count;
  long status = 0;
  curl_easy_getinfo(request.easy, CURLINFO_RESPONSE_CODE, &status);
  // A GET of a range goes into `out`; one without (a listing) into the body, as other replies.
  if (request.method == Method::get && request.range && status >= 200 && status < 300) {
    if (status != 206 && !whole_object(request)) {
      request.range_ignored = true;
      return 0;  // ends the transfer: CURLE_WRITE_ERROR
    }
    if (bytes > request.out.size() - request.received) {
      request.overlong = true;
      return 0;
    }
    std::memcpy(request.out.data() + request.received, data, bytes);
    request.received += bytes;
    return bytes;
  }
  std::string& body = request.response.body;
  body.append(data, std::min(bytes, request.max_body - std::min(body.size(), request.max_body)));
  return bytes;
}

std::size_t on_upload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto& request = *static_cast<Request*>(user);
  const std::uint64_t left = request.upload_length - request.sent;
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size * count, left));
  if (want == 0) return 0;
  ssize_t got = 0;
  do {
    got = ::pread(request.upload_fd, buffer, want,
                  static_cast<off_t>(request.upload_offset + request.sent));
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    request.read_error = errno;
    return CURL_READFUNC_ABORT;
  }
  if (got == 0) {
    request.file_shrank = true;
    return CURL_READFUNC_ABORT;
  }
  request.sent += static_cast<std::uint64_t>(got);
  return static_cast<std::size_t>(got);
}

int on_seek(void* user, curl_off_t offset, int origin) {
  auto& request = *static_cast<Request*>(user);
  if (origin != SEEK_SET || offset < 0 ||
      static_cast<std::uint64_t>(offset) > request.upload_length) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  request.sent = static_cast<std::uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

// libcurl's low-speed check averages over several seconds, so a burst before a stall hides
// the stall for that long; this sees the first second with no byte.
int on_progress(void* user, curl_off_t /*down_total*/, curl_off_t down, curl_off_t /*up_total*/,
                curl_off_t up) {
  auto& request = *static_cast<Request*>(user);
  const auto now = std::chrono::steady_clock::now();
  if (down != request.progress_down || up != request.progress_up) {
    request.progress_down = down;
    request.progress_up = up;
    request.last_progress = now;
    return 0;
  }
  if (now - request.last_progress < request.stall_timeout) return 0;
  request.stalled = true;
  return 1;  // ends the transfer: CURLE_ABORTED_BY_CALLBACK
}

void set_method(CURL* easy, Request& request) {
  switch (request.method) {
    case Method::get:
      set(easy, CURLOPT_HTTPGET, 1L);
      break;
    case Method::head:
      set(easy, CURLOPT_NOBODY, 1L);
      break;
    case Method::put:
      set(easy, CURLOPT_UPLOAD, 1L);
      set(easy, CURLOPT_READFUNCTION, on_upload);
      set(easy, CURLOPT_READDATA, &request);
      set(easy, CURLOPT_SEEKFUNCTION, on_seek);
      set(easy, CURLOPT_SEEKDATA, &request);
      set(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.upload_length));
      break;
    case Method::post:
      set(easy, CURLOPT_POST, 1L);
      set(easy, CURLOPT_POSTFIELDS, request.post_body.c_str());  // not copied: lives in request
      set(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.post_body.size()));
      break;
    case Method::remove:
      set(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }
}

// The headers of the next attempt; signed ones too, as libcurl's SigV4 signs every header it is
// given.
UniqueSlist make_headers(const Request& request, const Config& config) {
  UniqueSlist list;
  const auto add = [&list](const std::string& header) {
    curl_slist* grown = curl_slist_append(list.get(), header.c_str());
    if (grown == nullptr) throw std::bad_alloc();
    static_cast<void>(list.release());
    list.reset(grown);
  };
  const bool has_body = request.method == Method::put ||
                        (request.method == Method::post && !request.post_body.empty());
  if (config.signed_requests()) {
    add(std::string("x-amz-content-sha256: ") + (has_body ? "UNSIGNED-PAYLOAD" : kEmptyPayload));
    if (!config.session_token.empty()) add("x-amz-security-token: " + config.session_token);
  }
  if (request.range && request.suffix) {
    add("Range: bytes=-" + std::to_string(request.range->length));
  } else if (request.range) {
    add("Range: bytes=" + std::to_string(request.range->offset) + "-" +
        std::to_string(request.range->end() - 1));
  }
  if (!request.if_match.empty()) add("If-Match: " + request.if_match);
  if (request.method == Method::post && !request.post_body.empty()) {
    add("Content-Type: application/xml");
  }
  return list;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && keep_slash)) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

void prepare(CURL* easy, Request& request, const Config& config) {
  request.easy = easy;
  request.response = Response{};
  request.received = 0;
  request.sent = 0;
  request.overlong = false;
  request.range_ignored = false;
  request.read_error = 0;
  request.file_shrank = false;
  request.stalled = false;
  request.stall_timeout = config.stall_timeout;
  request.last_progress = std::chrono::steady_clock::now();
  request.progress_down = 0;
  request.progress_up = 0;
  request.error_buffer[0] = '\0';

  set(easy, CURLOPT_URL, request.url.c_str());
  set(easy, CURLOPT_PRIVATE, static_cast<void*>(&request));
  set(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  set(easy, CURLOPT_PATH_AS_IS, 1L);  // keys are sent as they are: "a/../b" is a key
  set(easy, CURLOPT_NOSIGNAL, 1L);
  set(easy, CURLOPT_ERRORBUFFER, request.error_buffer);
  set(easy, CURLOPT_USERAGENT, "gpufeed");
  set(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  // HTTPS always verifies the peer's certificate and host name; only the CAs trusted change.
  set(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  set(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!config.ca_bundle.empty()) {  // these CAs and no others (not libcurl's built-in folder)
    set(easy, CURLOPT_CAINFO, config.ca_bundle.c_str());
    set(easy, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
  }
  set(easy, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(std::chrono::milliseconds(config.connect_timeout).count()));
  // A transfer that moves no byte for stall_timeout is abandoned (on_progress); libcurl's own
  // low-speed check (under a byte a second, averaged) stays as a backstop.
  set(easy, CURLOPT_NOPROGRESS, 0L);
  set(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
  set(easy, CURLOPT_XFERINFODATA, &request);
  set(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  set(easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(config.stall_timeout.count()));
  set(easy, CURLOPT_HEADERFUNCTION, on_header);
  set(easy, CURLOPT_HEADERDATA, &request);
  set(easy, CURLOPT_WRITEFUNCTION, on_body);
  // libcurl receives into a buffer of 16 KiB by default: a 768 KiB chunk took 48 recv calls
  // and as many polls. 128 KiB takes 6 (an epoch of 1.2 GB: 77,000 recv and 90,000 poll calls
  // down to 11,600 and 37,000). Larger ones cost page faults: the buffer is allocated again for
  // each request on a reused handle, and glibc maps blocks that large afresh.
  set(easy, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  set(easy, CURLOPT_WRITEDATA, &request);
  set_method(easy, request);
  if (config.signed_requests()) {
    set(easy, CURLOPT_AWS_SIGV4, ("aws:amz:" + config.region + ":s3").c_str());
    set(easy, CURLOPT_USERNAME, config.access_key.c_str());
    set(easy, CURLOPT_PASSWORD, config.secret_key.c_str());
  }
  request.headers = make_headers(request, config);
  set(easy, CURLOPT_HTTPHEADER, request.headers.get());
}

std::string redact(std::string text, const Config& config) {
  for (const std::string* secret : {&config.secret_key, &config.session_token}) {
    if (secret->size() < 4) continue;
    for (auto at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at)) {
      text.replace(at, secret->size(), "<redacted>");
    }
  }
  return text;
}

}  // namespace gpufeed::storage::s3
