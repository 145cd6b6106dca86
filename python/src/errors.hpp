#pragma once
// gpufeed's exceptions as Python sees them: gpufeed.Error and its subclasses FormatError,
// UsageError (also a ValueError) and PipelineError, with the library's one-line messages and
// option names spelled as the Python keywords.
#include <string>
#include <string_view>

#include <nanobind/nanobind.h>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::python {

/// A loader setting as a Loader keyword argument: "workers=8", "order='chunk'", "cache_bytes=1024
/// << 20".
std::string keyword_spelling(const Setting& setting);

/// Raises gpufeed.UsageError from C++ (the binding's own argument checks).
[[noreturn]] void throw_usage(const std::string& message);

/// Creates the exception types in `m` and registers the translator of C++ exceptions.
void bind_errors(nanobind::module_& m);

}  // namespace gpufeed::python
