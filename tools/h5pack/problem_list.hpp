#pragma once
// What h5pack verify found wrong, printed as it is found: the first kProblemsShown of a kind
// on stdout, then "... and N more"; and the verdict at its end.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.hpp"

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

/// One pass of h5pack verify over `total` units (chunks or samples): a "verifying" progress bar,
/// and the units found bad in a ProblemList, the bar erased before each is printed. Units are
/// reported from one thread at a time.
class VerifyPass {
 public:
  VerifyPass(std::uint64_t total, std::uint64_t bytes_per_unit);

  /// Unit `i` is checked; `problem` is the line that says what is wrong with it, if anything.
  void checked(std::uint64_t i, const std::optional<std::string>& problem);
  /// Erases the bar, prints "... and N more <kind>" and returns how many units were bad.
  std::uint64_t finish(const char* kind);

 private:
  ProgressBar bar_;
  ProblemList problems_;
};

/// The end of a verify: lists the labels below 0, or not below `classes` when the file names
/// its classes (classes > 0; a file without labels, every label -1, has none bad); then, when a
/// unit or a label was bad, one line on stderr, "FILE: B of N UNITs and L labels failed
/// verification; re-create ...", and true. False, with no line, when nothing was bad.
bool verification_failed(const std::string& file, std::uint64_t bad, std::uint64_t total,
                         const char* units, const std::vector<std::int64_t>& labels,
                         std::uint64_t classes);

}  // namespace gpufeed::tools::h5pack
