// The S3 client against failures: a fault proxy (tests/common/s3_server.py) in front of moto
// throttles, fails, resets, cuts short and stalls requests; moto with --auth checks every
// signature. Secrets never appear in a message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <sstream>

#include "gpufeed/storage/error.hpp"
#include "s3/client.hpp"
#include "s3_test_support.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

constexpr std::size_t kObjectSize = 3 << 20;
const Url kObject{kBucket, "object.bin"};

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// moto holding kObject, and a proxy in front of it per test.
class S3Faults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!s3_server_unavailable(kS3Python).empty()) return;
    moto_ = start_moto();
    TempDir dir;
    bytes_ = random_bytes(kObjectSize, 11);
    write_file(dir.file("object"), bytes_);
    Client(local_config(moto_->url())).put_file(kObject, dir.file("object"));
  }
  static void TearDownTestSuite() { moto_.reset(); }
  void SetUp() override { GPUFEED_SKIP_WITHOUT_MOTO(); }

  // A client through a proxy that injects `faults`.
  std::unique_ptr<Client> through(std::vector<std::string> faults, int attempts = 4) {
    proxy_ = start_proxy(moto_->url(), std::move(faults));
    Config config = local_config(proxy_->url());
    config.max_attempts = attempts;
    config.stall_timeout = std::chrono::seconds(1);
    return std::make_unique<Client>(config);
  }

  // Reads `range` of kObject and checks every byte.
  static void expect_read(Client& client, ByteRange range) {
    std::vector<std::uint8_t> out(range.length);
    client.get(kObject, range, out);
    EXPECT_TRUE(
        std::equal(out.begin(), out.end(), bytes_.begin() + static_cast<long>(range.offset)));
  }

  static inline std::unique_ptr<S3ServerProcess> moto_;
  static inline std::vector<std::uint8_t> bytes_;
  std::unique_ptr<S3ServerProcess> proxy_;
};

TEST_F(S3Faults, SlowDownIsRetriedAndCountedAsThrottled) {
  auto client = through({"--fault", "503", "--fail-first", "2"});
  expect_read(*client, {1 << 20, 1 << 20});
  const auto stats = client->stats();
  EXPECT_EQ(stats.retries, 2U);
  EXPECT_EQ(stats.throttled, 2U);
  EXPECT_EQ(stats.requests, 3U);
  EXPECT_GT(stats.backoff_ns, 0);
}

// S3 answers SlowDown beyond ~5,500 GETs a second on a prefix; scaled down, 50 a second (the
// proxy and moto serve ~200 here). A client sending far more at once keeps under the limit by
// itself: every GET succeeds, few are refused after the first burst, and the rate it settles on
// is near the server's.
TEST_F(S3Faults, AGetRateCapIsKeptUnderWithoutBeingTold) {
  auto client = through({"--get-rate", "50"});
  constexpr std::size_t kGets = 200;
  constexpr std::uint64_t kRange = 4096;
  std::vector<std::vector<std::uint8_t>> outs(kGets, std::vector<std::uint8_t>(kRange));
  std::mutex mutex;
  std::condition_variable cv;
  std::size_t left = kGets;
  std::vector<std::exception_ptr> errors;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kGets; ++i) {
    client->get_async(kObject, {i * kRange, kRange}, outs[i], {}, [&](std::exception_ptr e) {
      const std::lock_guard lock(mutex);
      if (e) errors.push_back(e);
      if (--left == 0) cv.notify_all();
    });
  }
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return left == 0; });
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(errors.empty()) << errors.size() << " GETs failed";
  for (std::size_t i = 0; i < kGets; ++i) {
    ASSERT_TRUE(std::equal(outs[i].begin(), outs[i].end(), bytes_.begin() + i * kRange)) << i;
  }
  const auto stats = client->stats();
  const auto why = ::testing::Message()
                   << stats.throttled << " refused of " << stats.requests << " requests, limit "
                   << stats.rate_limit << "/s, " << seconds << " s";
  EXPECT_GT(stats.throttled, 0U) << "200 GETs at once are beyond 50 a second; " << why;
  // The first burst is refused; paced after it, a GET is refused about once at most.
  EXPECT_LE(stats.requests, 2 * kGets + kGets / 10) << why;
  EXPECT_GT(stats.rate_limit, 20.0) << why;
  EXPECT_LT(stats.rate_limit, 100.0) << why;
  EXPECT_GT(stats.rate_wait_ns, 0) << why;
  EXPECT_GT(seconds, 2.0) << "200 GETs cannot pass a cap of 50 a second faster; " << why;
  EXPECT_LT(seconds, 20.0) << why;
}

