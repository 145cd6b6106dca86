#pragma once
// The diagnosis in pipebench's words.
#include "gpufeed/diagnosis/language.hpp"

namespace gpufeed::tools::pipebench {

/// Settings and fields as flags (--workers 8, --seed 0), and the flags that do what the
/// diagnosis advises (--model, --deterministic, --sync-every, ...).
const diagnosis::Language& flag_language();

}  // namespace gpufeed::tools::pipebench
