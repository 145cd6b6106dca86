#include "collect/cupti_api.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>

#include "gpufeed/base/runtime_library.hpp"

namespace gpufeed::profiler::detail {

namespace {

/// libcupti.so.13 for CUDA 13: CUPTI's soname follows the toolkit's major version.
std::string library_name() {
  return "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
}

struct Loaded {
  std::mutex mutex;
  std::vector<std::string> directories;
  bool tried = false;
  CuptiApi api;
  bool ok = false;
  std::string why;
};

Loaded& loaded() {
  static Loaded* const l = new Loaded();  // never destroyed: CUPTI may call back at exit
  return *l;
}

/// The entry points of `library`; the first missing one's name, or empty.
std::string resolve_all(void* library, CuptiApi& a) {
  return resolve_symbols(
      library,
      {library_symbol("cuptiActivityEnable", a.activity_enable),
       library_symbol("cuptiActivityDisable", a.activity_disable),
       library_symbol("cuptiActivityFlushAll", a.activity_flush_all),
       library_symbol("cuptiActivityRegisterCallbacks", a.activity_register_callbacks),
       library_symbol("cuptiActivityGetNextRecord", a.activity_get_next_record),
       library_symbol("cuptiActivityGetNumDroppedRecords", a.activity_get_num_dropped_records),
       library_symbol("cuptiSetThreadIdType", a.set_thread_id_type),
       library_symbol("cuptiGetTimestamp", a.get_timestamp),
       library_symbol("cuptiGetResultString", a.get_result_string),
       library_symbol("cuptiGetCallbackName", a.get_callback_name)});
}

}  // namespace

void add_cupti_directory(const std::string& directory) {
  Loaded& l = loaded();
  const std::lock_guard lock(l.mutex);
  l.directories.push_back(directory);
}

std::vector<std::string> cupti_candidates() {
  const std::string name = library_name();
  std::vector<std::string> given;
  {
    Loaded& l = loaded();
    const std::lock_guard lock(l.mutex);
    for (const std::string& d : l.directories) given.push_back(d + "/" + name);
  }
  return cuda_library_candidates("GPUFEED_CUPTI", given, name,
                                 {"/extras/CUPTI/lib64/", "/lib64/", "/targets/x86_64-linux/lib/"});
}

std::optional<CuptiApi> load_cupti(const std::vector<std::string>& candidates, std::string& why) {
  std::string reason;
  for (const std::string& candidate : candidates) {
    void* library = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    CuptiApi api;
    if (std::string missing = resolve_all(library, api); !missing.empty()) {
      if (reason.empty()) {
        reason = candidate + " is not a CUPTI of CUDA " + std::to_string(CUDART_VERSION / 1000) +
                 " (it lacks " + missing + ")";
      }
      ::dlclose(library);
      continue;
    }
    api.path = candidate;  // kept loaded for the process: CUPTI calls back until exit
    return api;
  }
  why = !reason.empty() ? reason
                        : library_name() + " not found in " + std::to_string(candidates.size()) +
                              " places; set GPUFEED_CUPTI to its path, or install the CUDA "
                              "toolkit's CUPTI or PyTorch's nvidia-cuda-cupti wheel";
  return std::nullopt;
}

const CuptiApi* cupti_api(std::string* why) {
  Loaded& l = loaded();
  {
    const std::lock_guard lock(l.mutex);
    if (l.tried) {
      if (!l.ok && why != nullptr) *why = l.why;
      return l.ok ? &l.api : nullptr;
    }
  }
  const std::vector<std::string> candidates = cupti_candidates();
  std::string reason;
  std::optional<CuptiApi> api = load_cupti(candidates, reason);
  const std::lock_guard lock(l.mutex);
  if (!l.tried) {
    l.tried = true;
    l.ok = api.has_value();
    if (api) l.api = std::move(*api);
    l.why = reason;
  }
  if (!l.ok && why != nullptr) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

}  // namespace gpufeed::profiler::detail
