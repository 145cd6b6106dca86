// gpufeed::torch: batches as tensors without a copy, released when the tensors die.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/torch/tensor.hpp"
#include "temp_dir.hpp"
#include "torch_fixture.hpp"

namespace gpufeed::testing {
namespace {

constexpr formats::SampleShape kShape{6, 5, 3, formats::Layout::nhwc};

class TorchTensorTest : public ::testing::Test {
 protected:
  void SetUp() override { write_dataset(dir_.file("t.h5"), 40, kShape); }
  Loader make_loader(unsigned prefetch = 2) {
    LoaderOptions o;
    o.source.path = dir_.file("t.h5");
    o.sampling.batch_size = 8;
    o.resources.workers = 1;
    o.resources.prefetch = prefetch;
    o.sampling.order = Order::sequential;
    o.output.keep_raw = true;   // the tests compare Batch::raw()
    o.output.mean = {0, 0, 0};  // images are the stored bytes as floats
    o.output.stddev = {1, 1, 1};
    return Loader(o);
  }
  TempDir dir_;
};

TEST_F(TorchTensorTest, ImagesAreTheBatchsFloatsWithoutACopy) {
  Loader loader = make_loader();
  loader.start_epoch(0);
  Batch batch = loader.next();
  ASSERT_TRUE(batch);
  const float* data = batch.images().data();
  const std::vector<float> expected(batch.images().begin(), batch.images().end());
  const std::vector<std::uint8_t> raw(batch.raw().begin(), batch.raw().end());
  const ::torch::Tensor x = gpufeed::torch::images(batch);
  EXPECT_FALSE(batch) << "images() takes the batch";
  EXPECT_EQ(x.sizes(), (std::vector<std::int64_t>{8, 3, 6, 5}));
  EXPECT_EQ(x.scalar_type(), ::torch::kFloat32);
  EXPECT_TRUE(x.device().is_cpu());
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_EQ(x.data_ptr<float>(), data) << "a view of the slot, not a copy";
  const ::torch::Tensor want = ::torch::tensor(expected).view({8, 3, 6, 5});
  EXPECT_TRUE(::torch::equal(x, want));
  // NCHW floats against the stored NHWC bytes (mean 0, std 1).
  const auto a = x.accessor<float, 4>();
  for (std::int64_t n = 0; n < 8; ++n) {
    for (std::int64_t c = 0; c < 3; ++c) {
      for (std::int64_t h = 0; h < 6; ++h) {
        for (std::int64_t w = 0; w < 5; ++w) {
          const auto stored = raw[static_cast<std::size_t>(((n * 6 + h) * 5 + w) * 3 + c)];
          ASSERT_EQ(a[n][c][h][w], static_cast<float>(stored)) << n << " " << c << " " << h;
        }
      }
    }
  }
}

TEST_F(TorchTensorTest, LabelsShareTheBatchWithTheImages) {
  Loader loader = make_loader();
  loader.start_epoch(0);
  loader.next();  // skip one batch so the labels are not 0, 1, 0, 1 from sample 0
  Batch batch = loader.next();
  const std::int64_t* labels = batch.labels().data();
  const std::vector<std::int64_t> expected(batch.labels().begin(), batch.labels().end());
  ::torch::Tensor x = gpufeed::torch::images(batch);
  const ::torch::Tensor y = gpufeed::torch::labels(batch);  // same, now empty, Batch object
  EXPECT_EQ(y.scalar_type(), ::torch::kInt64);
  EXPECT_EQ(y.sizes(), (std::vector<std::int64_t>{8}));
  EXPECT_EQ(y.data_ptr<std::int64_t>(), labels);
  EXPECT_TRUE(::torch::equal(y, ::torch::tensor(expected)));
  x = ::torch::Tensor();
  EXPECT_EQ(y[0].item<std::int64_t>(), expected[0]) << "the labels keep the batch alive";
}

TEST_F(TorchTensorTest, TheSlotReturnsWhenTheLastTensorDies) {
  Loader loader = make_loader(/*prefetch=*/1);  // two slots: one prefetched, one consumed
  loader.start_epoch(0);
  auto first = gpufeed::torch::tensors(loader.next());
  auto second = gpufeed::torch::tensors(loader.next());
  ASSERT_TRUE(first.images.defined());
  EXPECT_THROW(loader.next(), UsageError) << "both slots are held by the tensors";
  first.images = ::torch::Tensor();
  EXPECT_THROW(loader.next(), UsageError) << "the labels still hold the first batch";
  const ::torch::Tensor view = second.labels.slice(0, 0, 4);
  second = {};
  first.labels = ::torch::Tensor();  // the first slot goes back: the loader moves on
  Batch third = loader.next();
  ASSERT_TRUE(third);
  EXPECT_EQ(third.index(), 2u);
  EXPECT_THROW(loader.next(), UsageError) << "a view of the second batch's labels holds it";
  EXPECT_EQ(view.size(0), 4);
}

TEST_F(TorchTensorTest, ViewsLeaveTheBatchWithTheCaller) {
  Loader loader = make_loader();
  loader.start_epoch(0);
  Batch batch = loader.next();
  const ::torch::Tensor x = gpufeed::torch::images_view(batch);
  const ::torch::Tensor y = gpufeed::torch::labels_view(batch);
  EXPECT_TRUE(batch);
  EXPECT_EQ(x.data_ptr<float>(), batch.images().data());
  EXPECT_EQ(y.data_ptr<std::int64_t>(), batch.labels().data());
  EXPECT_EQ(x.size(0), batch.size());
}

TEST_F(TorchTensorTest, EmptyBatchesAreRejected) {
  Batch empty;
  EXPECT_THROW(gpufeed::torch::images(empty), gpufeed::UsageError);
  EXPECT_THROW(gpufeed::torch::labels_view(empty), gpufeed::UsageError);
  EXPECT_THROW(gpufeed::torch::tensors(Batch{}), gpufeed::UsageError);
  Loader loader = make_loader();
  loader.start_epoch(0);
  Batch batch = loader.next();
  { const ::torch::Tensor x = gpufeed::torch::images(batch); }
  EXPECT_THROW(gpufeed::torch::labels(batch), gpufeed::UsageError)
      << "the images tensor that held the batch is gone";
}

TEST(TorchScalarType, MapsBatchDtypes) {
  EXPECT_EQ(gpufeed::torch::scalar_type(DType::float32), ::torch::kFloat32);
  EXPECT_EQ(gpufeed::torch::scalar_type(DType::float16), ::torch::kFloat16);
  EXPECT_EQ(gpufeed::torch::scalar_type(DType::bfloat16), ::torch::kBFloat16);
}

}  // namespace
}  // namespace gpufeed::testing
