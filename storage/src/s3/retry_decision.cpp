// What an S3 request's attempt came to: done, worth another attempt, or a failure worded for the
// user (what, where, the status and S3 code, what to do).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpufeed/storage/error.hpp"
#include "request.hpp"
#include "xml.hpp"

namespace gpufeed::storage::s3 {

namespace {

constexpr const char* kBrokenAdvice =
    "; the connection kept breaking: check the network and the endpoint";
constexpr const char* kThrottledAdvice =
    "; the server kept refusing at the lowest request rate: send fewer, larger requests (read "
    "in chunk order, pack more samples a chunk), spread the data over more prefixes, or retry "
    "later";

RetryDecision make(RetryDecision::Kind kind, std::string reason, std::string advice = {}) {
  RetryDecision decision;
  decision.kind = kind;
  decision.reason = std::move(reason);
  decision.advice = std::move(advice);
  return decision;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

// A status without an S3 error body (HEAD has none) in words.
std::string status_words(long status) {
  switch (status) {
    case 301:
    case 307:
      return ", the bucket is elsewhere";
    case 400:
      return ", bad request";
    case 403:
      return ", access denied";
    case 404:
      return ", no such bucket or key";
    case 412:
      return ", precondition failed";
    case 416:
      return ", range not satisfiable";
    case 500:
      return ", internal server error";
    case 503:
      return ", service unavailable";
    default:
      return {};
  }
}

bool is_retryable(long status, const std::string& code) {
  return status == 500 || status == 502 || status == 503 || status == 504 || code == "SlowDown" ||
         code == "RequestTimeout" || code == "InternalError" || code == "ServiceUnavailable";
}

// Codes whose name says it all; others get the server's own message too.
bool self_explanatory(const std::string& code) {
  return code == "AccessDenied" || code == "NoSuchKey" || code == "NoSuchBucket" ||
         code == "SlowDown" || code == "InternalError" || code == "PreconditionFailed" ||
         code == "ServiceUnavailable";
}

// Codes (some with status 400) that say the credentials are wrong.
bool rejects_credentials(const std::string& code) {
  return code == "InvalidToken" || code == "InvalidAccessKeyId" ||
         code == "SignatureDoesNotMatch" || code == "AuthorizationHeaderMalformed";
}

RetryDecision decide_error(const Request& request, long status, const XmlReply& reply,
                           const Config& config) {
  std::string reason = "HTTP " + std::to_string(status);
  reason += reply.code.empty() ? status_words(status) : " " + reply.code;
  if (!reply.message.empty() && !self_explanatory(reply.code)) {
    reason += " \"" + one_line(reply.message) + "\"";
  }
  if (status == 412 && !request.if_match.empty()) {
    RetryDecision decision = make(RetryDecision::fail, reason);
    decision.message = request.object + " changed since it was opened (ETag " + request.if_match +
                       " no longer matches); restart the job to read the new object";
    return decision;
  }
  if (is_retryable(status, reply.code)) {
    RetryDecision decision =
        make(RetryDecision::retry, reason, "; the server kept failing: retry later");
    decision.throttled = status == 503 || reply.code == "SlowDown";
    if (decision.throttled) decision.advice = kThrottledAdvice;
    return decision;
  }
  if (reply.code == "ExpiredToken" || reply.code == "TokenRefreshRequired") {
    return make(RetryDecision::fail, reason + " (" + config.describe() + ")",
                "; the temporary credentials expired: renew them and restart the job");
  }
  if (status == 403 || rejects_credentials(reply.code)) {
    return make(RetryDecision::fail, reason + " (" + config.describe() + ")",
                "; check the credentials and the bucket policy");
  }
  if (status == 404) {
    return make(RetryDecision::fail, reason + " (" + config.describe() + ")",
                "; check the bucket and key");
  }
  const std::string& region =
      request.response.bucket_region.empty() ? reply.region : request.response.bucket_region;
  if (!region.empty() && region != config.region) {
    return make(RetryDecision::fail, reason + " (" + config.describe() + ")",
                "; the bucket is in region " + region + ": set AWS_REGION=" + region);
  }
  if (status >= 300 && status < 400) {
    return make(RetryDecision::fail, reason + " (" + config.describe() + ")",
                "; the bucket is in another region: set AWS_REGION to it");
  }
  if (status == 416) {
    return make(RetryDecision::fail, reason, "; the object is shorter than the range asked for");
  }
  return make(RetryDecision::fail, reason);
}

// "bytes 0-99/1000" -> the total, when it says one.
std::optional<std::uint64_t> range_total(const std::string& content_range) {
  const auto slash = content_range.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  std::uint64_t total = 0;
  const char* first = content_range.data() + slash + 1;
  const char* last = content_range.data() + content_range.size();
  const auto [end, error] = std::from_chars(first, last, total);
  if (error != std::errc() || end != last) return std::nullopt;
  return total;
}

RetryDecision decide_edge(const Request& request) {
  const std::optional<ContentRange> span = edge_span(request);
  if (!span) {
    return make(RetryDecision::fail,
                "the reply does not say which bytes it holds (no Content-Range)",
                "; the endpoint is not S3-compatible");
  }
  if (span->total == 0) {  // an empty object, whole
    return request.received == 0 ? make(RetryDecision::success, {})
                                 : make(RetryDecision::fail, "the reply holds more than the object",
                                        "; the endpoint is not S3-compatible");
  }
  const ByteRange& range = *request.range;
  const std::uint64_t want =
      request.suffix ? std::min(range.length, span->total)
                     : std::min(range.end(), span->total) - std::min(range.offset, span->total);
  const bool placed = request.suffix ? span->last + 1 == span->total : span->first == range.offset;
  if (!placed || span->last - span->first + 1 != want) {
    return make(RetryDecision::fail,
                "the reply holds bytes " + std::to_string(span->first) + "-" +
                    std::to_string(span->last) + " of " + std::to_string(span->total) +
                    ", not the range asked for",
                "; the endpoint is not S3-compatible");
  }
  if (request.received != want) {
    return make(RetryDecision::retry,
                "the body ended after " + std::to_string(request.received) + " of " +
                    std::to_string(want) + " bytes",
                kBrokenAdvice);
  }
  return make(RetryDecision::success, {});
}

RetryDecision decide_success(const Request& request, long status, const Config& config) {
  if (request.method == Method::get && request.edge) return decide_edge(request);
  if (request.method == Method::get && request.range) {
    const ByteRange& range = *request.range;
    const auto total = range_total(request.response.content_range);
    if (total && *total < range.end()) {
      return make(RetryDecision::fail, "the object has only " + std::to_string(*total) + " bytes",
                  "; the range reaches past its end");
    }
    if (request.received != range.length) {
      return make(RetryDecision::retry,
                  "the body ended after " + std::to_string(request.received) + " of " +
                      std::to_string(range.length) + " bytes",
                  kBrokenAdvice);
    }
  }
  if (request.method == Method::post) {  // CompleteMultipartUpload may fail with a 200
    const XmlReply reply = parse_xml_reply(request.response.body);
    if (reply.root == "Error") return decide_error(request, status, reply, config);
  }
  return make(RetryDecision::success, {});
}

RetryDecision stalled(const Config& config) {
  const std::string seconds = std::to_string(config.stall_timeout.count());
  return make(RetryDecision::retry, "stalled: no byte moved for " + seconds + " s",
              "; the server or the network stopped sending: check them, or raise "
              "GPUFEED_S3_STALL_SECONDS (now " +
                  seconds + ")");
}

// A certificate the client does not trust: another attempt meets the same certificate, so it
// is not retried (a handshake that failed is, in case the connection was cut). The message names
// the CA bundle, as a wrong or missing one is the usual cause.
RetryDecision tls_failure(CURLcode code, const std::string& text, const Config& config) {
  const std::string endpoint =
      config.endpoint.empty() ? "AWS S3 in " + config.region : config.endpoint;
  const std::string bundle =
      config.ca_bundle.empty() ? "libcurl's default CA bundle" : "CA bundle " + config.ca_bundle;
  // A handshake error is also what an HTTP server answering https:// gives.
  const std::string also =
      code == CURLE_SSL_CONNECT_ERROR ? "check that the endpoint serves HTTPS there, or " : "";
  return make(RetryDecision::fail,
              "TLS failed (" + text + ") with endpoint " + endpoint + " and " + bundle,
              "; " + also +
                  "set AWS_CA_BUNDLE to the PEM file of the CA that signed the endpoint's "
                  "certificate");
}

RetryDecision decide_transport(CURL* easy, const Request& request, CURLcode code,
                               const Config& config) {
  const std::string text = request.error_buffer[0] != '\0' ? std::string(request.error_buffer)
                                                           : curl_easy_strerror(code);
  const std::string unreachable =
      "; check that the endpoint is reachable (" + config.describe() + ")";
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connected = 0;
      curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
      if (connected == 0) {
        return make(RetryDecision::retry, "cannot connect (" + text + ")", unreachable);
      }
      return stalled(config);
    }
    case CURLE_PARTIAL_FILE:
      if (request.method == Method::get) {
        return make(RetryDecision::retry,
                    "the connection closed after " + std::to_string(request.received) + " of " +
                        std::to_string(request.range->length) + " bytes",
                    kBrokenAdvice);
      }
      return make(RetryDecision::retry, "the connection closed before the whole reply",
                  kBrokenAdvice);
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return make(RetryDecision::retry, "the connection broke (" + text + ")", kBrokenAdvice);
    case CURLE_SSL_CONNECT_ERROR: {  // also a handshake cut short: worth another attempt
      RetryDecision decision = tls_failure(code, text, config);
      decision.kind = RetryDecision::retry;
      return decision;
    }
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return tls_failure(code, text, config);
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return make(RetryDecision::retry, "cannot connect (" + text + ")", unreachable);
    default:
      return make(RetryDecision::fail, "libcurl: " + text);
  }
}

}  // namespace

