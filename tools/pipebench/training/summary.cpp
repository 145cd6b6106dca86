#include "pipebench/training/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::tools::pipebench {

namespace {

const std::vector<std::int64_t>& file_labels(const Loader& loader) {
  return loader.dataset().labels();
}

double ms_per_step(const RunResult& run) {
  const StageStats& s = run.stats[Stage::step];
  return s.items == 0 ? 0.0 : static_cast<double>(s.busy_ns) * 1e-6 / static_cast<double>(s.items);
}

std::string mode(const TrainingOptions& o) {
  return o.eval ? "eval" : "train";
}

}  // namespace

std::int64_t label_classes(const Loader& loader, const std::string& model) {
  const auto& labels = file_labels(loader);
  if (labels.empty()) return 2;
  const auto [low, high] = std::minmax_element(labels.begin(), labels.end());
  const std::string dataset =
      loader.options().source.labels.empty() ? "(none)" : loader.options().source.labels;
  if (*high < 0) {
    throw UsageError("--model " + model + " needs labels, and " + loader.options().source.path +
                     " has none at --labels " + dataset + "; name the label dataset or use " +
                     "--model none");
  }
  if (*low < 0) {
    throw UsageError("--model " + model + ": " + loader.options().source.path + " " + dataset +
                     " holds a negative label (" + std::to_string(*low) +
                     "); labels must be class indices 0, 1, ...");
  }
  return std::max<std::int64_t>(*high + 1, 2);
}

formats::SampleShape model_input(const Loader& loader) {
  formats::SampleShape shape = loader.sample_shape();
  shape.layout = formats::Layout::nchw;
  return shape;
}

std::string describe_training(const TrainingOptions& o, const RunResult& run) {
  const TrainingStats s = run.training.value_or(TrainingStats{});
  char text[512];
  std::snprintf(text, sizeof text,
                "%s, %s lr %g, %s, amp %s%s, %llu steps, %.1f ms/step, last loss %.4f, "
                "compute %s%s%s",
                o.model.c_str(), o.optimizer.c_str(), o.learning_rate, mode(o).c_str(),
                o.amp.c_str(), o.channels_last ? ", channels-last" : "",
                static_cast<unsigned long long>(s.steps), ms_per_step(run), s.last_loss,
                s.dtype.c_str(), s.deterministic ? ", deterministic" : "",
                o.device.is_cpu() ? (", torch threads " + std::to_string(s.threads)).c_str() : "");
  return text;
}

nlohmann::json training_json(const TrainingOptions& o, const RunResult& run) {
  const TrainingStats s = run.training.value_or(TrainingStats{});
  return {{"model", o.model},
          {"optimizer", o.optimizer},
          {"learning_rate", o.learning_rate},
          {"mode", mode(o)},
          {"amp", o.amp},
          {"channels_last", o.channels_last},
          {"cudnn_benchmark", o.cudnn_benchmark},
          {"deterministic", s.deterministic},
          {"sync_every", o.sync_every},
          {"num_classes", o.num_classes},
          {"input", {o.input.channels, o.input.height, o.input.width}},
          {"steps", s.steps},
          {"step_ms", ms_per_step(run)},
          {"last_loss", s.last_loss},
          {"dtype", s.dtype},
          {"threads", s.threads},
          {"allocator_peak_bytes", s.allocator_peak_bytes}};
}

}  // namespace gpufeed::tools::pipebench
