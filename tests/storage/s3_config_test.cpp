// The S3 client's configuration: AWS variables, the credentials and config files, URLs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string_view>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "s3/client.hpp"
#include "s3_test_support.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// A configuration that found the test's secret and token with `access_key`, and the region,
/// endpoint and attempts given.
void expect_resolved(const Config& config, const std::string& access_key, const std::string& region,
                     const std::string& endpoint, int max_attempts) {
  EXPECT_EQ(config.access_key, access_key);
  EXPECT_EQ(config.secret_key, kTestSecret);
  EXPECT_EQ(config.session_token, kTestToken);
  EXPECT_EQ(config.region, region);
  EXPECT_EQ(config.endpoint, endpoint);
  EXPECT_EQ(config.max_attempts, max_attempts);
}

TEST(S3Url, ParsesBucketAndKey) {
  const Url url = Url::parse("s3://my-bucket/a/b c.h5");
  EXPECT_EQ(url.bucket, "my-bucket");
  EXPECT_EQ(url.key, "a/b c.h5");
  EXPECT_EQ(url.text(), "s3://my-bucket/a/b c.h5");
  const Url gcs = Url::parse("gs://my-bucket/shards/00/a.h5");
  EXPECT_EQ(gcs.scheme, "gs");
  EXPECT_EQ(gcs.key, "shards/00/a.h5");
  EXPECT_EQ(gcs.text(), "gs://my-bucket/shards/00/a.h5");
  for (const char* bad :
       {"s3://bucket", "s3://bucket/", "s3:///key", "http://b/k", "b/k", "", "gs:/b/k", "gs"}) {
    try {
      Url::parse(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(std::string("'") + bad + "'"),
                                  HasSubstr("s3://bucket/path/to/object")));
    }
  }
}

TEST(S3Config, GsUrlsGoToCloudStoragesXmlApiWithAnHmacKey) {
  ScopedAwsEnv env;
  env.set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env.set("AWS_SECRET_ACCESS_KEY", kTestSecret);
  env.set("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000/");
  env.set("AWS_REGION", "eu-central-1");
  Config gcs = Config::from_environment("gs");
  EXPECT_EQ(gcs.endpoint, "https://storage.googleapis.com");  // not S3's endpoint
  EXPECT_EQ(gcs.region, "auto");
  EXPECT_EQ(gcs.access_key, "AKIDENV");  // without an HMAC key of its own, the AWS one
  EXPECT_EQ(gcs.object_url(Url::parse("gs://b/k.h5")), "https://storage.googleapis.com/b/k.h5");
  env.set("GS_ACCESS_KEY_ID", "GOOG1EKEY");
  env.set("GS_SECRET_ACCESS_KEY", "gcs-secret");
  env.set("GS_ENDPOINT_URL", "http://127.0.0.1:4443");
  gcs = Config::from_environment("gs");
  EXPECT_EQ(gcs.access_key, "GOOG1EKEY");
  EXPECT_EQ(gcs.secret_key, "gcs-secret");
  EXPECT_EQ(gcs.endpoint, "http://127.0.0.1:4443");
  EXPECT_THAT(gcs.describe(), AllOf(HasSubstr("GS_ACCESS_KEY_ID"), Not(HasSubstr("gcs-secret"))));
  EXPECT_EQ(Config::from_environment("s3").endpoint, "http://127.0.0.1:9000");
}

TEST(S3Config, FromEnvironmentVariables) {
  ScopedAwsEnv env;
  env.set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env.set("AWS_SECRET_ACCESS_KEY", kTestSecret);
  env.set("AWS_SESSION_TOKEN", kTestToken);
  env.set("AWS_DEFAULT_REGION", "eu-west-1");
  env.set("AWS_REGION", "eu-central-1");
  env.set("AWS_ENDPOINT_URL", "http://127.0.0.1:1/");
  env.set("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000/");
  env.set("AWS_MAX_ATTEMPTS", "7");
  env.set("GPUFEED_S3_STALL_SECONDS", "3");
  const Config config = Config::from_environment();
  expect_resolved(config, "AKIDENV", "eu-central-1", "http://127.0.0.1:9000", 7);
  EXPECT_EQ(config.stall_timeout, std::chrono::seconds(3));
  EXPECT_TRUE(config.signed_requests());
  EXPECT_EQ(config.describe(),
            "endpoint http://127.0.0.1:9000, credentials from AWS_ACCESS_KEY_ID");
}