TEST_F(S3Faults, ServerErrorsResetsAndShortBodiesAreRetried) {
  for (const char* fault : {"500", "reset", "short"}) {
    SCOPED_TRACE(fault);
    auto client = through({"--fault", fault, "--fail-first", "1"});
    expect_read(*client, {100, 2 << 20});
    expect_read(*client, {0, kObjectSize});
    // A reset on a reused connection before any reply is retried by libcurl itself, unseen.
    EXPECT_GE(client->stats().retries, std::string(fault) == "reset" ? 1U : 2U);
    EXPECT_LE(client->stats().retries, 2U);
    EXPECT_EQ(client->stats().throttled, 0U);
  }
}

TEST_F(S3Faults, AnEdgeCutShortOrFailedIsRetriedAndItsBytesAreTheObjects) {
  for (const char* fault : {"500", "short"}) {
    SCOPED_TRACE(fault);
    auto client = through({"--fault", fault, "--fail-first", "2"});
    const storage::s3::ObjectEdges edges = client->edges(kObject, 1 << 20);
    EXPECT_EQ(edges.info.size, kObjectSize);
    EXPECT_TRUE(std::equal(edges.first.begin(), edges.first.end(), bytes_.begin()));
    ASSERT_EQ(edges.last.size(), std::size_t{1} << 20);
    EXPECT_TRUE(std::equal(edges.last.begin(), edges.last.end(),
                           bytes_.begin() + static_cast<long>(kObjectSize - (1 << 20))));
    EXPECT_EQ(client->stats().retries, 4U);  // the first two attempts of each GET failed
  }
}

TEST_F(S3Faults, StalledTransferIsAbandonedAndRetried) {
  auto client = through({"--fault", "stall", "--fail-first", "1"});
  const auto start = std::chrono::steady_clock::now();
  expect_read(*client, {0, 1 << 20});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
  EXPECT_EQ(client->stats().retries, 1U);
}

TEST_F(S3Faults, LastAttemptNamesUrlRangeStatusAndAdvice) {
  auto client = through({"--fault", "503"}, 3);
  std::vector<std::uint8_t> out(1 << 20);
  EXPECT_EQ(error_of([&] {
              client->get(kObject, {1 << 20, 1 << 20}, out);
            }),
            "GET s3://" + kBucket +
                "/object.bin bytes 1048576-2097151: HTTP 503 SlowDown after 3 attempts; the "
                "server kept refusing at the lowest request rate: send fewer, larger requests "
                "(read in chunk order, pack more samples a chunk), spread the data over more "
                "prefixes, or retry later");
  EXPECT_EQ(client->stats().throttled, 3U);
}

