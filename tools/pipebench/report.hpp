#pragma once
// What one benchmark run found, and the numbers derived from it, for the terminal and --json.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/diagnosis/run_facts.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "pipebench/dataset.hpp"
#include "pipebench/options.hpp"
#include "pipebench/run.hpp"

namespace gpufeed::tools::pipebench {

/// --device as asked for, and the device the run used (resolved: the CPU or an indexed CUDA
/// device).
struct DeviceChoice {
  Device requested;
  Device used;
};

struct DatasetSummary {
  std::string path;
  std::string synthetic;  ///< N:HxWxC when generated
  std::uint64_t samples = 0;
  formats::SampleShape shape;
  std::uint64_t chunk = 0;
  std::uint64_t chunks = 0;
  std::string compression;
  std::string read_path;
};

struct BenchReport {
  DatasetSummary dataset;
  BenchOptions options;
  RunPlan plan;
  DeviceChoice device;
  unsigned workers = 0;
  std::uint64_t batches_per_epoch = 0;
  RunResult run;
  std::uint64_t peak_rss_bytes = 0;
  /// What the diagnosis and the practice checks read of the run: the loader's facts over the
  /// run, and the run's steps, epochs and training stage.
  diagnosis::RunFacts facts;
};

BenchReport make_report(const Loader& loader, const BenchDataset& data, const BenchOptions& options,
                        const DeviceChoice& device, const RunResult& run);

/// Samples delivered per second over the whole run.
double samples_per_s(const BenchReport& r);
/// Samples per second after the first epoch; nullopt when the run ended within it.
std::optional<double> steady_samples_per_s(const BenchReport& r);
/// Bytes of output (in the run's dtype) per second.
double output_bytes_per_s(const BenchReport& r);
/// Mean busy milliseconds per item of a stage (0 without items).
double ms_per_item(const StageStats& s);

/// The plain-text summary on stdout.
void print_report(const BenchReport& r);
/// The --json object (DESIGN, "Command lines": the required keys plus details).
nlohmann::json report_json(const BenchReport& r);
/// Writes `value` to `path` atomically (temporary file beside it, then rename).
void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace gpufeed::tools::pipebench
