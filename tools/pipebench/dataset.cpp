#include "pipebench/dataset.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <system_error>

#include "common/progress.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/formats/synthetic.hpp"

namespace gpufeed::tools::pipebench {

namespace {

constexpr std::uint32_t kSyntheticClasses = 10;

std::string temporary_path() {
  static std::atomic<unsigned> counter{0};
  const std::string name = "pipebench-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1)) + ".h5";
  return (std::filesystem::temp_directory_path() / name).string();
}

formats::SyntheticSpec parse_spec(const std::string& text) {
  try {
    return formats::parse_synthetic_spec(text);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--synthetic: ") + e.what());
  }
}

}  // namespace

BenchDataset::BenchDataset(const BenchOptions& o) {
  if (!o.data.empty()) {
    path_ = o.data;
    return;
  }
  const bool embedded = o.synthetic.empty();
  const formats::SyntheticSpec spec = parse_spec(embedded ? kDefaultSynthetic : o.synthetic);
  synthetic_ = to_string(spec);
  const formats::PackInput input =
      formats::synthetic_input(spec, o.loader.sampling.seed, kSyntheticClasses);
  formats::PackSettings settings;
  settings.writer.samples_per_chunk = embedded ? kDefaultSyntheticChunk : 0;
  settings.threads = o.loader.resources.workers.value_or(0);  // auto: every core
  path_ = temporary_path();
  temporary_ = true;
  pending_ = std::make_unique<storage::PendingFile>(path_);
  ProgressBar bar("generating", input.samples, input.shape.bytes());
  formats::pack_file(path_, input, settings, [&bar](std::uint64_t done) { bar.update(done); });
}

BenchDataset::~BenchDataset() {
  if (!temporary_) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace gpufeed::tools::pipebench
