// gpufeed._native: the C++ pipeline and profiler behind the gpufeed package.
#include <nanobind/nanobind.h>

#include "batch_arrays.hpp"
#include "errors.hpp"
#include "loader_binding.hpp"
#include "pack_binding.hpp"
#include "profile_binding.hpp"
#include "transform_binding.hpp"

NB_MODULE(_native, m) {
  m.doc() = "The C++ side of gpufeed; use the gpufeed package, not this module.";
  gpufeed::python::bind_errors(m);
  gpufeed::python::bind_batch_arrays(m);
  gpufeed::python::bind_loader(m);
  gpufeed::python::bind_profile(m);
  gpufeed::python::bind_pack(m);
  gpufeed::python::bind_transform(m);
}
