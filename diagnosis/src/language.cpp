#include "gpufeed/diagnosis/language.hpp"

namespace gpufeed::diagnosis {

namespace {

std::string plain_term(Term term) {
  switch (term) {
    case Term::training_stage:
      return "a training stage that marks its steps as \"step\" ranges";
    case Term::profiling_off:
      return "the recorder off";
    case Term::read_less_often:
      return "";
    case Term::deterministic:
      return "deterministic algorithms in the training stage";
    case Term::autotuner:
      return "cuDNN's benchmark mode";
  }
  return "";
}

}  // namespace

const Language& field_language() {
  static const Language language{field_spelling, [](std::string_view f) { return std::string(f); },
                                 "=", plain_term};
  return language;
}

}  // namespace gpufeed::diagnosis
