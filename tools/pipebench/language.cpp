#include "pipebench/language.hpp"

#include "common/cli.hpp"
#include "common/flags.hpp"

namespace gpufeed::tools::pipebench {

const diagnosis::Language& flag_language() {
  static const diagnosis::Language language{
      flag_spelling,
      field_flag,
      " ",
      {"--model mlp|cnn|resnet18", "--no-profile", "--sync-every", "--deterministic",
       "--cudnn-benchmark"}};
  return language;
}

}  // namespace gpufeed::tools::pipebench