RetryDecision decide(CURL* easy, const Request& request, CURLcode code, const Config& config) {
  if (request.read_error != 0) {
    return make(RetryDecision::fail,
                "cannot read " + request.upload_path + ": " + std::strerror(request.read_error),
                errno_advice(request.read_error));
  }
  if (request.file_shrank) {
    return make(RetryDecision::fail, request.upload_path + " became shorter while it was uploaded",
                "; leave a file unchanged while it uploads");
  }
  if (request.range_ignored) {
    return make(RetryDecision::fail, "the server sent the whole object (HTTP 200) for a part of it",
                "; the endpoint does not support ranged reads");
  }
  if (request.stalled) return stalled(config);
  if (request.overlong) {
    return make(RetryDecision::retry,
                "the server sent more than the " + std::to_string(request.range->length) +
                    " bytes asked for",
                kBrokenAdvice);
  }
  if (code != CURLE_OK) return decide_transport(easy, request, code, config);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return decide_success(request, status, config);
  return decide_error(request, status, parse_xml_reply(request.response.body), config);
}

std::string failure_message(const Request& request, const RetryDecision& decision,
                            const Config& config) {
  if (!decision.message.empty()) return one_line(redact(decision.message, config));
  std::string text = request.what + ": " + decision.reason;
  if (request.attempts > 1) text += " after " + std::to_string(request.attempts) + " attempts";
  return one_line(redact(text + decision.advice, config));
}

std::optional<ContentRange> parse_content_range(std::string_view text) {
  // "bytes FIRST-LAST/TOTAL"
  constexpr std::string_view kUnit = "bytes ";
  if (!text.starts_with(kUnit)) return std::nullopt;
  text.remove_prefix(kUnit.size());
  ContentRange r;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  for (auto [field, separator] :
       {std::pair{&r.first, '-'}, std::pair{&r.last, '/'}, std::pair{&r.total, '\0'}}) {
    const auto [next, error] = std::from_chars(at, end, *field);
    if (error != std::errc()) return std::nullopt;
    if (separator == '\0') {
      if (next != end) return std::nullopt;
    } else {
      if (next == end || *next != separator) return std::nullopt;
      at = next + 1;
    }
  }
  if (r.first > r.last || r.last >= r.total) return std::nullopt;
  return r;
}

std::optional<ContentRange> edge_span(const Request& request) {
  const Response& response = request.response;
  if (!response.content_range.empty()) return parse_content_range(response.content_range);
  // A 200: the whole object.
  if (!response.content_length) return std::nullopt;
  const std::uint64_t length = *response.content_length;
  return ContentRange{0, length == 0 ? 0 : length - 1, length};
}

}  // namespace gpufeed::storage::s3