TEST(S3Config, ProfileFromTheCredentialsAndConfigFiles) {
  ScopedAwsEnv env;
  TempDir dir;
  const std::string credentials = dir.file("credentials");
  const std::string config_file = dir.file("config");
  write_text(credentials,
             "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = nope\n\n"
             "# the job's profile\n[ci]\naws_access_key_id=AKIDCI\n"
             "aws_secret_access_key = " +
                 kTestSecret + "\naws_session_token = " + kTestToken + "\n");
  write_text(config_file,
             "[default]\nregion = us-west-2\n[profile  ci]\nregion = ap-south-1\n"
             "s3 =\n  endpoint_url = http://127.0.0.1:9100\n  addressing_style = path\n"
             "max_attempts = 9\n");
  env.set("AWS_SHARED_CREDENTIALS_FILE", credentials);
  env.set("AWS_CONFIG_FILE", config_file);
  env.set("AWS_PROFILE", "ci");
  const Config config = Config::from_environment();
  expect_resolved(config, "AKIDCI", "ap-south-1", "http://127.0.0.1:9100", 9);
  EXPECT_EQ(config.credential_source, "profile 'ci' in " + credentials);
  EXPECT_THAT(config.describe(), AllOf(HasSubstr("profile 'ci' in " + credentials),
                                       Not(HasSubstr(kTestSecret)), Not(HasSubstr(kTestToken))));
}

TEST(S3Config, DefaultProfileFromTheConfigFileAlone) {
  ScopedAwsEnv env;
  TempDir dir;
  const std::string config_file = dir.file("config");
  write_text(config_file,
             "[default]\naws_access_key_id = AKIDCONF\naws_secret_access_key = " + kTestSecret +
                 "\nregion = eu-north-1\nendpoint_url = https://objects.example.com\n");
  env.set("AWS_CONFIG_FILE", config_file);
  const Config config = Config::from_environment();
  EXPECT_EQ(config.access_key, "AKIDCONF");
  EXPECT_EQ(config.region, "eu-north-1");
  EXPECT_EQ(config.endpoint, "https://objects.example.com");
  EXPECT_EQ(config.credential_source, "profile 'default' in " + config_file);
}

TEST(S3Config, ProfileThatNeitherFileHasIsAUsageError) {
  ScopedAwsEnv env;
  env.set("AWS_PROFILE", "nowhere");
  try {
    Config::from_environment();
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(
        e.what(),
        AllOf(HasSubstr("'nowhere'"), HasSubstr("/nonexistent/gpufeed-test/credentials"),
              HasSubstr("/nonexistent/gpufeed-test/config"), HasSubstr("unset AWS_PROFILE")));
  }
}

TEST(S3Config, UnsignedWithoutCredentialsOrWhenAsked) {
  ScopedAwsEnv env;
  Config config = Config::from_environment();
  EXPECT_FALSE(config.signed_requests());
  EXPECT_EQ(config.region, "us-east-1");
  EXPECT_EQ(config.max_attempts, 5);
  EXPECT_EQ(config.credential_source, "none (unsigned requests)");
  EXPECT_EQ(config.describe(),
            "endpoint AWS S3 in us-east-1, credentials: none (unsigned requests)");

  env.set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env.set("AWS_SECRET_ACCESS_KEY", kTestSecret);
  env.set("AWS_NO_SIGN_REQUEST", "true");
  config = Config::from_environment();
  EXPECT_FALSE(config.signed_requests());
  EXPECT_TRUE(config.secret_key.empty());
  EXPECT_THAT(config.credential_source, HasSubstr("AWS_NO_SIGN_REQUEST"));
}

TEST(S3Config, MalformedValuesAreUsageErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"AWS_MAX_ATTEMPTS", "zero"},       {"AWS_MAX_ATTEMPTS", "0"},
      {"GPUFEED_S3_STALL_SECONDS", "-1"}, {"AWS_ENDPOINT_URL_S3", "localhost:9000"},
      {"AWS_ENDPOINT_URL", "ftp://host"}, {"AWS_SECRET_ACCESS_KEY", "only-the-secret"}};
  for (const auto& [name, value] : cases) {
    ScopedAwsEnv env;
    env.set(name, value);
    try {
      Config::from_environment();
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(name));
      if (std::string(name) != "AWS_SECRET_ACCESS_KEY") {
        EXPECT_THAT(e.what(), HasSubstr(value));
      }
      EXPECT_THAT(e.what(), Not(HasSubstr("only-the-secret")));
    }
  }
}

