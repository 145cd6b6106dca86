#pragma once
#include <nanobind/nanobind.h>

namespace gpufeed::python {

/// gpufeed._native.color_program: the CPU runner of a transform's colour steps (ColorJitter,
/// Normalize) on a delivered batch, each sample with its own drawn parameters.
void bind_transform(nanobind::module_& m);

}  // namespace gpufeed::python
