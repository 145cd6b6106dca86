#pragma once
// The Python keywords of gpufeed.Loader and the LoaderOptions they set.
#include <nanobind/nanobind.h>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::python {

/// LoaderOptions from `path` and keyword arguments (the field names; `size` for height and
/// width, `shard` as a pair). A value of the wrong type or out of range raises gpufeed.UsageError
/// naming the keyword; an unknown keyword does too.
LoaderOptions options_from_keywords(const std::string& path, const nanobind::dict& keywords);

/// The Loader's keyword for a LoaderOptions field: the field's own name, but `size` for height
/// and width (one keyword sets both); any other name as it is. Python's messages render their
/// `{field}` placeholders with it.
std::string field_keyword(std::string_view field);

/// The keywords with LoaderOptions' defaults, as Python values (what gpufeed.Loader's signature
/// must match).
nanobind::dict default_keywords();

}  // namespace gpufeed::python
