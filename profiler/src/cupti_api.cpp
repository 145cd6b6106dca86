#include "cupti_api.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>

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

template <class F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(library, name));
  return out != nullptr;
}

/// The entry points of `library`; the first missing one's name, or empty.
std::string resolve_all(void* library, CuptiApi& api) {
  struct Entry {
    const char* name;
    bool ok;
  };
  const Entry entries[] = {
      {"cuptiActivityEnable", resolve(library, "cuptiActivityEnable", api.activity_enable)},
      {"cuptiActivityDisable", resolve(library, "cuptiActivityDisable", api.activity_disable)},
      {"cuptiActivityFlushAll", resolve(library, "cuptiActivityFlushAll", api.activity_flush_all)},
      {"cuptiActivityRegisterCallbacks",
       resolve(library, "cuptiActivityRegisterCallbacks", api.activity_register_callbacks)},
      {"cuptiActivityGetNextRecord",
       resolve(library, "cuptiActivityGetNextRecord", api.activity_get_next_record)},
      {"cuptiActivityGetNumDroppedRecords",
       resolve(library, "cuptiActivityGetNumDroppedRecords", api.activity_get_num_dropped_records)},
      {"cuptiSetThreadIdType", resolve(library, "cuptiSetThreadIdType", api.set_thread_id_type)},
      {"cuptiGetTimestamp", resolve(library, "cuptiGetTimestamp", api.get_timestamp)},
      {"cuptiGetResultString", resolve(library, "cuptiGetResultString", api.get_result_string)},
      {"cuptiGetCallbackName", resolve(library, "cuptiGetCallbackName", api.get_callback_name)},
  };
  for (const Entry& e : entries) {
    if (!e.ok) return e.name;
  }
  return {};
}

}  // namespace

void add_cupti_directory(const std::string& directory) {
  Loaded& l = loaded();
  const std::lock_guard lock(l.mutex);
  l.directories.push_back(directory);
}

std::vector<std::string> cupti_candidates() {
  const std::string name = library_name();
  std::vector<std::string> out;
  if (const char* file = std::getenv("GPUFEED_CUPTI"); file != nullptr && *file != '\0') {
    out.emplace_back(file);
  }
  {
    Loaded& l = loaded();
    const std::lock_guard lock(l.mutex);
    for (const std::string& d : l.directories) out.push_back(d + "/" + name);
  }
  out.push_back(name);  // LD_LIBRARY_PATH, the RUNPATH, ldconfig's cache
  std::vector<std::string> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(variable); root != nullptr && *root != '\0') {
      roots.emplace_back(root);
    }
  }
  roots.emplace_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    for (const char* sub : {"/extras/CUPTI/lib64/", "/lib64/", "/targets/x86_64-linux/lib/"}) {
      out.push_back(root + sub + name);
    }
  }
  return out;
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
