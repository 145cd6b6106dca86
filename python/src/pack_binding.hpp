#pragma once
#include <nanobind/nanobind.h>

namespace gpufeed::python {

/// gpufeed._native.PackWriter: the raw-layout writer behind gpufeed.pack().
void bind_pack(nanobind::module_& m);

}  // namespace gpufeed::python
