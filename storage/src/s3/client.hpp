#pragma once
// A client for S3-compatible object storage over libcurl: ranged GETs (many in flight on one I/O
// thread), HEAD, and uploads (one PUT, or a multipart upload that leaves nothing at the key
// unless it completes). libcurl signs every request with AWS Signature V4 (CURLOPT_AWS_SIGV4);
// credentials, region and endpoint come from the standard AWS variables and files. A secret
// never appears in a message, a log or a statistic.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::storage::s3 {

/// "s3://bucket/key" (or "gs://bucket/key") split. parse() throws UsageError for anything else
/// (no bucket, no key, another scheme), naming the text and the form expected.
struct Url {
  std::string bucket;
  std::string key;
  std::string scheme = "s3";  ///< "s3", or "gs": Google Cloud Storage's XML API

  static Url parse(std::string_view text);
  /// "s3://bucket/key"
  [[nodiscard]] std::string text() const { return scheme + "://" + bucket + "/" + key; }
};

/// Where requests go and how they are signed, as every AWS tool takes it:
/// - credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN, sent as
///   x-amz-security-token); otherwise the profile AWS_PROFILE (default "default") in
///   AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials), then in AWS_CONFIG_FILE (default
///   ~/.aws/config, section "[profile NAME]" or "[default]"); otherwise none: unsigned requests
///   (public buckets). AWS_NO_SIGN_REQUEST=true forces unsigned requests.
/// - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region` in the config file, else
///   us-east-1.
/// - endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url`: path-style
///   URLs (http://host:port/bucket/key) for S3-compatible servers; else AWS's virtual-hosted
///   https://bucket.s3.REGION.amazonaws.com/key.
/// - retries: AWS_MAX_ATTEMPTS (default 5) attempts per request.
/// - CA bundle (the CAs trusted for HTTPS): AWS_CA_BUNDLE, the profile's `ca_bundle`,
///   SSL_CERT_FILE (OpenSSL's variable); a file named there that does not exist is a UsageError.
///   Else the first of kSystemCaBundles that exists, else libcurl's compiled-in default (a wheel's
///   libcurl has Debian's, which other distributions lack). The peer and host name are always
///   verified.
struct Config {
  std::string endpoint;  ///< empty: AWS's virtual-hosted endpoint for `region`
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;     ///< never printed
  std::string session_token;  ///< never printed
  /// Where the credentials came from, for messages: "AWS_ACCESS_KEY_ID",
  /// "profile 'ci' in /root/.aws/credentials", "none (unsigned requests)".
  std::string credential_source;
  int max_attempts = 5;
  /// Backoff before retry n (1-based): uniform in [0, min(cap, base * 2^(n-1))] ("full jitter").
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_cap{5000};
  /// A transfer that moves no byte for this long is abandoned (and retried): a stalled server
  /// slows the job, it never hangs it. GPUFEED_S3_STALL_SECONDS overrides it.
  std::chrono::seconds stall_timeout{30};
  std::chrono::seconds connect_timeout{10};
  /// PEM file of the CA certificates trusted for HTTPS; empty: libcurl's default.
  std::string ca_bundle;

  /// Reads the environment and the AWS files. Throws UsageError for a profile named by
  /// AWS_PROFILE that neither file has, a malformed endpoint or AWS_MAX_ATTEMPTS, or a CA bundle
  /// named that does not exist.
  static Config from_environment();
  /// The configuration of `scheme`'s URLs: S3's above, or for "gs" Google Cloud Storage's XML
  /// API: GS_ENDPOINT_URL (default https://storage.googleapis.com, path-style), region "auto",
  /// an HMAC key from GS_ACCESS_KEY_ID + GS_SECRET_ACCESS_KEY, else the AWS credentials above.
  static Config from_environment(std::string_view scheme);
  [[nodiscard]] bool signed_requests() const { return !access_key.empty(); }
  /// The request URL of `url`'s object (path-style or virtual-hosted).
  [[nodiscard]] std::string object_url(const Url& url) const;
  /// "endpoint http://127.0.0.1:9000, credentials from AWS_ACCESS_KEY_ID": what a 403 or 404
  /// message adds. Never the secret.
  [[nodiscard]] std::string describe() const;

  friend bool operator==(const Config&, const Config&) = default;
};

/// Where distributions keep the system's CA bundle, in the order they are tried.
inline constexpr std::array<std::string_view, 5> kSystemCaBundles = {
    "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Arch
    "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL, CentOS
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7 and later
    "/etc/ssl/ca-bundle.pem",                             // openSUSE
    "/etc/ssl/cert.pem",                                  // Alpine, macOS
};

/// The first of `candidates` that is a file (a link to one counts), else empty.
std::string first_ca_bundle(std::span<const std::string_view> candidates = kSystemCaBundles);

/// Size and version of an object, from HEAD.
struct ObjectInfo {
  std::uint64_t size = 0;
  std::string etag;  ///< as the server sent it, quotes included
};

