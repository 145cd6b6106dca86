#pragma once
// What h5pack verify found wrong, printed as it is found: the first kProblemsShown of a kind
// on stdout, then "... and N more".
#include <cstdint>
#include <string>
#include <vector>

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

/// Lists labels below 0, or not below `classes` when the file names its classes (classes > 0).
/// A file without labels (every label -1) has no bad labels. Returns how many are bad.
std::uint64_t check_label_range(const std::vector<std::int64_t>& labels, std::uint64_t classes);

/// The end of a failed verify: one line on stderr, "FILE: B of N UNITs and L labels failed
/// verification; re-create ...". Returns false (printing nothing) when nothing was bad.
bool report_failed_verification(const std::string& file, std::uint64_t bad, std::uint64_t total,
                                const char* units, std::uint64_t bad_labels);

}  // namespace gpufeed::tools::h5pack
