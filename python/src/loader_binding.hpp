#pragma once
#include <nanobind/nanobind.h>

namespace gpufeed::python {

/// gpufeed._native.Loader, .Delivery and stats as dicts.
void bind_loader(nanobind::module_& m);

}  // namespace gpufeed::python
