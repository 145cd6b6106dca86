#pragma once
// nvJPEG, loaded at run time (dlopen), as CUPTI is: the build needs only its header, a machine
// without it still runs every other path, and the library can come from the CUDA toolkit,
// PyPI's nvidia-nvjpeg or the copy inside torchvision's wheel.
#include <string>
#include <vector>

#if __has_include(<nvjpeg.h>)
#include <nvjpeg.h>
#define GPUFEED_HAVE_NVJPEG 1
#endif

namespace gpufeed::pipeline::detail {

#ifdef GPUFEED_HAVE_NVJPEG
/// The entry points the loader uses, resolved from one libnvjpeg of the header's major version.
struct NvjpegApi {
  std::string path;
  std::string version;
  decltype(&nvjpegGetProperty) get_property = nullptr;
  decltype(&nvjpegCreateEx) create_ex = nullptr;
  decltype(&nvjpegDestroy) destroy = nullptr;
  decltype(&nvjpegJpegStateCreate) state_create = nullptr;
  decltype(&nvjpegJpegStateDestroy) state_destroy = nullptr;
  decltype(&nvjpegDecodeBatchedInitialize) batched_initialize = nullptr;
  decltype(&nvjpegDecodeBatchedEx) batched_ex = nullptr;
  decltype(&nvjpegDecodeParamsCreate) params_create = nullptr;
  decltype(&nvjpegDecodeParamsDestroy) params_destroy = nullptr;
  decltype(&nvjpegDecodeParamsSetOutputFormat) params_set_output_format = nullptr;
  decltype(&nvjpegDecodeParamsSetROI) params_set_roi = nullptr;
  decltype(&nvjpegJpegStreamCreate) stream_create = nullptr;
  decltype(&nvjpegJpegStreamDestroy) stream_destroy = nullptr;
  decltype(&nvjpegJpegStreamParseHeader) stream_parse_header = nullptr;
  decltype(&nvjpegDecodeBatchedSupportedEx) batched_supported_ex = nullptr;
};

/// The loaded library, or null with `why` set (one line). Loads once per process.
const NvjpegApi* nvjpeg_api(std::string* why = nullptr);

/// "NVJPEG_STATUS_JPEG_NOT_SUPPORTED (9)": a status for messages.
std::string nvjpeg_status_text(nvjpegStatus_t status);
#endif

/// The files nvjpeg_api() tries, in order (tested without a GPU).
std::vector<std::string> nvjpeg_candidates();

}  // namespace gpufeed::pipeline::detail
