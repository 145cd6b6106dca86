#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/base/names.hpp"

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"

namespace gpufeed::pipeline {

std::string to_string(Augment augment) {
  return name_of(kAugmentNames, augment);
}

bool echo_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample,
               std::uint32_t repeat) {
  if (repeat == 0) return false;
  // Each repeat draws from its own stream of the sample's generator (the fresh flip uses seed).
  return formats::random_flip(seed ^ (0x9E3779B97F4A7C15ull * repeat), epoch, sample);
}

Augment parse_augment(const std::string& text) {
  if (const auto augment = find_named<Augment>(kAugmentNames, text)) return *augment;
  throw OptionError("augment",
                    "unknown {augment} '" + text + "'; use none, flip, crop-flip or center");
}

OnError parse_on_error(const std::string& text) {
  if (text == "fail") return OnError::fail;
  if (text == "skip") return OnError::skip;
  throw OptionError("on_error", "unknown {on_error} '" + text + "'; use fail or skip");
}

std::string to_string(OnError on_error) {
  return on_error == OnError::skip ? "skip" : "fail";
}

}  // namespace gpufeed::pipeline
