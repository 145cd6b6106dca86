#pragma once
// Datasets in S3-compatible object storage: "s3://bucket/key" is taken wherever a dataset path
// is. Credentials, region and endpoint come from the standard AWS variables and files
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, ~/.aws/credentials,
// ~/.aws/config, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufeed::storage {

/// True for "s3://..." and "gs://..." (Google Cloud Storage through its S3-compatible XML API,
/// HMAC keys): a path the object-store client reads.
[[nodiscard]] inline bool is_object_url(std::string_view path) {
  return path.starts_with("s3://") || path.starts_with("gs://");
}

/// What the object-store client did (monotonic counters of one process; take differences).
struct ObjectStoreStats {
  std::uint64_t requests = 0;        ///< HTTP requests sent, retries included
  std::uint64_t bytes = 0;           ///< body bytes received by GETs
  std::uint64_t retries = 0;         ///< requests sent again after a retryable failure
  std::uint64_t throttled = 0;       ///< responses that asked to slow down (503, SlowDown)
  std::uint64_t in_flight = 0;       ///< requests running now
  std::uint64_t peak_in_flight = 0;  ///< most requests running at once
  std::int64_t backoff_ns = 0;       ///< time requests waited to be retried
  /// Time requests waited for the client's own request rate, which it keeps under what the
  /// server accepts once the server asked to slow down.
  std::int64_t rate_wait_ns = 0;
  double rate_limit = 0;           ///< requests a second the client allows itself now; 0: no limit
  std::int64_t first_byte_ns = 0;  ///< sum over requests of the time to the first byte
  std::int64_t request_ns = 0;     ///< sum over requests of their whole time

  /// What happened between `earlier` (a snapshot of the same counters) and this one: counters
  /// differenced, the gauges (in_flight, peak_in_flight, rate_limit) this snapshot's.
  [[nodiscard]] ObjectStoreStats since(const ObjectStoreStats& earlier) const {
    ObjectStoreStats d = *this;
    d.requests -= earlier.requests;
    d.bytes -= earlier.bytes;
    d.retries -= earlier.retries;
    d.throttled -= earlier.throttled;
    d.backoff_ns -= earlier.backoff_ns;
    d.rate_wait_ns -= earlier.rate_wait_ns;
    d.first_byte_ns -= earlier.first_byte_ns;
    d.request_ns -= earlier.request_ns;
    return d;
  }
};

/// How a dataset in object storage is read ahead of the loader: the ranges the next batches
/// need, in the order they will be read, coalesced into GETs and kept in flight.
struct ReadAhead {
  unsigned requests = 64;  ///< GETs in flight at most
  /// Bytes fetched ahead and not yet read, at most (in flight included).
  std::uint64_t budget_bytes = std::uint64_t{256} << 20;
  /// Neighbouring ranges closer than this are fetched by one GET.
  std::uint64_t coalesce_gap_bytes = std::uint64_t{64} << 10;
  /// A coalesced GET stops growing at this size.
  std::uint64_t max_request_bytes = std::uint64_t{16} << 20;
  /// The first batch reads the plan's first this many ranges: their GETs go out together (the
  /// slow start begins there, at least 8, at most `requests`), not in waves.
  std::uint64_t first_ranges = 0;
};

/// Opens the object at `url` (a HEAD) and keeps every range its readers in this process read
/// under the node-local directory `dir` (created if missing): one file each, tied to the
/// object's ETag (a replaced object is never served from an older copy), written under a
/// temporary name and renamed (the processes of a node share it safely), least recently used
/// files removed past `budget_bytes` (0: half the free space of its filesystem). The readers
/// opened next take from it, their opening metadata included: an epoch served from there
/// fetches nothing but the HEAD, and planned ranges found there are not fetched. Throws
/// UsageError for a malformed URL, IoError for an unusable directory or a failed HEAD.
void use_cache_dir(const std::string& url, const std::string& dir, std::uint64_t budget_bytes);

/// The objects whose URLs start with `prefix` ("s3://bucket/train/shard-"; "s3://bucket/" for
/// all), as URLs in the server's order. Throws UsageError for a malformed prefix, IoError when
/// the listing fails (one line: the status, the endpoint, the credentials' source).
std::vector<std::string> list_objects(const std::string& prefix);

/// Throws UsageError when `url` is not s3://bucket/key (checked before any work is done).
void check_object_url(const std::string& url);

/// The process's object-store counters: every client's since the process started, those of
/// clients already gone (every reader of their objects closed) included.
ObjectStoreStats object_store_stats();

/// The S3 settings a request made now would use, as s3:// reads take them from the environment
/// and the AWS files. Never the secret.
struct S3Settings {
  std::string endpoint;  ///< empty: AWS's own (virtual-hosted) endpoint
  std::string region;
  std::string ca_bundle;    ///< the CA certificates trusted; empty: libcurl's default
  std::string credentials;  ///< where they come from ("none (unsigned requests)" without)
};
/// Throws UsageError for settings a request would refuse (a missing AWS_CA_BUNDLE file, ...).
S3Settings s3_settings();

/// Uploads the local file `local_path` to `url` (s3://bucket/key): one PUT for a small file, a
/// multipart upload otherwise; no object appears at the key unless the whole file arrived.
/// Throws UsageError for a malformed URL and IoError for a failed upload.
void upload_file(const std::string& local_path, const std::string& url);

}  // namespace gpufeed::storage
