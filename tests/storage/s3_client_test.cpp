// The S3 client against a real moto server: ranged reads, many in flight, errors worded for the
// user (and never with a secret), signatures moto checks, uploads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "s3/client.hpp"
#include "s3_test_support.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

class S3Client : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (s3_server_unavailable(kS3Python).empty()) moto_ = start_moto();
  }
  static void TearDownTestSuite() { moto_.reset(); }
  void SetUp() override {
    GPUFEED_SKIP_WITHOUT_MOTO();
    client_ = std::make_unique<Client>(local_config(moto_->url()));
  }

  // Uploads `size` random bytes to `key` and returns them.
  std::vector<std::uint8_t> put(const std::string& key, std::size_t size, std::uint32_t seed) {
    auto bytes = random_bytes(size, seed);
    write_file(dir_.file("upload"), bytes);
    client_->put_file(Url{kBucket, key}, dir_.file("upload"));
    return bytes;
  }

  static inline std::unique_ptr<S3ServerProcess> moto_;
  TempDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(S3Client, RangedGetsReturnExactlyTheBytesAsked) {
  const Url url{kBucket, "data/ranged file.bin"};
  const auto bytes = put(url.key, 300000, 1);
  const auto info = client_->head(url);
  EXPECT_EQ(info.size, bytes.size());
  EXPECT_THAT(info.etag, AllOf(StartsWith("\""), EndsWith("\"")));
  for (const ByteRange range :
       {ByteRange{0, 1}, ByteRange{12345, 54321}, ByteRange{299999, 1}, ByteRange{0, 300000}}) {
    std::vector<std::uint8_t> out(range.length);
    client_->get(url, range, out, info.etag);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + static_cast<long>(range.offset)))
        << range.offset << "+" << range.length;
  }
  const auto stats = client_->stats();
  EXPECT_GE(stats.requests, 6U);  // PUT, HEAD, 4 GETs
  EXPECT_EQ(stats.bytes, 1U + 54321U + 1U + 300000U);
  EXPECT_EQ(stats.retries, 0U);
  EXPECT_EQ(stats.in_flight, 0U);
  EXPECT_GT(stats.request_ns, 0);
  EXPECT_GT(stats.first_byte_ns, 0);
}

TEST_F(S3Client, EdgesOpenAnObjectInOneRoundTripWithItsSizeAndETag) {
  const Url url{kBucket, "data/edges.bin"};
  const auto bytes = put(url.key, 300000, 7);
  const auto info = client_->head(url);
  const std::uint64_t before = client_->stats().requests;
  const storage::s3::ObjectEdges edges = client_->edges(url, 100000);
  EXPECT_EQ(client_->stats().requests - before, 2U) << "two GETs, no HEAD";
  EXPECT_EQ(edges.info.size, bytes.size());
  EXPECT_EQ(edges.info.etag, info.etag);
  EXPECT_TRUE(std::equal(edges.first.begin(), edges.first.end(), bytes.begin()));
  EXPECT_EQ(edges.first.size(), 100000U);
  EXPECT_EQ(edges.last_offset, 200000U);
  ASSERT_EQ(edges.last.size(), 100000U);
  EXPECT_TRUE(std::equal(edges.last.begin(), edges.last.end(), bytes.begin() + 200000));
  // An object smaller than an edge comes whole in both.
  const Url small{kBucket, "data/small.bin"};
  const auto few = put(small.key, 777, 8);
  const storage::s3::ObjectEdges whole = client_->edges(small, 100000);
  EXPECT_EQ(whole.info.size, 777U);
  EXPECT_EQ(whole.first, few);
  EXPECT_EQ(whole.last, few);
  EXPECT_EQ(whole.last_offset, 0U);
  EXPECT_THROW((void)client_->edges(Url{kBucket, "data/none.bin"}, 100000), IoError);
}

TEST_F(S3Client, ManyGetsInFlight) {
  const Url url{kBucket, "many.bin"};
  constexpr std::size_t kPiece = 8192;
  constexpr std::size_t kPieces = 64;
  const auto bytes = put(url.key, kPiece * kPieces, 2);
  std::vector<std::uint8_t> out(bytes.size());
  std::mutex mutex;
  std::condition_variable all_done;
  std::size_t done = 0;
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < kPieces; ++i) {
    client_->get_async(url, ByteRange{i * kPiece, kPiece},
                       std::span(out).subspan(i * kPiece, kPiece), {},
                       [&](std::exception_ptr error) {
                         const std::lock_guard lock(mutex);
                         if (error) errors.emplace_back("failed");
                         ++done;
                         all_done.notify_all();
                       });
  }
  std::unique_lock lock(mutex);
  all_done.wait(lock, [&] { return done == kPieces; });
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(out, bytes);
  EXPECT_GT(client_->stats().peak_in_flight, 1U);
}

TEST_F(S3Client, ReplacedObjectFailsThePreconditionInsteadOfMixingVersions) {
  const Url url{kBucket, "replaced.bin"};
  put(url.key, 1000, 3);
  const std::string old_etag = client_->head(url).etag;
  put(url.key, 1000, 4);
  std::vector<std::uint8_t> out(100);
  EXPECT_EQ(error_of([&] {
              client_->get(url, {0, 100}, out, old_etag);
            }),
            "s3://" + kBucket + "/replaced.bin changed since it was opened (ETag " + old_etag +
                " no longer matches); restart the job to read the new object");
  EXPECT_EQ(client_->stats().retries, 0U);
}

