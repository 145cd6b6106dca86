#include "errors.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "options.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

PyObject* error_type = nullptr;
PyObject* format_error_type = nullptr;
PyObject* usage_error_type = nullptr;
PyObject* pipeline_error_type = nullptr;

PyObject* new_type(nb::module_& m, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("gpufeed.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const OptionError& e) {
    PyErr_SetString(usage_error_type, e.render(field_keyword).c_str());
  } catch (const UsageError& e) {
    PyErr_SetString(usage_error_type, e.what());
  } catch (const FormatError& e) {  // formats::IoError and profiler::TraceError too
    PyErr_SetString(format_error_type, e.what());
  } catch (const PipelineError& e) {
    PyErr_SetString(pipeline_error_type, e.what());
  } catch (const Error& e) {  // CUDA failures, report files, ...
    PyErr_SetString(error_type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError,
                    "out of memory; use a smaller batch_size, prefetch or cache_bytes");
  }
}

}  // namespace

std::string keyword_spelling(const Setting& setting) {
  const std::string key = field_keyword(knob_name(setting.knob));
  if (setting.knob == Knob::order) return key + "='" + setting.value_text() + "'";
  // Bytes read best in MiB: cache_bytes=1024 << 20.
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  if (setting.knob == Knob::cache_bytes && setting.value >= kMiB && setting.value % kMiB == 0) {
    return key + "=" + std::to_string(setting.value >> 20) + " << 20";
  }
  return key + "=" + setting.value_text();
}

void throw_usage(const std::string& message) {
  throw UsageError(message);
}

void bind_errors(nb::module_& m) {
  error_type = new_type(m, "Error",
                        "Base of every gpufeed error. The message is one line: what went wrong, "
                        "where (file, dataset, sample) and what to do.",
                        PyExc_Exception);
  format_error_type = new_type(
      m, "FormatError", "A file cannot be read as asked: missing, damaged, or of the wrong shape.",
      error_type);
  PyObject* usage_bases = PyTuple_Pack(2, error_type, PyExc_ValueError);
  usage_error_type = new_type(m, "UsageError",
                              "A keyword value out of range, or settings that cannot work "
                              "together. The message names the keyword.",
                              usage_bases);
  Py_DECREF(usage_bases);
  pipeline_error_type =
      new_type(m, "PipelineError",
               "A failure while the loader ran (a damaged chunk, an I/O error), raised at the "
               "consumer's next batch with the stage, file and sample.",
               error_type);
  nb::register_exception_translator(translate);
}

}  // namespace gpufeed::python
