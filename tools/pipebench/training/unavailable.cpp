// The training stage of a pipebench built without LibTorch: --model none only.
#include "gpufeed/base/errors.hpp"
#include "pipebench/training.hpp"

namespace gpufeed::tools::pipebench {

std::unique_ptr<TrainingStage> TrainingStage::create(const TrainingOptions& options) {
  if (options.model == "none") return nullptr;
  throw UsageError("--model " + options.model +
                   " needs a pipebench built with LibTorch (libtorch-dev), and this one has "
                   "none; use --model none");
}

}  // namespace gpufeed::tools::pipebench
