#include "gpufeed/pipeline/stall_injection.hpp"

#include <cstdlib>
#include <mutex>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

std::string StallInjection::str() const {
  return std::string(stage_name(stage)) + ":" + std::to_string(ms) + "@" + std::to_string(every);
}

StallInjection StallInjection::parse(const std::string& text, std::string_view setting) {
  const auto colon = text.find(':');
  const auto at = text.find('@');
  const std::string usage = std::string(setting) + "=" + text +
                            ": expected STAGE:MS or STAGE:MS@EVERY, e.g. read:50@10, with STAGE "
                            "one of read, decode, assemble, normalize";
  if (colon == std::string::npos) throw UsageError(usage);
  const auto stage = parse_stage(text.substr(0, colon));
  if (!stage || (*stage != Stage::read && *stage != Stage::assemble && *stage != Stage::normalize &&
                 *stage != Stage::decode)) {
    throw UsageError(usage);
  }
  const std::string ms =
      text.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1);
  const std::string every = at == std::string::npos ? "1" : text.substr(at + 1);
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError(usage);
    }
    return static_cast<std::uint32_t>(std::stoul(t));
  };
  StallInjection s{*stage, number(ms), number(every)};
  if (s.every == 0) throw UsageError(usage);
  return s;
}

}  // namespace gpufeed::pipeline

namespace gpufeed::testing {

namespace {

std::mutex override_mutex;
std::optional<std::optional<StallInjection>> current_override;  // unset: the environment's

}  // namespace

std::optional<StallInjection> injected_stall() {
  {
    const std::lock_guard lock(override_mutex);
    if (current_override) return *current_override;
  }
  const char* text = std::getenv(kStallVariable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  return StallInjection::parse(text, kStallVariable);
}

StallOverride::StallOverride(std::optional<StallInjection> stall) {
  const std::lock_guard lock(override_mutex);
  previous_ = current_override;
  current_override = stall;
}

StallOverride::~StallOverride() {
  const std::lock_guard lock(override_mutex);
  current_override = previous_;
}

}  // namespace gpufeed::testing
