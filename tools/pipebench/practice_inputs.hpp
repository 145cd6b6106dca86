#pragma once
// Fills the practice checks' inputs from a run: its report and the profiler's diagnosis.
#include "pipebench/practices.hpp"

namespace gpufeed::tools::pipebench {

struct BenchReport;
struct Diagnosis;

PracticeInputs practice_inputs(const BenchReport& report, const Diagnosis& diagnosis);

}  // namespace gpufeed::tools::pipebench
