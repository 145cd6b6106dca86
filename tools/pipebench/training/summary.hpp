#pragma once
// What the training stage needs from the dataset, and how a run reports it (no LibTorch here).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/run.hpp"
#include "pipebench/training.hpp"

namespace gpufeed::tools::pipebench {

/// Classes in the loader's labels: max label + 1, at least 2. Throws UsageError, naming
/// --model and --labels, when the file has no labels or a negative one.
std::int64_t label_classes(const Loader& loader, const std::string& model);

/// One sample as the model sees it: channels, height, width of the normalized batch.
formats::SampleShape model_input(const Loader& loader);

/// "cnn, sgd lr 0.01, train, amp none, 96 steps, 85.2 ms/step, last loss 2.2981, float32"
std::string describe_training(const TrainingOptions& options, const RunResult& run);
/// The --json "training" object.
nlohmann::json training_json(const TrainingOptions& options, const RunResult& run);

}  // namespace gpufeed::tools::pipebench
