#include "cuda/jpeg_engines.hpp"

#include <algorithm>
#include <cstring>

#include "cuda/nvjpeg_api.hpp"
#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline::detail {

#ifdef GPUFEED_HAVE_NVJPEG

namespace {

std::uint64_t grown(std::uint64_t need) {
  return need + need / 4 + 4096;  // room for the next batch's slightly larger regions
}

/// `memory` of at least `need` bytes (its contents dropped when it grows).
void ensure(DeviceMemory& memory, std::uint64_t& capacity, std::uint64_t need) {
  if (need <= capacity && memory) return;
  memory.reset();
  capacity = grown(need);
  memory = device_alloc(capacity);
}

std::uint64_t tables_bytes(const CropResizeBatch& part) {
  return part.images().size() * sizeof(CropResizeImage) + part.taps().size() * sizeof(std::int32_t);
}

}  // namespace

EngineLane::~EngineLane() {
  if (api == nullptr) return;
  if (pending) GPUFEED_CUDA_CHECK_NOTHROW(cudaEventSynchronize(done.get()));
  for (void* p : params) api->params_destroy(static_cast<nvjpegDecodeParams_t>(p));
  if (state != nullptr) api->state_destroy(static_cast<nvjpegJpegState_t>(state));
}

JpegEngines::JpegEngines(int device, std::uint32_t out_width, std::uint32_t out_height)
    : device_(device), out_width_(out_width), out_height_(out_height) {
  std::string why;
  api_ = nvjpeg_api(&why);
  if (api_ == nullptr) throw OptionError("decode", "{decode}=gpu: " + why);
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  nvjpegHandle_t handle = nullptr;
  const nvjpegStatus_t status =
      api_->create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &handle);
  if (status != NVJPEG_STATUS_SUCCESS) {
    throw OptionError("decode", "{decode}=gpu: CUDA device " + std::to_string(device_) +
                                    " has no JPEG engines nvJPEG can use (its hardware backend: " +
                                    nvjpeg_status_text(status) +
                                    "); use {decode}=cpu, or auto to fall back by itself");
  }
  handle_ = handle;
  library_ = api_->path + " (" + api_->version + ")";
}

JpegEngines::~JpegEngines() {
  if (handle_ != nullptr) api_->destroy(static_cast<nvjpegHandle_t>(handle_));
}

EngineTiming JpegEngines::reclaim(EngineLane& lane) {
  EngineTiming t;
  if (!lane.pending) return t;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  GPUFEED_CUDA_CHECK(cudaEventSynchronize(lane.done.get()));
  float ms = 0;
  GPUFEED_CUDA_CHECK(cudaEventElapsedTime(&ms, lane.start.get(), lane.done.get()));
  t.device_ns = static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  t.images = lane.images;
  lane.pending = false;
  lane.images = 0;
  return t;
}

void JpegEngines::prepare(EngineLane& lane, std::uint32_t images) {
  const auto handle = static_cast<nvjpegHandle_t>(handle_);
  if (lane.api == nullptr) {
    nvjpegJpegState_t state = nullptr;
    const nvjpegStatus_t s = api_->state_create(handle, &state);
    if (s != NVJPEG_STATUS_SUCCESS) {
      throw PipelineError("nvjpegJpegStateCreate failed: " + nvjpeg_status_text(s));
    }
    lane.state = state;
    lane.api = api_;
    lane.stream = make_stream();
    lane.start = make_event();
    lane.done = make_event();
  }
  while (lane.params.size() < images) {
    nvjpegDecodeParams_t p = nullptr;
    const nvjpegStatus_t s = api_->params_create(handle, &p);
    if (s != NVJPEG_STATUS_SUCCESS) {
      throw PipelineError("nvjpegDecodeParamsCreate failed: " + nvjpeg_status_text(s));
    }
    lane.params.push_back(p);
    api_->params_set_output_format(p, NVJPEG_OUTPUT_RGBI);
  }
  if (lane.initialized != static_cast<int>(images)) {
    const nvjpegStatus_t s =
        api_->batched_initialize(handle, static_cast<nvjpegJpegState_t>(lane.state),
                                 static_cast<int>(images), 1, NVJPEG_OUTPUT_RGBI);
    if (s != NVJPEG_STATUS_SUCCESS) {
      throw PipelineError("nvjpegDecodeBatchedInitialize failed: " + nvjpeg_status_text(s));
    }
    lane.initialized = static_cast<int>(images);
  }
}

void JpegEngines::reserve(EngineLane& lane, const CropResizeBatch& part) {
  ensure(lane.regions, lane.regions_capacity, part.roi_bytes());
  ensure(lane.scratch, lane.scratch_capacity, part.tmp_bytes());
  const std::uint64_t tables = tables_bytes(part);
  ensure(lane.tables, lane.tables_capacity, tables);
  if (tables > lane.host_tables_capacity || !lane.host_tables) {
    lane.host_tables.reset();
    lane.host_tables_capacity = grown(tables);
    void* p = nullptr;
    GPUFEED_CUDA_CHECK(cudaHostAlloc(&p, lane.host_tables_capacity, 0));
    lane.host_tables = PinnedMemory(p);
  }
}

