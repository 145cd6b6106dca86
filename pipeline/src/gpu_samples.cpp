#include "gpu_samples.hpp"

#include <algorithm>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"

namespace gpufeed::pipeline::detail {

namespace {

/// Device memory the engines' regions and the kernel's scratch may take for one part of a
/// batch: 256 images of 1024x768 fit; larger images are decoded in several parts.
constexpr std::uint64_t kPartBudget = std::uint64_t{640} << 20;

}  // namespace

GpuSamples::GpuSamples(Decode mode, int device, const formats::JpegShards& reader,
                       const ImageSamples& cpu)
    : mode_(mode), reader_(reader), cpu_(cpu), engines_(device, cpu.width(), cpu.height()) {}

EngineBatch GpuSamples::begin(std::uint32_t count) {
  EngineBatch b{lanes_.lease(), {}, {}, {}};
  const EngineTiming t = engines_.reclaim(*b.lane);
  if (t.images > 0) {
    engine_device_ns_.fetch_add(t.device_ns, std::memory_order_relaxed);
    // The lanes made are the batches that decode at once: their times overlap on the engines.
    split_.record_engines(t.images, t.device_ns, static_cast<unsigned>(lanes_.made()));
  }
  b.lane->bytes.resize(std::max<std::size_t>(b.lane->bytes.size(), count));
  b.routes.assign(count, Route::not_decodable);
  b.verdicts.assign(count, formats::HardwareJpeg::decodable);
  b.plans.resize(std::max<std::size_t>(b.plans.size(), count));
  return b;
}

bool GpuSamples::plan(EngineBatch& b, std::uint32_t position, std::uint64_t sample,
                      std::uint64_t epoch, std::uint32_t cpu_from, std::int64_t& read_ns) const {
  std::vector<std::uint8_t>& bytes = b.lane->bytes[position];
  const std::int64_t t0 = profiler::now_ns();
  {
    GPUFEED_RANGE(stage_name(Stage::read));
    reader_.sample_bytes(sample, bytes);
  }
  read_ns = profiler::now_ns() - t0;
  const formats::JpegFrame frame = formats::read_jpeg_frame(bytes);
  formats::HardwareJpeg verdict = formats::hardware_decodable(frame);
  // Images past the pixel limit, and crops that show only padding, are the CPU path's to
  // refuse or fill.
  if (verdict == formats::HardwareJpeg::decodable &&
      std::uint64_t{frame.width} * frame.height > formats::schema::kMaxImagePixels) {
    verdict = formats::HardwareJpeg::not_jpeg;
  }
  b.verdicts[position] = verdict;
  Route& route = b.routes[position];
  if (verdict != formats::HardwareJpeg::decodable) return false;
  route = Route::split;
  if (position >= cpu_from) return false;
  route = Route::cpu_path;
  Placement p;
  try {
    p = cpu_.placement(sample, epoch, frame.width, frame.height);
  } catch (const FormatError&) {
    return false;  // the CPU path raises it, as it would without the engines
  }
  if (p.inner_width == 0 || p.inner_height == 0) return false;
  plan_image(p, frame.width, frame.height, cpu_.filter(), b.plans[position]);
  route = Route::engines;
  return true;
}

void GpuSamples::submit(EngineBatch& b, std::uint8_t* device_pixels, void* decoded,
                        std::vector<std::uint32_t>& to_cpu, std::string& why) {
  GPUFEED_RANGE("decode engines");
  CropResizeBatch part;
  std::vector<std::uint32_t> in_part;
  const auto flush = [&] {
    if (part.empty()) return;
    if (engines_.decode(*b.lane, part, device_pixels, why)) {
      engine_images_.fetch_add(part.size(), std::memory_order_relaxed);
    } else {
      failed_parts_.fetch_add(1, std::memory_order_relaxed);
      for (const std::uint32_t pos : in_part) {
        b.routes[pos] = Route::engine_error;
        to_cpu.push_back(pos);
      }
    }
    part.clear();
    in_part.clear();
  };
  for (std::uint32_t pos = 0; pos < b.routes.size(); ++pos) {
    if (b.routes[pos] != Route::engines) continue;
    if (!part.add(b.plans[pos], pos, kPartBudget)) {
      flush();
      part.add(b.plans[pos], pos, kPartBudget);
    }
    in_part.push_back(pos);
  }
  flush();
  engines_.record(*b.lane, decoded);
  for (std::uint32_t pos = 0; pos < b.routes.size(); ++pos) {
    const Route route = b.routes[pos];
    if (route == Route::engines) continue;
    cpu_images_.fetch_add(1, std::memory_order_relaxed);
    if (route == Route::not_decodable) {
      cpu_by_verdict_[static_cast<std::size_t>(b.verdicts[pos])].fetch_add(1);
    } else {
      cpu_by_route_[static_cast<std::size_t>(route)].fetch_add(1);
    }
  }
}

std::uint32_t GpuSamples::cpu_positions(std::uint32_t count, unsigned workers) const {
  if (mode_ != Decode::automatic) return 0;
  return split_.cpu_share(count, workers);
}

void GpuSamples::record_cpu(std::uint32_t images, std::int64_t busy_ns) {
  split_.record_cpu(images, busy_ns);
}

void GpuSamples::record_consumer(std::uint32_t images, std::int64_t interval_ns,
                                 std::int64_t wait_ns) {
  split_.record_consumer(images, interval_ns, wait_ns);
}

DecodeStats GpuSamples::stats() const {
  DecodeStats s;
  s.mode = mode_ == Decode::automatic ? "auto" : "gpu";
  s.engines = engines_.library();
  s.engine_images = engine_images_.load();
  s.cpu_images = cpu_images_.load();
  s.failed_parts = failed_parts_.load();
  s.engine_device_ns = engine_device_ns_.load();
  for (std::size_t i = 0; i < formats::kHardwareJpegReasons; ++i) {
    if (const std::uint64_t n = cpu_by_verdict_[i].load(); n > 0) {
      s.cpu_reasons.emplace_back(std::string(to_string(static_cast<formats::HardwareJpeg>(i))), n);
    }
  }
  constexpr const char* kRouteNames[] = {"", "", "auto split", "engine error", "crop of padding"};
  for (std::size_t i = 2; i < cpu_by_route_.size(); ++i) {
    if (const std::uint64_t n = cpu_by_route_[i].load(); n > 0) {
      s.cpu_reasons.emplace_back(kRouteNames[i], n);
    }
  }
  return s;
}

void GpuSamples::reset_stats() {
  engine_images_ = 0;
  cpu_images_ = 0;
  failed_parts_ = 0;
  engine_device_ns_ = 0;
  for (auto& n : cpu_by_verdict_) n = 0;
  for (auto& n : cpu_by_route_) n = 0;
}

}  // namespace gpufeed::pipeline::detail