TEST_F(S3Client, MissingKeyNamesKeyEndpointAndCredentials) {
  const Url url{kBucket, "missing.bin"};
  std::vector<std::uint8_t> out(10);
  EXPECT_EQ(error_of([&] {
              client_->get(url, {0, 10}, out);
            }),
            "GET s3://" + kBucket + "/missing.bin bytes 0-9: HTTP 404 NoSuchKey (endpoint " +
                moto_->url() + ", credentials from AWS_ACCESS_KEY_ID); check the bucket and key");
  EXPECT_EQ(error_of([&] { client_->head(url); }),
            "HEAD s3://" + kBucket + "/missing.bin: HTTP 404, no such bucket or key (endpoint " +
                moto_->url() + ", credentials from AWS_ACCESS_KEY_ID); check the bucket and key");
  EXPECT_THAT(error_of([&] { client_->head(Url{"no-such-bucket", "k"}); }), HasSubstr("HTTP 404"));
  EXPECT_EQ(client_->stats().retries, 0U);
}

TEST_F(S3Client, RangePastTheEndFailsWithoutRetries) {
  const Url url{kBucket, "short.bin"};
  put(url.key, 100, 5);
  std::vector<std::uint8_t> out(100);
  EXPECT_THAT(error_of([&] {
                client_->get(url, {50, 100}, out);
              }),
              AllOf(StartsWith("GET s3://" + kBucket + "/short.bin bytes 50-149: "),
                    HasSubstr("only 100 bytes")));
  EXPECT_THAT(error_of([&] { client_->get(url, {200, 10}, out); }), HasSubstr("HTTP 416"));
  EXPECT_EQ(client_->stats().retries, 0U);
}

TEST_F(S3Client, RemoveDeletesTheObject) {
  const Url url{kBucket, "removed.bin"};
  put(url.key, 10, 6);
  client_->remove(url);
  EXPECT_THAT(error_of([&] { client_->head(url); }), HasSubstr("HTTP 404"));
}

TEST_F(S3Client, SinglePutAndEmptyFile) {
  const Url url{kBucket, "empty.bin"};
  put(url.key, 0, 7);
  EXPECT_EQ(client_->head(url).size, 0U);
  std::vector<std::uint8_t> none;
  client_->get(url, {0, 0}, none);  // nothing to read: no request, no error
}

TEST_F(S3Client, MultipartUploadOfPartsInParallel) {
  const Url url{kBucket, "multipart.bin"};
  const auto bytes = random_bytes((12 << 20) + 12345, 8);
  write_file(dir_.file("big"), bytes);
  client_->put_file(url, dir_.file("big"), 5 << 20, 2);
  const auto info = client_->head(url);
  EXPECT_EQ(info.size, bytes.size());
  EXPECT_THAT(info.etag, EndsWith("-3\""));  // S3's ETag of a 3-part upload
  std::vector<std::uint8_t> out(bytes.size());
  client_->get(url, {0, bytes.size()}, out, info.etag);
  EXPECT_EQ(out, bytes);
}

TEST_F(S3Client, UploadOfAMissingFileNamesIt) {
  const std::string path = dir_.file("absent");
  try {
    client_->put_file(Url{kBucket, "x"}, path);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("No such file")));
  }
}

TEST_F(S3Client, DestroyingTheClientCancelsWhatIsInFlight) {
  const auto proxy = start_proxy(moto_->url(), {"--delay-ms", "3000"});
  Config config = local_config(proxy->url());
  auto client = std::make_unique<Client>(config);
  std::vector<std::uint8_t> out(10);
  std::exception_ptr error;
  bool called = false;
  client->get_async(Url{kBucket, "slow"}, {0, 10}, out, {}, [&](std::exception_ptr e) {
    error = std::move(e);
    called = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  client.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_TRUE(called);
  ASSERT_TRUE(error);
  EXPECT_THAT(error_of([&] { std::rethrow_exception(error); }), HasSubstr("cancelled"));
}

TEST_F(S3Client, SharedClientAndUploadFileFromTheEnvironment) {
  ScopedAwsEnv env;
  if (!Client::shared_if_made()) {
    (void)storage::object_store_stats();
    EXPECT_FALSE(Client::shared_if_made());  // statistics made no client
  }
  env.set("AWS_ENDPOINT_URL_S3", moto_->url());
  env.set("AWS_ACCESS_KEY_ID", "AKIDSHARED");
  env.set("AWS_SECRET_ACCESS_KEY", kTestSecret);
  const auto bytes = random_bytes(1000, 9);
  write_file(dir_.file("shared"), bytes);
  storage::upload_file(dir_.file("shared"), "s3://" + kBucket + "/shared.bin");
  EXPECT_EQ(Client::shared(), Client::shared());
  EXPECT_EQ(Client::shared()->head(Url{kBucket, "shared.bin"}).size, 1000U);
  EXPECT_GE(storage::object_store_stats().requests, 2U);
  EXPECT_THROW(storage::upload_file(dir_.file("shared"), "s3://" + kBucket), UsageError);
}

}  // namespace
}  // namespace gpufeed::testing
