#pragma once
#include <nanobind/nanobind.h>

namespace gpufeed::python {

/// gpufeed._native.Profile and its report: the recorder, CUPTI and gpufeed::diagnosis
/// around a Python loop.
void bind_profile(nanobind::module_& m);

}  // namespace gpufeed::python
