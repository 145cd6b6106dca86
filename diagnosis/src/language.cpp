#include "gpufeed/diagnosis/language.hpp"

namespace gpufeed::diagnosis {

const Language& field_language() {
  static const Language language{
      field_spelling,
      [](std::string_view f) { return std::string(f); },
      "=",
      {"a training stage that marks its steps as \"step\" ranges", "the recorder off", "",
       "deterministic algorithms", "cuDNN's benchmark mode"}};
  return language;
}

}  // namespace gpufeed::diagnosis
