// pipebench on a dataset in object storage (moto on loopback, signed requests) ends with its own
// exit status whatever ends the run: every epoch done, Ctrl-C, or the server gone mid-epoch.
// Never SIGSEGV: no request thread of the S3 client is left signing while the process's exit
// handlers (OpenSSL's among them) tear down what it uses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "dataset_fixture.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "run_command.hpp"
#include "s3_server.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kBucket = "pipebench-s3";

class PipebenchS3 : public ::testing::Test {
 protected:
  void SetUp() override {
    static const std::string why = s3_server_unavailable(GPUFEED_S3_PYTHON);
    if (!why.empty()) GTEST_SKIP() << why;
    moto_ =
        std::make_unique<S3ServerProcess>(GPUFEED_S3_PYTHON, GPUFEED_S3_SERVER_SCRIPT,
                                          std::vector<std::string>{"moto", "--bucket", kBucket}, 1);
    env_ = {{"AWS_ENDPOINT_URL_S3", moto_->url()},
            {"AWS_ACCESS_KEY_ID", "AKIDPIPEBENCH"},
            {"AWS_SECRET_ACCESS_KEY", "pipebench-secret-never-shown"},
            {"AWS_REGION", "us-east-1"},
            {"AWS_MAX_ATTEMPTS", "3"},
            {"AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/gpufeed-test/credentials"},
            {"AWS_CONFIG_FILE", "/nonexistent/gpufeed-test/config"}};
    const std::string local = dir_.file("data.h5");
    write_dataset(local, 8192, formats::SampleShape{16, 16, 3, formats::Layout::nhwc}, 32);
    upload(local);
  }

  // This process uploads through the same variables the child reads.
  void upload(const std::string& local) {
    std::map<std::string, std::optional<std::string>> saved;
    for (const auto& [name, value] : env_) {
      const char* old = std::getenv(name.c_str());
      saved[name] = old == nullptr ? std::nullopt : std::optional<std::string>(old);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
    storage::upload_file(local, url_);
    for (const auto& [name, value] : saved) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

  [[nodiscard]] std::vector<std::string> run_args(const std::string& epochs,
                                                  const std::string& cache_mb = "512") const {
    return {pipebench_bin(), "run",    "--data",     url_,    "--epochs",         epochs,
            "--batch",       "128",    "--workers",  "2",     "--device",         "cpu",
            "--cache-mb",    cache_mb, "--progress", "plain", "--progress-every", "0.05"};
  }

  std::unique_ptr<S3ServerProcess> moto_;
  std::map<std::string, std::string> env_;
  TempDir dir_;
  std::string url_ = std::string("s3://") + kBucket + "/data.h5";
};

TEST_F(PipebenchS3, TwoEpochsOfSignedReadsEndWithExitZero) {
  for (int run = 0; run < 3; ++run) {  // a race at exit: one run may pass by luck
    const CommandResult r = run_command(run_args("2"), env_);
    ASSERT_EQ(r.exit_code, 0) << "run " << run << ": " << r.describe();
    EXPECT_THAT(r.out, HasSubstr("network"));
  }
}

TEST_F(PipebenchS3, CtrlCMidEpochReportsAndExits130) {
  RunningCommand run(run_args("1000000"), env_);
  ASSERT_TRUE(wait_for_progress(run)) << "no progress line: " << run.err_so_far();
  run.signal(SIGINT);
  const CommandResult r = run.wait();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("interrupted by SIGINT"));
}

TEST_F(PipebenchS3, AServerGoneMidEpochIsOneErrorLineAndAFailureStatus) {
  RunningCommand run(run_args("1000000", "1"), env_);  // no chunk cache: every epoch reads S3
  ASSERT_TRUE(wait_for_progress(run)) << "no progress line: " << run.err_so_far();
  moto_.reset();  // every range from now on fails after its retries
  const CommandResult r = run.wait();
  EXPECT_GT(r.exit_code, 0) << r.describe();
  EXPECT_LT(r.exit_code, 128) << "killed by a signal: " << r.describe();
  EXPECT_THAT(r.err, HasSubstr(url_));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("pipebench-secret-never-shown")));
}

}  // namespace
}  // namespace gpufeed::testing
