#include "gpu_decode_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufeed::pipeline::detail {

namespace {

constexpr std::uint32_t kBlock = 16;  // the largest JPEG MCU: 2x2 blocks of 8 pixels

/// [begin, end) of the source pixels `taps` read.
std::pair<std::int32_t, std::int32_t> reach(const formats::ResizeTaps& taps, std::int32_t limit) {
  std::int32_t begin = limit, end = 0;
  for (std::size_t i = 0; i < taps.first.size(); ++i) {
    if (taps.count[i] <= 0) continue;
    begin = std::min(begin, taps.first[i]);
    end = std::max(end, taps.first[i] + taps.count[i]);
  }
  return {begin, std::max(begin, end)};
}

/// [begin, end) widened to whole blocks, within [0, limit).
std::pair<std::uint32_t, std::uint32_t> to_blocks(std::int32_t begin, std::int32_t end,
                                                  std::uint32_t limit) {
  const auto b = static_cast<std::uint32_t>(begin) / kBlock * kBlock;
  const std::uint32_t e =
      std::min(limit, (static_cast<std::uint32_t>(end) + kBlock - 1) / kBlock * kBlock);
  return {b, e};
}

std::uint64_t align_up(std::uint64_t n, std::uint64_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

void plan_image(const Placement& p, std::uint32_t width, std::uint32_t height,
                formats::ResizeFilter filter, ImagePlan& plan) {
  if (p.inner_width == 0 || p.inner_height == 0) {
    throw std::logic_error("plan_image: an empty inner rectangle needs no decode");
  }
  formats::compute_resize_taps(static_cast<int>(width), p.box.left, p.box.right,
                               static_cast<int>(p.inner_width), filter, plan.horizontal);
  formats::compute_resize_taps(static_cast<int>(height), p.box.top, p.box.bottom,
                               static_cast<int>(p.inner_height), filter, plan.vertical);
  const auto [x0, x1] = reach(plan.horizontal, static_cast<std::int32_t>(width));
  const auto [y0, y1] = reach(plan.vertical, static_cast<std::int32_t>(height));
  plan.row0 = y0;
  plan.rows = static_cast<std::uint32_t>(y1 - y0);
  const auto [bx0, bx1] = to_blocks(x0, x1, width);
  const auto [by0, by1] = to_blocks(y0, y1, height);
  plan.roi = {bx0, by0, bx1 - bx0, by1 - by0};
  plan.whole = plan.roi == Roi{0, 0, width, height};
  plan.placement = p;
}

void CropResizeBatch::clear() {
  images_.clear();
  regions_.clear();
  whole_.clear();
  taps_.clear();
  roi_bytes_ = 0;
  tmp_bytes_ = 0;
}

bool CropResizeBatch::add(const ImagePlan& plan, std::uint32_t position, std::uint64_t budget) {
  const Placement& p = plan.placement;
  const std::uint64_t roi =
      align_up(std::uint64_t{plan.roi.width} * 3 * plan.roi.height, kAlignment);
  const std::uint64_t tmp = align_up(std::uint64_t{p.inner_width} * 3 * plan.rows, kAlignment);
  if (!images_.empty() && roi_bytes_ + roi + tmp_bytes_ + tmp > budget) return false;
  CropResizeImage im;
  im.roi_offset = roi_bytes_;
  im.tmp_offset = tmp_bytes_;
  im.roi_pitch = plan.roi.width * 3;
  im.roi_x = static_cast<std::int32_t>(plan.roi.x);
  im.roi_y = static_cast<std::int32_t>(plan.roi.y);
  im.row0 = plan.row0;
  im.rows = plan.rows;
  im.inner_x = p.inner_x;
  im.inner_y = p.inner_y;
  im.inner_width = p.inner_width;
  im.inner_height = p.inner_height;
  im.hflip = p.hflip ? 1 : 0;
  im.vflip = p.vflip ? 1 : 0;
  im.position = position;
  const auto append = [this](const formats::ResizeTaps& t, std::uint32_t& at, std::uint32_t& size) {
    at = static_cast<std::uint32_t>(taps_.size());
    size = static_cast<std::uint32_t>(t.size);
    taps_.insert(taps_.end(), t.first.begin(), t.first.end());
    taps_.insert(taps_.end(), t.count.begin(), t.count.end());
    taps_.insert(taps_.end(), t.weights.begin(), t.weights.end());
  };
  append(plan.horizontal, im.h_taps, im.h_size);
  append(plan.vertical, im.v_taps, im.v_size);
  images_.push_back(im);
  regions_.push_back(plan.roi);
  whole_.push_back(plan.whole ? 1 : 0);
  roi_bytes_ += roi;
  tmp_bytes_ += tmp;
  return true;
}

void crop_resize_on_host(const CropResizeBatch& batch, const std::uint8_t* regions,
                         std::uint8_t* out, std::uint32_t out_width, std::uint32_t out_height) {
  std::vector<std::uint8_t> tmp(batch.tmp_bytes());
  const std::int32_t* taps = batch.taps().data();
  const std::uint64_t sample = std::uint64_t{out_width} * out_height * 3;
  for (const CropResizeImage& im : batch.images()) {
    for (std::uint32_t row = 0; row < im.rows; ++row) {
      for (std::uint32_t x = 0; x < im.inner_width; ++x) {
        crop_resize_horizontal(im, taps, regions, tmp.data(), row, x);
      }
    }
    for (std::uint32_t y = 0; y < out_height; ++y) {
      for (std::uint32_t x = 0; x < out_width; ++x) {
        crop_resize_output(im, taps, tmp.data(), out + im.position * sample, out_width, out_height,
                           y, x);
      }
    }
  }
}

}  // namespace gpufeed::pipeline::detail
