#pragma once
// Where batches live: the CPU, a CUDA device, or "auto". Parsed once from its text ("cpu",
// "cuda", "cuda:N", "auto"); everything after that reads the kind and the index.
#include <iosfwd>
#include <string>
#include <string_view>

namespace gpufeed {

struct Device {
  enum class Kind : unsigned char {
    cpu,
    cuda,       ///< a CUDA device: `index`, or unresolved "cuda" (index -1: LOCAL_RANK's)
    automatic,  ///< "auto": CUDA when a device is usable, else the CPU
  };
  Kind kind = Kind::cpu;
  int index = -1;  ///< CUDA device ordinal; -1: not chosen yet (cpu, auto, plain "cuda")

  constexpr Device() = default;
  /// The text of a device, as Device::parse reads it (so `options.device = "cuda:1"` works).
  Device(const char* text);         // NOLINT(google-explicit-constructor)
  Device(const std::string& text);  // NOLINT(google-explicit-constructor)

  [[nodiscard]] static constexpr Device cpu() { return {}; }
  [[nodiscard]] static constexpr Device cuda(int index) {
    Device d;
    d.kind = Kind::cuda;
    d.index = index;
    return d;
  }
  /// Parses "cpu", "cuda", "cuda:N" (N a device ordinal) or "auto"; throws OptionError on the
  /// `device` field for anything else, naming the value and the choices. Whether the device
  /// exists is resolve_device()'s question (gpufeed/pipeline/device.hpp).
  [[nodiscard]] static Device parse(std::string_view text);

  [[nodiscard]] constexpr bool is_cpu() const { return kind == Kind::cpu; }
  [[nodiscard]] constexpr bool is_cuda() const { return kind == Kind::cuda; }
  /// "cpu", "cuda", "cuda:0" or "auto": the text parse() reads back.
  [[nodiscard]] std::string str() const;

  // Spelled out: CUDA sources include this header as C++17.
  friend constexpr bool operator==(const Device& a, const Device& b) {
    return a.kind == b.kind && a.index == b.index;
  }
  friend constexpr bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace gpufeed
