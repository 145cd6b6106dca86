#include "gpufeed/base/device.hpp"

#include <charconv>
#include <ostream>

#include "gpufeed/base/errors.hpp"

namespace gpufeed {

Device::Device(const char* text) : Device(parse(text)) {}
Device::Device(const std::string& text) : Device(parse(text)) {}

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "auto") {
    Device d;
    d.kind = Kind::automatic;
    return d;
  }
  if (text == "cuda") return cuda(-1);
  const std::string given(text);
  constexpr std::string_view kCuda = "cuda:";
  if (!text.starts_with(kCuda)) {
    throw OptionError("device",
                      "{device}=" + given + ": unknown device; use auto, cpu, cuda or cuda:N");
  }
  const std::string_view digits = text.substr(kCuda.size());
  int index = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || digits.size() > 3 || error != std::errc() ||
      end != digits.data() + digits.size() || index < 0) {
    throw OptionError("device", "{device}=" + given + ": expected cuda:N with N a device number");
  }
  return cuda(index);
}

std::string Device::str() const {
  switch (kind) {
    case Kind::cpu:
      return "cpu";
    case Kind::automatic:
      return "auto";
    case Kind::cuda:
      break;
  }
  return index < 0 ? "cuda" : "cuda:" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& out, const Device& device) {
  return out << device.str();
}

}  // namespace gpufeed
