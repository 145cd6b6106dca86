#include "cuda/nvjpeg_api.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <mutex>

#include "gpufeed/base/runtime_library.hpp"
#include "gpufeed/pipeline/decode.hpp"

namespace gpufeed::pipeline {

namespace detail {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::string> added;  // files or directories, in the order given
};

Registry& registry() {
  static Registry* const r = new Registry();  // never destroyed: loaders may outlive statics
  return *r;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

#ifdef GPUFEED_HAVE_NVJPEG
const std::string kMajor = std::to_string(NVJPEG_VER_MAJOR);
#else
const std::string kMajor = "13";
#endif

}  // namespace

std::vector<std::string> nvjpeg_candidates() {
  std::vector<std::string> given;
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    for (const std::string& path : r.added) {
      if (!is_directory(path)) {
        given.push_back(path);
        continue;
      }
      for (std::string& file : library_files_in(path, "libnvjpeg", ".so." + kMajor)) {
        given.push_back(std::move(file));
      }
    }
  }
  return cuda_library_candidates("GPUFEED_NVJPEG", given, "libnvjpeg.so." + kMajor,
                                 {"/lib64/", "/targets/x86_64-linux/lib/"});
}

#ifdef GPUFEED_HAVE_NVJPEG
namespace {

/// The entry points of `library`; the first missing one's name, or empty.
std::string resolve_all(void* library, NvjpegApi& a) {
  return resolve_symbols(
      library,
      {library_symbol("nvjpegGetProperty", a.get_property),
       library_symbol("nvjpegCreateEx", a.create_ex), library_symbol("nvjpegDestroy", a.destroy),
       library_symbol("nvjpegJpegStateCreate", a.state_create),
       library_symbol("nvjpegJpegStateDestroy", a.state_destroy),
       library_symbol("nvjpegDecodeBatchedInitialize", a.batched_initialize),
       library_symbol("nvjpegDecodeBatchedEx", a.batched_ex),
       library_symbol("nvjpegDecodeParamsCreate", a.params_create),
       library_symbol("nvjpegDecodeParamsDestroy", a.params_destroy),
       library_symbol("nvjpegDecodeParamsSetOutputFormat", a.params_set_output_format),
       library_symbol("nvjpegDecodeParamsSetROI", a.params_set_roi),
       library_symbol("nvjpegJpegStreamCreate", a.stream_create),
       library_symbol("nvjpegJpegStreamDestroy", a.stream_destroy),
       library_symbol("nvjpegJpegStreamParseHeader", a.stream_parse_header),
       library_symbol("nvjpegDecodeBatchedSupportedEx", a.batched_supported_ex)});
}

std::string version_of(const NvjpegApi& a) {
  int major = 0, minor = 0, patch = 0;
  a.get_property(MAJOR_VERSION, &major);
  a.get_property(MINOR_VERSION, &minor);
  a.get_property(PATCH_LEVEL, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

struct Loaded {
  std::once_flag once;
  NvjpegApi api;
  bool ok = false;
  std::string why;
};

Loaded& loaded() {
  static Loaded* const l = new Loaded();  // the library stays loaded for the process
  return *l;
}

void load(Loaded& l) {
  const std::vector<std::string> candidates = nvjpeg_candidates();
  for (const std::string& candidate : candidates) {
    void* library = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    NvjpegApi api;
    const std::string missing = resolve_all(library, api);
    const std::string version = missing.empty() ? version_of(api) : "";
    if (!missing.empty() || version.rfind(kMajor + ".", 0) != 0) {
      if (l.why.empty()) {
        l.why = candidate + " is not an nvJPEG " + kMajor + " (" +
                (missing.empty() ? "version " + version : "it lacks " + missing) + ")";
      }
      ::dlclose(library);
      continue;
    }
    api.path = candidate;
    api.version = version;
    l.api = std::move(api);
    l.ok = true;
    return;
  }
  if (l.why.empty()) {
    l.why = "libnvjpeg.so." + kMajor + " not found in " + std::to_string(candidates.size()) +
            " places; install PyPI's nvidia-nvjpeg (pip install nvidia-nvjpeg) or the CUDA "
            "toolkit, or set GPUFEED_NVJPEG to the library's path";
  }
}

}  // namespace

const NvjpegApi* nvjpeg_api(std::string* why) {
  Loaded& l = loaded();
  std::call_once(l.once, [&l] { load(l); });
  if (!l.ok && why != nullptr) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

std::string nvjpeg_status_text(nvjpegStatus_t status) {
  static constexpr const char* kNames[] = {"NVJPEG_STATUS_SUCCESS",
                                           "NVJPEG_STATUS_NOT_INITIALIZED",
                                           "NVJPEG_STATUS_INVALID_PARAMETER",
                                           "NVJPEG_STATUS_BAD_JPEG",
                                           "NVJPEG_STATUS_JPEG_NOT_SUPPORTED",
                                           "NVJPEG_STATUS_ALLOCATOR_FAILURE",
                                           "NVJPEG_STATUS_EXECUTION_FAILED",
                                           "NVJPEG_STATUS_ARCH_MISMATCH",
                                           "NVJPEG_STATUS_INTERNAL_ERROR",
                                           "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED",
                                           "NVJPEG_STATUS_INCOMPLETE_BITSTREAM"};
  const auto i = static_cast<int>(status);
  const std::string name =
      i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i] : "NVJPEG_STATUS_UNKNOWN";
  return name + " (" + std::to_string(i) + ")";
}
#endif

}  // namespace detail

void add_nvjpeg_library(const std::string& file_or_directory) {
  detail::Registry& r = detail::registry();
  const std::lock_guard lock(r.mutex);
  r.added.push_back(file_or_directory);
}

NvjpegLibrary nvjpeg_library() {
  NvjpegLibrary out;
#ifdef GPUFEED_HAVE_NVJPEG
  const detail::NvjpegApi* api = detail::nvjpeg_api(&out.why);
  if (api != nullptr) {
    out.loaded = true;
    out.path = api->path;
    out.version = api->version;
  }
#else
  out.why =
      "gpufeed was built without nvJPEG's header (nvjpeg.h: the CUDA toolkit's, or PyPI's "
      "nvidia-nvjpeg); rebuild with it to decode on the GPU";
#endif
  return out;
}

}  // namespace gpufeed::pipeline
