#include "pipebench/language.hpp"

#include "common/cli.hpp"

namespace gpufeed::tools::pipebench {

namespace {

std::string flag_term(diagnosis::Term term) {
  switch (term) {
    case diagnosis::Term::training_stage:
      return "--model mlp|cnn|resnet18";
    case diagnosis::Term::profiling_off:
      return "--no-profile";
    case diagnosis::Term::read_less_often:
      return "--sync-every";
    case diagnosis::Term::deterministic:
      return "--deterministic";
    case diagnosis::Term::autotuner:
      return "--cudnn-benchmark";
  }
  return "";
}

}  // namespace

const diagnosis::Language& flag_language() {
  static const diagnosis::Language language{flag_spelling, flag_of, " ", flag_term};
  return language;
}

}  // namespace gpufeed::tools::pipebench
