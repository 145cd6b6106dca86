#pragma once
// Fills the practice checks' inputs from a run: its facts and the profiler's diagnosis.
#include "pipebench/practices.hpp"

namespace gpufeed::tools::pipebench {

struct Diagnosis;
struct RunFacts;

PracticeInputs practice_inputs(const RunFacts& facts, const Diagnosis& diagnosis);

}  // namespace gpufeed::tools::pipebench
