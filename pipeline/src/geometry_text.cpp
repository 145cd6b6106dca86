// The settings' grammar: Geometry's fields from and to text (pipebench's flags, messages,
// torchvision's spelling in stats) and their checks.
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/geometry.hpp"

namespace gpufeed::pipeline {

namespace {

std::string size_text(std::uint32_t height, std::uint32_t width) {
  return height == width ? std::to_string(height)
                         : "(" + std::to_string(height) + ", " + std::to_string(width) + ")";
}

std::string number(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

Geometry::Crop parse_crop(const std::string& text) {
  if (text == "none") return Geometry::Crop::none;
  if (text == "center") return Geometry::Crop::center;
  if (text == "random") return Geometry::Crop::random;
  if (text == "random-resized") return Geometry::Crop::random_resized;
  throw OptionError("crop",
                    "unknown {crop} '" + text + "'; use none, center, random or random-resized");
}

std::string to_string(Geometry::Crop crop) {
  switch (crop) {
    case Geometry::Crop::none:
      return "none";
    case Geometry::Crop::center:
      return "center";
    case Geometry::Crop::random:
      return "random";
    case Geometry::Crop::random_resized:
      return "random-resized";
  }
  return "none";
}

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t end; (end = text.find(separator, begin)) != std::string::npos; begin = end + 1) {
    parts.push_back(text.substr(begin, end - begin));
  }
  parts.push_back(text.substr(begin));
  return parts;
}

double to_number(const std::string& field, const std::string& part, const std::string& whole) {
  try {
    std::size_t used = 0;
    const double value = std::stod(part, &used);
    if (used == part.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw OptionError(field, "{" + field + "}=" + whole + ": '" + part + "' is not a number");
}

std::uint32_t to_pixels(const std::string& field, const std::string& part,
                        const std::string& whole) {
  const double value = to_number(field, part, whole);
  if (value < 0 || value > 16384 || value != std::floor(value)) {
    throw OptionError(field, "{" + field + "}=" + whole + ": '" + part +
                                 "' is not a whole number of pixels (0 to 16384)");
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

void parse_range(const std::string& field, const std::string& text, double& low, double& high) {
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() != 2) {
    throw OptionError(field, "{" + field + "}=" + text + ": expected LOW,HIGH, e.g. 0.08,1");
  }
  low = to_number(field, parts[0], text);
  high = to_number(field, parts[1], text);
}

void parse_resize(const std::string& text, Geometry& g) {
  if (text == "none") {
    g.resize = Geometry::Resize::none;
    return;
  }
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() > 2) throw OptionError("resize", "{resize}=" + text + ": expected N or HxW");
  g.resize_height = to_pixels("resize", parts[0], text);
  g.resize_width = parts.size() == 2 ? to_pixels("resize", parts[1], text) : 0;
  g.resize = parts.size() == 2 ? Geometry::Resize::exact : Geometry::Resize::shorter;
}

void parse_padding(const std::string& text, Geometry& g) {
  std::vector<std::uint32_t> p;
  for (const std::string& part : split(text, ','))
    p.push_back(to_pixels("crop_padding", part, text));
  if (p.size() == 1) p = {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) p = {p[0], p[1], p[0], p[1]};
  if (p.size() != 4) {
    throw OptionError("crop_padding", "{crop_padding}=" + text + ": expected N, H,V or L,T,R,B");
  }
  g.pad_left = p[0];
  g.pad_top = p[1];
  g.pad_right = p[2];
  g.pad_bottom = p[3];
}

void Geometry::validate() const {
  if (resize != Resize::none &&
      (resize_height == 0 || (resize == Resize::exact && resize_width == 0))) {
    throw OptionError("resize", "{resize} needs a size of at least 1 pixel");
  }
  if (resize_height > 16384 || resize_width > 16384) {
    throw OptionError("resize", "{resize} " + size_text(resize_height, resize_width) +
                                    " is too large; use at most 16384");
  }
  if (crop != Crop::none && (crop_height == 0 || crop_width == 0)) {
    throw OptionError("crop", "{crop}=" + to_string(crop) + " needs the crop's size: set {size}");
  }
  if (crop_height > 4096 || crop_width > 4096) {
    throw OptionError("crop", "{crop} size " + size_text(crop_height, crop_width) +
                                  " is too large; use at most 4096x4096");
  }
  if (!(scale_min >= 0 && scale_min <= scale_max && scale_max <= 1e6)) {
    throw OptionError("crop_scale", "{crop_scale}=(" + number(scale_min) + ", " +
                                        number(scale_max) + "): use 0 <= low <= high");
  }
  if (!(ratio_min > 0 && ratio_min <= ratio_max && std::isfinite(ratio_max))) {
    throw OptionError("crop_ratio", "{crop_ratio}=(" + number(ratio_min) + ", " +
                                        number(ratio_max) + "): use 0 < low <= high");
  }
  if (!(hflip >= 0 && hflip <= 1)) {
    throw OptionError("hflip", "{hflip}=" + number(hflip) + ": a probability, 0 to 1");
  }
  if (!(vflip >= 0 && vflip <= 1)) {
    throw OptionError("vflip", "{vflip}=" + number(vflip) + ": a probability, 0 to 1");
  }
}

std::string Geometry::describe() const {
  std::string text;
  const auto add = [&](const std::string& op) { text += (text.empty() ? "" : " ") + op; };
  if (resize == Resize::shorter) add("Resize(" + std::to_string(resize_height) + ")");
  if (resize == Resize::exact) add("Resize(" + size_text(resize_height, resize_width) + ")");
  if (crop == Crop::center) add("CenterCrop(" + size_text(crop_height, crop_width) + ")");
  if (crop == Crop::random) {
    std::string pad;
    if (pad_left + pad_top + pad_right + pad_bottom != 0) {
      pad = ", padding=(" + std::to_string(pad_left) + ", " + std::to_string(pad_top) + ", " +
            std::to_string(pad_right) + ", " + std::to_string(pad_bottom) + ")";
    }
    if (pad_if_needed) pad += ", pad_if_needed=True";
    add("RandomCrop(" + size_text(crop_height, crop_width) + pad + ")");
  }
  if (crop == Crop::random_resized) {
    add("RandomResizedCrop(" + size_text(crop_height, crop_width) + ", scale=(" +
        number(scale_min) + ", " + number(scale_max) + "), ratio=(" + number(ratio_min) + ", " +
        number(ratio_max) + "))");
  }
  if (hflip > 0) add("RandomHorizontalFlip(" + number(hflip) + ")");
  if (vflip > 0) add("RandomVerticalFlip(" + number(vflip) + ")");
  return text.empty() ? "none" : text;
}

}  // namespace gpufeed::pipeline
