#include "gpufeed/profiler/verdict.hpp"
#include "gpufeed/base/names.hpp"

namespace gpufeed::profiler {

Verdict input_bound_verdict(double input_share, VerdictThresholds thresholds) noexcept {
  if (input_share >= thresholds.highly) return Verdict::highly_input_bound;
  if (input_share >= thresholds.moderately) return Verdict::moderately_input_bound;
  return Verdict::not_input_bound;
}

const char* verdict_text(Verdict verdict) noexcept {
  return name_of(kVerdictTexts, verdict, "not input-bound");
}

std::optional<Verdict> parse_verdict(std::string_view text) noexcept {
  for (Verdict v :
       {Verdict::highly_input_bound, Verdict::moderately_input_bound, Verdict::not_input_bound}) {
    if (text == verdict_text(v)) return v;
  }
  return std::nullopt;
}

}  // namespace gpufeed::profiler
