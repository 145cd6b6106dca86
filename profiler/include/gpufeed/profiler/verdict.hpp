#pragma once
// The input-bound verdict, with thresholds like TensorFlow's input-pipeline analyzer.
#include <array>
#include <optional>
#include <string_view>

namespace gpufeed::profiler {

enum class Verdict { not_input_bound, moderately_input_bound, highly_input_bound };
inline constexpr std::array<const char*, 3> kVerdictTexts{
    "not input-bound", "moderately input-bound", "highly input-bound"};

struct VerdictThresholds {
  double highly = 0.20;  ///< share of step time spent waiting for input
  double moderately = 0.05;
};

/// `input_share`: device-idle time waiting for input / steady-state window.
Verdict input_bound_verdict(double input_share, VerdictThresholds thresholds = {}) noexcept;
/// "highly input-bound", "moderately input-bound", "not input-bound".
const char* verdict_text(Verdict verdict) noexcept;
std::optional<Verdict> parse_verdict(std::string_view text) noexcept;

}  // namespace gpufeed::profiler