TEST(S3Config, CaBundleProbeTakesTheFirstFileThatExists) {
  TempDir dir;
  write_text(dir.file("second.pem"), "");
  write_text(dir.file("third.pem"), "");
  const std::string missing = dir.file("missing.pem");
  const std::string second = dir.file("second.pem");
  const std::string third = dir.file("third.pem");
  const std::string folder = dir.path().string();
  EXPECT_EQ(
      storage::s3::first_ca_bundle(std::vector<std::string_view>{missing, folder, second, third}),
      second);
  EXPECT_EQ(storage::s3::first_ca_bundle(std::vector<std::string_view>{third, second}), third);
  EXPECT_EQ(storage::s3::first_ca_bundle(std::vector<std::string_view>{missing, folder}), "");
  EXPECT_EQ(storage::s3::first_ca_bundle(std::span<const std::string_view>{}), "");
}

TEST(S3Config, CaBundleFromAwsCaBundleProfileSslCertFileThenTheSystem) {
  ScopedAwsEnv env;
  TempDir dir;
  for (const char* name : {"aws.pem", "profile.pem", "openssl.pem"}) write_text(dir.file(name), "");
  const std::string config_file = dir.file("config");
  write_text(config_file, "[profile ci]\nca_bundle = " + dir.file("profile.pem") + "\n");
  env.set("AWS_CONFIG_FILE", config_file);
  env.set("AWS_PROFILE", "ci");
  env.set("AWS_CA_BUNDLE", dir.file("aws.pem"));
  env.set("SSL_CERT_FILE", dir.file("openssl.pem"));
  EXPECT_EQ(Config::from_environment().ca_bundle, dir.file("aws.pem"));
  ::unsetenv("AWS_CA_BUNDLE");
  EXPECT_EQ(Config::from_environment().ca_bundle, dir.file("profile.pem"));
  ::unsetenv("AWS_PROFILE");  // the default profile, which the file lacks
  EXPECT_EQ(Config::from_environment().ca_bundle, dir.file("openssl.pem"));
  ::unsetenv("SSL_CERT_FILE");
  EXPECT_EQ(Config::from_environment().ca_bundle, storage::s3::first_ca_bundle());
}

TEST(S3Config, CaBundleNamedThatDoesNotExistIsAUsageError) {
  TempDir dir;
  const std::string missing = dir.file("missing/ca.pem");
  const std::string config_file = dir.file("config");
  write_text(config_file, "[default]\nca_bundle = " + missing + "\n");
  const std::pair<const char*, std::string> cases[] = {
      {"AWS_CA_BUNDLE", "AWS_CA_BUNDLE=" + missing + ": no such file"},
      {"AWS_CONFIG_FILE",
       "ca_bundle=" + missing + " (profile 'default' in " + config_file + "): no such file"},
      {"SSL_CERT_FILE", "SSL_CERT_FILE=" + missing + ": no such file"}};
  for (const auto& [name, expected] : cases) {
    ScopedAwsEnv env;
    env.set(name, std::string(name) == "AWS_CONFIG_FILE" ? config_file : missing);
    try {
      Config::from_environment();
      ADD_FAILURE() << name << " naming a missing file accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.what(), expected + "; point it at a PEM file of the CA certificates to trust");
    }
  }
  // A bundle named that is missing is an error even where a later source names one that exists.
  ScopedAwsEnv env;
  write_text(dir.file("ca.pem"), "");
  env.set("AWS_CA_BUNDLE", missing);
  env.set("SSL_CERT_FILE", dir.file("ca.pem"));
  EXPECT_THROW(Config::from_environment(), UsageError);
}

TEST(S3Config, ObjectUrls) {
  Config config;
  config.endpoint = "http://127.0.0.1:9000";
  EXPECT_EQ(config.object_url(Url::parse("s3://b/dir/a b+c~(1).h5")),
            "http://127.0.0.1:9000/b/dir/a%20b%2Bc~%281%29.h5");
  config.endpoint.clear();
  config.region = "eu-west-1";
  EXPECT_EQ(config.object_url(Url::parse("s3://data/train/x.h5")),
            "https://data.s3.eu-west-1.amazonaws.com/train/x.h5");
  EXPECT_EQ(config.object_url(Url::parse("s3://my.data/x.h5")),
            "https://s3.eu-west-1.amazonaws.com/my.data/x.h5");
}

}  // namespace
}  // namespace gpufeed::testing
