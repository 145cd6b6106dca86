#pragma once
// Libraries of the CUDA toolkit loaded at run time (dlopen) rather than linked: CUPTI for the
// profiler, nvJPEG for the GPU decode path. Where to look, and resolving their entry points.
#include <initializer_list>
#include <string>
#include <vector>

namespace gpufeed {

/// Where a CUDA library may be, in order: the file named by the environment variable `env_var`
/// (when set), the files in `given` (what front ends found: PyPI wheels), the bare `soname`
/// (the library search path: LD_LIBRARY_PATH, RUNPATH, ldconfig's cache), then `soname` in each
/// of `subdirs` of $CUDA_HOME, $CUDA_PATH and /usr/local/cuda. Duplicates are dropped.
std::vector<std::string> cuda_library_candidates(const char* env_var,
                                                 const std::vector<std::string>& given,
                                                 const std::string& soname,
                                                 std::initializer_list<const char*> subdirs);

/// The files in `directory` whose names start with `prefix` and contain `contains` (wheels rename
/// a library: libnvjpeg-1a2b3c4d.so.13), sorted; none when it cannot be read.
std::vector<std::string> library_files_in(const std::string& directory, const std::string& prefix,
                                          const std::string& contains);

/// One entry point of a loaded library and the function pointer it goes into.
struct LibrarySymbol {
  const char* name;
  void** address;
};
template <class F>
LibrarySymbol library_symbol(const char* name, F& function_pointer) {
  return {name, reinterpret_cast<void**>(&function_pointer)};
}

/// Resolves each symbol in `library` (a dlopen handle); the name of the first one missing, or
/// empty when all are there.
std::string resolve_symbols(void* library, std::initializer_list<LibrarySymbol> symbols);

}  // namespace gpufeed
