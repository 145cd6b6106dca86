#pragma once
// Fills the practice checks' inputs from a run: its facts and the profiler's diagnosis.
#include "gpufeed/diagnosis/practices.hpp"

namespace gpufeed::diagnosis {

struct Diagnosis;
struct RunFacts;

PracticeInputs practice_inputs(const RunFacts& facts, const Diagnosis& diagnosis);

}  // namespace gpufeed::diagnosis