bool JpegEngines::decode(EngineLane& lane, const CropResizeBatch& part, std::uint8_t* out_device,
                         std::string& why) {
  const std::uint32_t n = part.size();
  if (n == 0) return true;
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  // A second part of one batch reuses the buffers of the first: wait for it (only batches of
  // images too large for one part have several).
  if (lane.pending) GPUFEED_CUDA_CHECK(cudaStreamSynchronize(lane.stream.get()));
  prepare(lane, n);
  reserve(lane, part);
  lane.data.resize(n);
  lane.lengths.resize(n);
  lane.destinations.assign(n * sizeof(nvjpegImage_t), 0);
  auto* dest = reinterpret_cast<nvjpegImage_t*>(lane.destinations.data());
  auto* regions = static_cast<std::uint8_t*>(lane.regions.get());
  for (std::uint32_t i = 0; i < n; ++i) {
    const CropResizeImage& im = part.images()[i];
    const std::vector<std::uint8_t>& bytes = lane.bytes[im.position];
    lane.data[i] = bytes.data();
    lane.lengths[i] = bytes.size();
    dest[i].channel[0] = regions + im.roi_offset;
    dest[i].pitch[0] = im.roi_pitch;
    const Roi& r = part.regions()[i];
    const auto p = static_cast<nvjpegDecodeParams_t>(lane.params[i]);
    const nvjpegStatus_t s =
        part.whole(i) ? api_->params_set_roi(p, 0, 0, -1, -1)
                      : api_->params_set_roi(p, static_cast<int>(r.x), static_cast<int>(r.y),
                                             static_cast<int>(r.width), static_cast<int>(r.height));
    if (s != NVJPEG_STATUS_SUCCESS) {
      why = "nvjpegDecodeParamsSetROI: " + nvjpeg_status_text(s);
      return false;
    }
  }
  cudaStream_t stream = lane.stream.get();
  if (!lane.pending) GPUFEED_CUDA_CHECK(cudaEventRecord(lane.start.get(), stream));
  const nvjpegStatus_t s = api_->batched_ex(
      static_cast<nvjpegHandle_t>(handle_), static_cast<nvjpegJpegState_t>(lane.state),
      lane.data.data(), lane.lengths.data(), dest,
      reinterpret_cast<nvjpegDecodeParams_t*>(lane.params.data()), stream);
  if (s != NVJPEG_STATUS_SUCCESS) {
    why = "nvjpegDecodeBatchedEx: " + nvjpeg_status_text(s);
    lane.initialized = -1;  // the state may be mid-batch: initialize it again
    lane.pending = true;    // whatever it queued finishes before the buffers are reused
    return false;
  }
  auto* host = static_cast<std::uint8_t*>(lane.host_tables.get());
  const std::size_t table = part.images().size() * sizeof(CropResizeImage);
  std::memcpy(host, part.images().data(), table);
  std::memcpy(host + table, part.taps().data(), part.taps().size() * sizeof(std::int32_t));
  auto* device_tables = static_cast<std::uint8_t*>(lane.tables.get());
  GPUFEED_CUDA_CHECK(
      cudaMemcpyAsync(device_tables, host, tables_bytes(part), cudaMemcpyHostToDevice, stream));
  launch_crop_resize(reinterpret_cast<const CropResizeImage*>(device_tables), n,
                     reinterpret_cast<const std::int32_t*>(device_tables + table), regions,
                     static_cast<std::uint8_t*>(lane.scratch.get()), out_device, out_width_,
                     out_height_, stream);
  lane.pending = true;
  lane.images += n;
  return true;
}

void JpegEngines::record(EngineLane& lane, void* event) {
  GPUFEED_CUDA_CHECK(cudaSetDevice(device_));
  if (!lane.pending) GPUFEED_CUDA_CHECK(cudaEventRecord(lane.start.get(), lane.stream.get()));
  GPUFEED_CUDA_CHECK(cudaEventRecord(lane.done.get(), lane.stream.get()));
  GPUFEED_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), lane.stream.get()));
  lane.pending = true;
}

#else  // built without nvJPEG's header

EngineLane::~EngineLane() = default;

JpegEngines::JpegEngines(int device, std::uint32_t out_width, std::uint32_t out_height)
    : device_(device), out_width_(out_width), out_height_(out_height) {
  throw OptionError("decode",
                    "{decode}=gpu: gpufeed was built without nvJPEG's header "
                    "(nvjpeg.h: the CUDA toolkit's, or PyPI's nvidia-nvjpeg); rebuild "
                    "with it, or use {decode}=cpu");
}
JpegEngines::~JpegEngines() = default;
EngineTiming JpegEngines::reclaim(EngineLane&) {
  return {};
}
bool JpegEngines::decode(EngineLane&, const CropResizeBatch&, std::uint8_t*, std::string& why) {
  why = "built without nvJPEG";
  return false;
}
void JpegEngines::record(EngineLane&, void*) {}

#endif

}  // namespace gpufeed::pipeline::detail
