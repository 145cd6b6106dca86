#pragma once
// CUPTI's entry points, loaded at run time (dlopen) the first time a collector starts: nothing
// in gpufeed needs libcupti to load, so a machine with only a driver, or none, imports and runs
// it, and a profile without CUPTI carries on with the host-side timeline.
#include <cupti.h>

#include <optional>
#include <string>
#include <vector>

namespace gpufeed::profiler::detail {

struct CuptiApi {
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activity_register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) activity_get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activity_get_num_dropped_records = nullptr;
  decltype(&cuptiSetThreadIdType) set_thread_id_type = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiGetCallbackName) get_callback_name = nullptr;
  std::string path;  ///< the library that was loaded
};

/// The places CUPTI is looked for, in order: $GPUFEED_CUPTI (a file), the directories added
/// with add_cupti_directory() (the Python package adds PyTorch's nvidia wheels'), the loader's
/// own search (LD_LIBRARY_PATH, ldconfig), then $CUDA_HOME / $CUDA_PATH and /usr/local/cuda
/// (extras/CUPTI/lib64, lib64, targets/x86_64-linux/lib).
std::vector<std::string> cupti_candidates();

/// Adds a directory to look for libcupti.so.<CUDA major> in, before the system's search.
void add_cupti_directory(const std::string& directory);

/// The first of `candidates` that loads and has every entry point; nullopt with `why` (one line
/// naming what was tried and what to install) when none does.
std::optional<CuptiApi> load_cupti(const std::vector<std::string>& candidates, std::string& why);

/// The API, loaded once from cupti_candidates(); nullptr when no candidate loads or lacks an entry
/// point, with `why` (one line naming what was tried and what to install) set.
const CuptiApi* cupti_api(std::string* why);

}  // namespace gpufeed::profiler::detail
