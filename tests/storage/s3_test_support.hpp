#pragma once
// What the S3 client's tests share: the moto server and fault proxy (tests/common/s3_server.py),
// a clean AWS environment, test files and a configuration for a local endpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "file_bytes.hpp"
#include "gpufeed/storage/error.hpp"
#include "s3/client.hpp"
#include "s3_server.hpp"

namespace gpufeed::testing {

// The client's names every S3 test uses, and the matchers they check its messages with.
using storage::IoError;
using storage::s3::ByteRange;
using storage::s3::Client;
using storage::s3::Config;
using storage::s3::Url;
using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

/// The message of the IoError `call` throws; a failure when it throws none.
inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const IoError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no IoError";
  return {};
}

inline const std::string kS3Python = GPUFEED_S3_PYTHON;
inline const std::string kS3Script = GPUFEED_S3_SERVER_SCRIPT;
inline const std::string kBucket = "gpufeed-test";

/// Skips the test when moto cannot run here (checked once per process).
#define GPUFEED_SKIP_WITHOUT_MOTO()                                               \
  do {                                                                            \
    static const std::string why =                                                \
        ::gpufeed::testing::s3_server_unavailable(::gpufeed::testing::kS3Python); \
    if (!why.empty()) GTEST_SKIP() << why;                                        \
  } while (false)

/// moto with the test bucket; `extra` adds s3_server.py moto options.
inline std::unique_ptr<S3ServerProcess> start_moto(std::vector<std::string> extra = {},
                                                   int lines = 1) {
  std::vector<std::string> args{"moto", "--bucket", kBucket};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<S3ServerProcess>(kS3Python, kS3Script, args, lines);
}

/// A fault proxy in front of `target`; `faults` are s3_server.py proxy options.
inline std::unique_ptr<S3ServerProcess> start_proxy(const std::string& target,
                                                    std::vector<std::string> faults) {
  std::vector<std::string> args{"proxy", "--target", target};
  args.insert(args.end(), faults.begin(), faults.end());
  return std::make_unique<S3ServerProcess>(kS3Python, kS3Script, args, 1);
}

/// Clears every variable the S3 configuration reads (the AWS files point at nothing, so the
/// machine's ~/.aws stays out of the tests) and puts them back on destruction.
class ScopedAwsEnv {
 public:
  ScopedAwsEnv() {
    for (const char* name : {"AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY",
                             "AWS_SESSION_TOKEN",
                             "AWS_SECURITY_TOKEN",
                             "AWS_PROFILE",
                             "AWS_DEFAULT_PROFILE",
                             "AWS_SHARED_CREDENTIALS_FILE",
                             "AWS_CONFIG_FILE",
                             "AWS_REGION",
                             "AWS_DEFAULT_REGION",
                             "AWS_ENDPOINT_URL_S3",
                             "AWS_ENDPOINT_URL",
                             "AWS_NO_SIGN_REQUEST",
                             "AWS_MAX_ATTEMPTS",
                             "GPUFEED_S3_STALL_SECONDS",
                             "AWS_CA_BUNDLE",
                             "SSL_CERT_FILE",
                             "GS_ACCESS_KEY_ID",
                             "GS_SECRET_ACCESS_KEY",
                             "GS_ENDPOINT_URL"}) {
      const char* value = std::getenv(name);
      saved_[name] = value == nullptr ? std::nullopt : std::optional<std::string>(value);
      ::unsetenv(name);
    }
    set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/gpufeed-test/credentials");
    set("AWS_CONFIG_FILE", "/nonexistent/gpufeed-test/config");
  }
  ~ScopedAwsEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedAwsEnv(const ScopedAwsEnv&) = delete;
  ScopedAwsEnv& operator=(const ScopedAwsEnv&) = delete;

  void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

inline std::vector<std::uint8_t> random_bytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::uint8_t> bytes(size);
  for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random());
  return bytes;
}

// Credentials moto (without --auth) takes as they are; their secret parts must never show.
inline const std::string kTestSecret = "sEcReT-0123456789-abcdefghij";
inline const std::string kTestToken = "ToKeN-9876543210-zyxwvutsrq";

/// A signed configuration for `endpoint` with quick retries.
inline storage::s3::Config local_config(const std::string& endpoint) {
  storage::s3::Config config;
  config.endpoint = endpoint;
  config.access_key = "AKIDGPUFEEDTEST";
  config.secret_key = kTestSecret;
  config.credential_source = "AWS_ACCESS_KEY_ID";
  config.max_attempts = 4;
  config.backoff_base = std::chrono::milliseconds(1);
  config.backoff_cap = std::chrono::milliseconds(20);
  config.stall_timeout = std::chrono::seconds(2);
  config.connect_timeout = std::chrono::seconds(5);
  return config;
}

}  // namespace gpufeed::testing
