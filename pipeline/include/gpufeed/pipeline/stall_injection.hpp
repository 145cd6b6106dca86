#pragma once
// A stall injected into one stage of the loaders built while it is in force: a testing and
// benchmarking aid (the profiler's attribution checked against a known cause; "what if reads
// were slow"), not a setting of LoaderOptions. docs/development.md describes its use.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpufeed/base/stages.hpp"

namespace gpufeed::pipeline {

/// STAGE:MS@EVERY: the stage sleeps MS milliseconds on every EVERY-th batch.
struct StallInjection {
  Stage stage = Stage::read;
  std::uint32_t ms = 0;
  std::uint32_t every = 1;
  /// Parses "read:50@10" (EVERY defaults to 1); throws UsageError naming `setting`, the flag or
  /// variable the text came from ("--inject-stall=sleep: expected ..."), otherwise.
  static StallInjection parse(const std::string& text, std::string_view setting);
  /// "read:50@10", as parse() takes it.
  [[nodiscard]] std::string str() const;
  [[nodiscard]] bool hits(std::uint64_t batch_index) const {
    return ms > 0 && batch_index % every == 0;
  }
};

}  // namespace gpufeed::pipeline

// Testing aids live in gpufeed::testing, beside the tests' own (tests/common).
namespace gpufeed::testing {

using pipeline::StallInjection;

/// The environment variable a Loader reads when it is built: STAGE:MS@EVERY.
inline constexpr const char* kStallVariable = "GPUFEED_INJECT_STALL";

/// The stall a Loader built now injects: the innermost StallOverride's while one lives, else
/// GPUFEED_INJECT_STALL's (read at each call), else none. Throws UsageError for a malformed
/// GPUFEED_INJECT_STALL.
[[nodiscard]] std::optional<StallInjection> injected_stall();

/// Loaders built while it lives inject `stall` (nullopt: none, whatever GPUFEED_INJECT_STALL
/// says); the previous override is back when it ends. Process-wide and stack-only: set it on
/// one thread before building the loaders; a loader keeps the stall it was built with.
class StallOverride {
 public:
  explicit StallOverride(std::optional<StallInjection> stall);
  ~StallOverride();
  StallOverride(const StallOverride&) = delete;
  StallOverride& operator=(const StallOverride&) = delete;

 private:
  std::optional<std::optional<StallInjection>> previous_;
};

}  // namespace gpufeed::testing
