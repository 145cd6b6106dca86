#include "h5pack/problem_list.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "common/cli.hpp"
#include "h5pack/commands.hpp"

namespace gpufeed::tools::h5pack {

void ProblemList::add(const std::string& line) {
  if (count_++ < kProblemsShown) std::printf("%s\n", line.c_str());
}

void ProblemList::close(const char* kind) const {
  if (count_ > kProblemsShown) {
    std::printf("... and %llu more %s\n", static_cast<unsigned long long>(count_ - kProblemsShown),
                kind);
  }
}

namespace {

/// Lists the bad labels; returns how many there are.
std::uint64_t check_label_range(const std::vector<std::int64_t>& labels, std::uint64_t classes) {
  if (std::all_of(labels.begin(), labels.end(), [](auto l) { return l == -1; })) return 0;
  const auto limit = static_cast<std::int64_t>(classes);
  ProblemList problems;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::int64_t l = labels[i];
    if (l < 0) {
      problems.add("bad label of sample " + std::to_string(i) + ": " + std::to_string(l) +
                   " is negative");
    } else if (limit > 0 && l >= limit) {
      problems.add("bad label of sample " + std::to_string(i) + ": " + std::to_string(l) +
                   " is not below the " + std::to_string(limit) + " class names");
    }
  }
  problems.close("bad labels");
  return problems.count();
}

}  // namespace

VerifyPass::VerifyPass(const char* units, std::uint64_t total, std::uint64_t bytes_per_unit)
    : units_(units), total_(total), bar_("verifying", total, bytes_per_unit) {}

void VerifyPass::checked(std::uint64_t i, const std::optional<std::string>& problem) {
  if (problem) {
    bar_.finish();
    problems_.add(*problem);
  }
  bar_.update(i + 1);
}

int VerifyPass::verdict(const std::string& file, const std::vector<std::int64_t>& labels,
                        std::uint64_t classes, const std::string& ok) {
  bar_.finish();
  problems_.close(("bad " + units_).c_str());
  const std::uint64_t bad = problems_.count();
  const std::uint64_t bad_labels = check_label_range(labels, classes);
  if (bad + bad_labels == 0) {
    std::printf("%s\n", ok.c_str());
    return kExitOk;
  }
  print_error(kProgram, file + ": " + std::to_string(bad) + " of " + std::to_string(total_) + " " +
                            units_ + " and " + std::to_string(bad_labels) +
                            " labels failed verification; re-create the file with h5pack convert");
  return kExitFailure;
}

void plan_every_unit(const formats::Dataset& dataset) {
  if (!dataset.remote()) return;
  std::vector<std::uint64_t> units(dataset.num_chunks());
  std::iota(units.begin(), units.end(), std::uint64_t{0});
  dataset.plan_reads(units, storage::ReadAhead{});
}

}  // namespace gpufeed::tools::h5pack