/// An object's first and last bytes, and what the replies that brought them say of it.
struct ObjectEdges {
  ObjectInfo info;
  std::vector<std::uint8_t> first;  ///< bytes [0, first.size())
  std::uint64_t last_offset = 0;
  std::vector<std::uint8_t> last;  ///< bytes [last_offset, info.size)
};

/// Bytes [offset, offset + length) of an object.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  [[nodiscard]] std::uint64_t end() const { return offset + length; }
};

/// Called on the client's I/O thread when a get_async() finished: null on success, else the
/// IoError that ended it after its last attempt. Must not block.
using Done = std::function<void(std::exception_ptr error)>;

/// One client per configuration, shared by the objects of a process that read through it
/// (Client::shared()) and owned by them: its I/O thread runs all transfers on one curl multi
/// handle (connections reused) and is joined when the last owner lets go, or by the exit handler
/// of process.hpp when one outlives main(). Methods are thread-safe. Errors are IoError (a
/// FormatError), one line: what (GET, HEAD, PUT), the URL, the byte range, the HTTP status and
/// S3 error code, the attempts made and what to do. 403 and 404 are not retried and name the
/// endpoint and credential source. 500, 502, 503, 504, SlowDown, RequestTimeout, connection
/// resets, stalls and bodies shorter than asked are retried with backoff. A GET given an ETag
/// sends If-Match: an object replaced since it was opened fails (412) with a message that says
/// so, never returns the new object's bytes.
class Client {
 public:
  explicit Client(Config config);
  ~Client();  ///< cancels what is still in flight (their Done get an error), joins the thread
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// The client for Config::from_environment() while something holds it, else a new one. The
  /// process keeps none: whoever reads through it holds it.
  static std::shared_ptr<Client> shared();
  /// The same for the configuration of `scheme` ("s3", "gs").
  static std::shared_ptr<Client> shared(std::string_view scheme);
  /// The client shared() made last, if something still holds it, else null.
  static std::shared_ptr<Client> shared_if_made();

  [[nodiscard]] const Config& config() const;

  /// HEAD: the object's size and ETag.
  ObjectInfo head(const Url& url);
  /// Opens an object by its edges rather than a HEAD, in one round trip: GETs of its first
  /// `first_bytes` and of its last `last_bytes` (a suffix range: no size needed) sent together;
  /// its size and ETag come from their replies. A smaller object comes whole. Replies of two
  /// versions (the object replaced in between) are fetched again, twice at most, then an
  /// IoError says so. Errors as get()'s.
  ObjectEdges edges(const Url& url, std::uint64_t first_bytes, std::uint64_t last_bytes);
  ObjectEdges edges(const Url& url, std::uint64_t bytes) { return edges(url, bytes, bytes); }
  /// GET of `range` into `out` (exactly range.length bytes), blocking.
  void get(const Url& url, ByteRange range, std::span<std::uint8_t> out,
           const std::string& etag = {});
  /// The same, queued on the I/O thread: `out` must stay valid until `done` ran. A range whose
  /// body is not exactly range.length bytes is retried, and never reported as a success. An
  /// empty range sends no request. Not to be called blocking (get, head) from a Done. `done`
  /// must not own this client (the I/O thread cannot join itself). cancel(`owner`) ends it.
  void get_async(const Url& url, ByteRange range, std::span<std::uint8_t> out, std::string etag,
                 Done done, const void* owner = nullptr);
  /// Ends the GETs sent with `owner` that have not finished: their Done get an IoError
  /// ("cancelled") on the I/O thread, soon after; returns at once.
  void cancel(const void* owner);
  /// Uploads the local file `path` to `url`: one PUT up to `part_bytes`, else a multipart
  /// upload of parts of `part_bytes` (raised to keep within 10,000 parts), up to `parallel` at
  /// once; a failed multipart upload is aborted, so no object appears at the key unless the
  /// whole file arrived. `part_bytes` is kept within S3's part sizes (5 MiB to 5 GiB), so a file
  /// up to 5 MiB always goes in one PUT. Bodies are sent UNSIGNED-PAYLOAD (as the AWS SDKs do
  /// over HTTPS); requests without a body carry the empty body's SHA-256.
  void put_file(const Url& url, const std::string& path,
                std::uint64_t part_bytes = std::uint64_t{64} << 20, unsigned parallel = 8);
  /// The keys of `bucket` that start with `prefix`, in the server's (lexicographic) order:
  /// ListObjectsV2, page by page.
  std::vector<std::string> list(const std::string& bucket, const std::string& prefix,
                                const std::string& scheme = "s3");
  /// Removes the object (tests and failed uploads).
  void remove(const Url& url);

  /// Counters since the client was made (monotonic; callers take differences).
  [[nodiscard]] ObjectStoreStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufeed::storage::s3
