#include "pillow.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "file_bytes.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {

namespace {

std::string quoted(const std::string& text) {
  return "'" + text + "'";  // test paths hold no quotes
}

void run_script(const char* script, const std::vector<std::string>& args) {
  std::string command = quoted(GPUFEED_PILLOW_PYTHON) + " " + quoted(script);
  for (const std::string& arg : args) command += " " + quoted(arg);
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

void run(const std::vector<std::string>& args) {
  run_script(GPUFEED_PILLOW_SCRIPT, args);
}

std::string precise(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

const char* filter_name(formats::ResizeFilter filter) {
  return filter == formats::ResizeFilter::area ? "area" : "bilinear";
}

formats::Image read_image(const std::string& path, std::uint32_t width, std::uint32_t height,
                          std::uint32_t channels) {
  formats::Image image(width, height, channels);
  std::vector<std::uint8_t> bytes = read_file(path);
  if (bytes.size() != image.pixels.size()) {
    throw std::runtime_error("Pillow wrote " + std::to_string(bytes.size()) + " bytes, expected " +
                             std::to_string(image.pixels.size()));
  }
  image.pixels = std::move(bytes);
  return image;
}

}  // namespace

void make_codec_images(const std::string& dir) {
  run_script(GPUFEED_CODEC_IMAGES_SCRIPT, {dir});
}

void make_engine_jpegs(const std::string& dir) {
  run_script(GPUFEED_ENGINE_JPEGS_SCRIPT, {dir});
}

std::string pillow_unavailable_reason() {
  const std::string python = GPUFEED_PILLOW_PYTHON;
  if (python.empty()) return "no Python 3 with Pillow (PIL) was found when CMake configured";
  if (!std::filesystem::exists(python)) return python + " no longer exists";
  return "";
}

formats::Image pillow_resize(const formats::Image& source, std::uint32_t width,
                             std::uint32_t height, formats::ResizeFilter filter,
                             const std::optional<formats::SourceBox>& box) {
  TempDir dir;
  write_file(dir.file("in.raw"), source.pixels);
  std::vector<std::string> args = {"resize",
                                   dir.file("in.raw"),
                                   std::to_string(source.width),
                                   std::to_string(source.height),
                                   std::to_string(source.channels),
                                   dir.file("out.raw"),
                                   std::to_string(width),
                                   std::to_string(height),
                                   filter_name(filter)};
  if (box) {
    for (double v : {box->left, box->top, box->right, box->bottom}) {
      args.push_back(precise(v));
    }
  }
  run(args);
  return read_image(dir.file("out.raw"), width, height, source.channels);
}

formats::Image pillow_decode(const std::vector<std::uint8_t>& jpeg, std::uint32_t width,
                             std::uint32_t height, bool resized, formats::ResizeFilter filter) {
  TempDir dir;
  write_file(dir.file("in.jpg"), jpeg);
  std::vector<std::string> args = {"decode", dir.file("in.jpg"), dir.file("out.raw")};
  if (resized) {
    args.insert(args.end(), {std::to_string(width), std::to_string(height), filter_name(filter)});
  }
  run(args);
  return read_image(dir.file("out.raw"), width, height, 3);
}

}  // namespace gpufeed::testing
