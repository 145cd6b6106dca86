#pragma once
// The file a benchmark reads: the user's --data, or synthetic samples (--synthetic, or the
// embedded default) generated into a temporary file that is removed again, also when a second
// Ctrl-C ends pipebench at once.
#include <memory>
#include <string>

#include "gpufeed/storage/pending_files.hpp"
#include "pipebench/options.hpp"

namespace gpufeed::tools::pipebench {

class BenchDataset {
 public:
  /// Generates the synthetic file when there is no --data. Throws UsageError for a bad
  /// --synthetic spec, formats::FormatError when the file cannot be written.
  explicit BenchDataset(const BenchOptions& options);
  ~BenchDataset();
  BenchDataset(const BenchDataset&) = delete;
  BenchDataset& operator=(const BenchDataset&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  /// The N:HxWxC spec of a generated dataset; empty for --data.
  [[nodiscard]] const std::string& synthetic() const { return synthetic_; }
  [[nodiscard]] bool temporary() const { return temporary_; }

 private:
  std::string path_;
  std::string synthetic_;
  bool temporary_ = false;
  std::unique_ptr<storage::PendingFile> pending_;  // the temporary file, for signal handlers
};

}  // namespace gpufeed::tools::pipebench
