#pragma once
// What h5pack verify found wrong, printed as it is found: the first kProblemsShown of a kind
// on stdout, then "... and N more"; and the verdict at its end.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "gpufeed/formats/dataset.hpp"

namespace gpufeed::tools::h5pack {

inline constexpr std::uint64_t kProblemsShown = 20;

class ProblemList {
 public:
  void add(const std::string& line);
  /// "... and N more <kind>" when more than kProblemsShown were added.
  void close(const char* kind) const;
  [[nodiscard]] std::uint64_t count() const { return count_; }

 private:
  std::uint64_t count_ = 0;
};

/// h5pack verify of one file: a pass over its `total` units ("chunks" or "samples"), each about
/// `bytes_per_unit` bytes, drawn as a "verifying" progress bar, with the units found bad in a
/// ProblemList (the bar erased before each is printed); then its labels, and the verdict. Units
/// are reported from one thread at a time.
class VerifyPass {
 public:
  VerifyPass(const char* units, std::uint64_t total, std::uint64_t bytes_per_unit);

  /// Unit `i` is checked; `problem` is the line that says what is wrong with it, if anything.
  void checked(std::uint64_t i, const std::optional<std::string>& problem);
  /// Ends the pass ("... and N more bad <units>"), then lists the labels below 0, or not below
  /// `classes` when the file names its classes (classes > 0; a file without labels, every label
  /// -1, has none bad). When a unit or a label was bad: one line on stderr, "FILE: B of N UNITs
  /// and L labels failed verification; re-create ...", and kExitFailure; else `ok` on stdout and
  /// kExitOk.
  int verdict(const std::string& file, const std::vector<std::int64_t>& labels,
              std::uint64_t classes, const std::string& ok);

 private:
  std::string units_;
  std::uint64_t total_;
  ProgressBar bar_;
  ProblemList problems_;
};

/// A file in object storage: every chunk (or image) fetched ahead of the checks, in file order.
void plan_every_unit(const formats::Dataset& dataset);

}  // namespace gpufeed::tools::h5pack
