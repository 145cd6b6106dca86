#pragma once
// A raw-layout dataset in object storage: written here, uploaded to moto, read back by the tests
// through s3:// with signed requests. Skips the test when moto cannot run.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dataset_fixture.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "s3_test_support.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {

class S3DatasetTest : public ::testing::Test {
 protected:
  /// `samples` of `shape`, `chunk` to a chunk (testing::write_dataset's pixels and labels).
  S3DatasetTest(formats::SampleShape shape, std::uint64_t samples, std::uint64_t chunk)
      : shape_(shape), samples_(samples), chunk_(chunk) {}

  void SetUp() override {
    GPUFEED_SKIP_WITHOUT_MOTO();
    moto_ = start_moto();
    env_.set("AWS_ENDPOINT_URL_S3", moto_->url());
    env_.set("AWS_ACCESS_KEY_ID", "AKIDGPUFEEDTEST");  // signed requests: OpenSSL at work
    env_.set("AWS_SECRET_ACCESS_KEY", kTestSecret);
    write_dataset(local_, samples_, shape_, chunk_);
    storage::upload_file(local_, url_);
  }

  ScopedAwsEnv env_;
  std::unique_ptr<S3ServerProcess> moto_;
  TempDir dir_;
  std::string local_ = dir_.file("data.h5");
  std::string url_ = "s3://" + kBucket + "/sets/data.h5";

 private:
  formats::SampleShape shape_;
  std::uint64_t samples_;
  std::uint64_t chunk_;
};

}  // namespace gpufeed::testing