TEST_F(S3Faults, EndlessStallFailsInsteadOfHanging) {
  auto client = through({"--fault", "stall"}, 2);
  std::vector<std::uint8_t> out(1 << 20);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(error_of([&] {
                client->get(kObject, {0, 1 << 20}, out);
              }),
              AllOf(StartsWith("GET s3://" + kBucket + "/object.bin bytes 0-1048575: stalled"),
                    HasSubstr("after 2 attempts"), HasSubstr("GPUFEED_S3_STALL_SECONDS")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(S3Faults, ForbiddenIsNotRetriedAndShowsNoSecret) {
  proxy_ = start_proxy(moto_->url(), {"--fault", "403"});
  Config config = local_config(proxy_->url());
  config.session_token = kTestToken;
  Client client(config);
  std::vector<std::uint8_t> out(10);
  const std::string message = error_of([&] { client.get(kObject, {0, 10}, out); });
  EXPECT_EQ(message, "GET s3://" + kBucket +
                         "/object.bin bytes 0-9: HTTP 403 AccessDenied (endpoint " + proxy_->url() +
                         ", credentials from AWS_ACCESS_KEY_ID); check the credentials and the "
                         "bucket policy");
  EXPECT_EQ(client.stats().requests, 1U);
  EXPECT_EQ(client.stats().retries, 0U);
}

TEST_F(S3Faults, RetriedPartCompletesTheUpload) {
  TempDir dir;
  const auto bytes = random_bytes((11 << 20) + 7, 12);
  write_file(dir.file("big"), bytes);
  auto client = through({"--fault", "500", "--fail-first", "1", "--match", "partNumber=2&"});
  const Url url{kBucket, "retried-part.bin"};
  client->put_file(url, dir.file("big"), 5 << 20, 3);
  EXPECT_EQ(client->stats().retries, 1U);
  std::vector<std::uint8_t> out(bytes.size());
  client->get(url, {0, bytes.size()}, out);
  EXPECT_EQ(out, bytes);
}

TEST_F(S3Faults, FailedMultipartUploadLeavesNoObject) {
  TempDir dir;
  write_file(dir.file("big"), random_bytes((12 << 20) + 1, 13));
  auto client = through({"--fault", "500", "--match", "partNumber=2&"}, 2);
  const Url url{kBucket, "failed-upload.bin"};
  EXPECT_THAT(error_of([&] { client->put_file(url, dir.file("big"), 5 << 20, 2); }),
              AllOf(StartsWith("PUT s3://" + kBucket +
                               "/failed-upload.bin part 2 of 3: HTTP 500 "
                               "InternalError after 2 attempts"),
                    HasSubstr("the multipart upload was aborted")));
  Client direct(local_config(moto_->url()));
  EXPECT_THAT(error_of([&] { direct.head(url); }), HasSubstr("HTTP 404"));
}

TEST(S3Unreachable, EndpointThatRefusesConnectionsFailsAfterItsAttempts) {
  Config config = local_config("http://127.0.0.1:1");  // nothing listens on port 1
  config.max_attempts = 2;
  Client client(config);
  std::vector<std::uint8_t> out(10);
  EXPECT_THAT(
      error_of([&] {
        client.get(kObject, {0, 10}, out);
      }),
      AllOf(StartsWith("GET s3://" + kBucket + "/object.bin bytes 0-9: cannot connect"),
            HasSubstr("after 2 attempts"),
            HasSubstr("check that the endpoint is reachable (endpoint http://127.0.0.1:1")));
  EXPECT_EQ(client.stats().retries, 1U);
}

// moto checking signatures: libcurl's SigV4 (session token included) passes, a wrong secret,
// a wrong token or no credentials are refused, and no message shows a secret.
TEST(S3Signatures, SignedRequestsPassAndRefusalsShowNoSecret) {
  GPUFEED_SKIP_WITHOUT_MOTO();
  const auto moto = start_moto({"--object", kBucket + "/signed.bin:5000", "--auth"}, 3);
  const auto user = words(moto->lines()[1]);
  const auto role = words(moto->lines()[2]);
  ASSERT_EQ(user.size(), 2U);
  ASSERT_EQ(role.size(), 3U);
  const Url url{kBucket, "signed.bin"};
  std::vector<std::uint8_t> out(1000);

  Config config = local_config(moto->url());
  config.access_key = user[0];
  config.secret_key = user[1];
  Client(config).get(url, {4000, 1000}, out);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], (4000 + i) % 251) << i;
  EXPECT_EQ(Client(config).head(url).size, 5000U);

  config.access_key = role[0];
  config.secret_key = role[1];
  config.session_token = role[2];
  EXPECT_EQ(Client(config).head(url).size, 5000U);
  Client(config).get(url, {0, 1000}, out);

  for (const bool wrong_token : {false, true}) {
    Config wrong = config;
    if (wrong_token) wrong.session_token = kTestToken;
    if (!wrong_token) wrong.secret_key = kTestSecret;
    const std::string message = error_of([&] { Client(wrong).get(url, {0, 10}, out); });
    EXPECT_THAT(message, AllOf(StartsWith("GET s3://" + kBucket + "/signed.bin bytes 0-9: HTTP 4"),
                               HasSubstr(wrong_token ? "InvalidToken" : "SignatureDoesNotMatch"),
                               HasSubstr("check the credentials"), Not(HasSubstr(wrong.secret_key)),
                               Not(HasSubstr(wrong.session_token))));
  }

  Config unsigned_config = local_config(moto->url());
  unsigned_config.access_key.clear();
  unsigned_config.secret_key.clear();
  unsigned_config.credential_source = "none (unsigned requests)";
  EXPECT_THAT(error_of([&] { Client(unsigned_config).head(url); }),
              AllOf(HasSubstr("HTTP 403"), HasSubstr("credentials: none (unsigned requests)")));
}

}  // namespace
}  // namespace gpufeed::testing
