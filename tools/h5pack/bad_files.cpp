#include "h5pack/bad_files.hpp"

#include <cstdio>

namespace gpufeed::tools::h5pack {

namespace {

constexpr const char* kSkipAdvice = "--skip-bad";

std::string with_advice(const std::string& message) {
  if (message.find(kSkipAdvice) != std::string::npos) return message;
  return message + "; replace or remove the file, or pass --skip-bad to skip bad files";
}

}  // namespace

BadFileError::BadFileError(const BadFile& bad) : formats::FormatError(with_advice(bad.message)) {}

void SkipLog::add(const std::string& path, const BadFile& bad) {
  ++counts_[static_cast<std::size_t>(bad.kind)];
  ++total_;
  if (listed_.size() < kListed)
    listed_.push_back("  skipped " + path + " (" + formats::to_string(bad.kind) + ")");
}

void SkipLog::print() const {
  if (total_ == 0) return;
  std::string line = "skipped " + std::to_string(total_) + " bad file" + (total_ == 1 ? "" : "s");
  const char* separator = ": ";
  for (std::size_t k = 0; k < kBadKinds; ++k) {
    if (counts_[k] == 0) continue;
    line +=
        separator + std::to_string(counts_[k]) + " " + formats::to_string(static_cast<BadKind>(k));
    separator = ", ";
  }
  std::printf("%s\n", line.c_str());
  for (const std::string& listed : listed_) std::printf("%s\n", listed.c_str());
  if (total_ > listed_.size()) {
    std::printf("  ... and %llu more\n", static_cast<unsigned long long>(total_ - listed_.size()));
  }
}

}  // namespace gpufeed::tools::h5pack
