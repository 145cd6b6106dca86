// pipebench's training stage: the models run, learn, keep still in eval mode, reject misfits.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "pipebench/training.hpp"
#include "shared_dataset.hpp"
#include "temp_dir.hpp"
#include "torch_fixture.hpp"

namespace gpufeed::testing {
namespace {

using tools::pipebench::TrainingOptions;
using tools::pipebench::TrainingStage;

constexpr formats::SampleShape kShape{32, 32, 3, formats::Layout::nhwc};

class TrainingTest : public SharedDataset<TrainingTest> {
 public:
  static std::string make_dataset(const TempDir& dir) {
    const std::string path = dir.file("easy.h5");
    write_dataset(path, 64, kShape, easy_pixel);
    return path;
  }

 protected:
  static Loader make_loader(std::uint32_t batch = 32) {
    LoaderOptions o;
    o.source.path = data_;
    o.sampling.batch_size = batch;
    o.resources.workers = 1;
    o.sampling.order = Order::random;
    return Loader(o);
  }
  static TrainingOptions options(const std::string& model) {
    TrainingOptions o;
    o.model = model;
    o.num_classes = 2;
    o.input = {32, 32, 3, formats::Layout::nchw};
    return o;
  }
  /// The loss after each of `steps` steps, cycling over the epochs of a 32-sample loader.
  static std::vector<double> losses(TrainingStage& stage, int steps) {
    Loader loader = make_loader();
    std::vector<double> out;
    for (std::uint64_t epoch = 0; static_cast<int>(out.size()) < steps; ++epoch) {
      loader.start_epoch(epoch);
      while (static_cast<int>(out.size()) < steps) {
        const Batch batch = loader.next();
        if (!batch) break;
        stage.step(batch);
        out.push_back(stage.stats().last_loss);
      }
    }
    return out;
  }
};

TEST_F(TrainingTest, NoneMakesNoStage) {
  EXPECT_EQ(TrainingStage::create(options("none")), nullptr);
}

TEST_F(TrainingTest, EveryModelLearnsTheEasyProblem) {
  for (const char* model : {"mlp", "cnn", "resnet18"}) {
    SCOPED_TRACE(model);
    const auto stage = TrainingStage::create(options(model));
    ASSERT_NE(stage, nullptr);
    const std::vector<double> loss = losses(*stage, 12);
    EXPECT_EQ(stage->stats().steps, 12u);
    EXPECT_EQ(stage->stats().dtype, "float32");
    EXPECT_TRUE(std::isfinite(loss.front()));
    EXPECT_GT(loss.front(), 0.3) << "an untrained model does not know the classes";
    EXPECT_LT(loss.back(), 0.5 * loss.front())
        << "first " << loss.front() << ", last " << loss.back();
  }
}

TEST_F(TrainingTest, AdamWLearnsToo) {
  TrainingOptions o = options("cnn");
  o.optimizer = "adamw";
  o.learning_rate = 0.001;
  const std::vector<double> loss = losses(*TrainingStage::create(o), 10);
  EXPECT_LT(loss.back(), 0.5 * loss.front()) << loss.front() << " -> " << loss.back();
}

TEST_F(TrainingTest, EvalModeChangesNothing) {
  Loader loader = make_loader();
  loader.start_epoch(0);
  const Batch batch = loader.next();
  TrainingOptions o = options("cnn");
  o.eval = true;
  const auto eval = TrainingStage::create(o);
  std::vector<double> eval_losses;
  for (int i = 0; i < 3; ++i) {
    eval->step(batch);
    eval_losses.push_back(eval->stats().last_loss);
  }
  EXPECT_EQ(eval_losses[0], eval_losses[1]) << "parameters and running statistics unchanged";
  EXPECT_EQ(eval_losses[1], eval_losses[2]);
  // The same steps in train mode do change the model.
  const auto train = TrainingStage::create(options("cnn"));
  train->step(batch);
  const double before = train->stats().last_loss;
  train->step(batch);
  EXPECT_NE(train->stats().last_loss, before);
}

TEST_F(TrainingTest, ModelsThatDoNotFitTheSamplesAreUsageErrors) {
  TrainingOptions tiny = options("resnet18");
  tiny.input = {8, 8, 3, formats::Layout::nchw};
  EXPECT_THROW(TrainingStage::create(tiny), UsageError);
  tiny.model = "cnn";
  EXPECT_NO_THROW(TrainingStage::create(tiny));
  tiny.input = {4, 4, 3, formats::Layout::nchw};
  EXPECT_THROW(TrainingStage::create(tiny), UsageError);
  TrainingOptions huge = options("mlp");
  huge.input = {512, 512, 3, formats::Layout::nchw};
  EXPECT_THROW(TrainingStage::create(huge), UsageError);
  // Built for 16x16x3, fed 32x32x3; and built for one channel, fed three.
  for (const formats::SampleShape input :
       {formats::SampleShape{16, 16, 3, formats::Layout::nchw},
        formats::SampleShape{32, 32, 1, formats::Layout::nchw}}) {
    TrainingOptions o = options("cnn");
    o.input = input;
    const auto stage = TrainingStage::create(o);
    Loader loader = make_loader();
    loader.start_epoch(0);
    EXPECT_THROW(stage->step(loader.next()), UsageError);
  }
}

TEST_F(TrainingTest, BadOptionsAreUsageErrors) {
  TrainingOptions o = options("cnn");
  o.optimizer = "lbfgs";
  EXPECT_THROW(TrainingStage::create(o), UsageError);
  o = options("cnn");
  o.amp = "float16";  // autocast to float16 needs CUDA
  EXPECT_THROW(TrainingStage::create(o), UsageError);
  o = options("cnn");
  o.num_classes = 1;
  EXPECT_THROW(TrainingStage::create(o), UsageError);
  o = options("cnn");
  o.deterministic = o.cudnn_benchmark = true;
  EXPECT_THROW(TrainingStage::create(o), UsageError);
  o = options("vgg");
  EXPECT_THROW(TrainingStage::create(o), UsageError);
}

TEST_F(TrainingTest, Bfloat16AutocastChannelsLastAndSyncsRun) {
  TrainingOptions o = options("cnn");
  o.amp = "bfloat16";
  o.channels_last = true;
  o.sync_every = 1;
  const auto stage = TrainingStage::create(o);
  const std::vector<double> loss = losses(*stage, 3);
  EXPECT_EQ(stage->stats().dtype, "bfloat16");
  EXPECT_TRUE(std::isfinite(loss.back()));
}

TEST_F(TrainingTest, DeterministicRunsRepeat) {
  TrainingOptions o = options("cnn");
  o.deterministic = true;
  const auto a = TrainingStage::create(o);
  const std::vector<double> first = losses(*a, 3);
  EXPECT_TRUE(a->stats().deterministic);
  const std::vector<double> second = losses(*TrainingStage::create(o), 3);
  EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace gpufeed::testing
