#include "gpufeed/pipeline/echo.hpp"

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

namespace {

std::uint32_t parse_count(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 3 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw OptionError("echo", "{echo}=" + whole + ": use 1, a factor like 2, auto or auto:CAP");
  }
  const auto value = static_cast<std::uint32_t>(std::stoul(text));
  if (value == 0 || value > 64) {
    throw OptionError("echo", "{echo}=" + whole + ": use a value from 1 to 64");
  }
  return value;
}

}  // namespace

EchoOptions EchoOptions::parse(const std::string& text) {
  EchoOptions o;
  if (text == "auto") {
    o.adaptive = true;
  } else if (text.rfind("auto:", 0) == 0) {
    o.adaptive = true;
    o.cap = parse_count(text.substr(5), text);
  } else {
    o.factor = parse_count(text, text);
  }
  return o;
}

std::string EchoOptions::to_string() const {
  return adaptive ? "auto:" + std::to_string(cap) : std::to_string(factor);
}

EchoStage::Action EchoStage::next_action(bool fresh_ready, bool fresh_left) const {
  if (!options_.adaptive) {
    if (has_current_ && echoes_of_current_ + 1 < options_.factor) return Action::echo;
    if (!fresh_left) return Action::end;
    return fresh_ready ? Action::fresh : Action::wait;
  }
  if (!fresh_left) return Action::end;
  if (fresh_ready) return Action::fresh;
  if (has_current_ && echoes_of_current_ < options_.cap) return Action::echo;
  return Action::wait;
}

void EchoStage::delivered_fresh() {
  has_current_ = true;
  echoes_of_current_ = 0;
  ++fresh_;
}

void EchoStage::delivered_echo() {
  ++echoes_of_current_;
  ++echoed_;
}

void EchoStage::reset() {
  has_current_ = false;
  echoes_of_current_ = 0;
}

bool EchoStage::holds_current() const {
  if (!has_current_) return false;
  return options_.adaptive ? echoes_of_current_ < options_.cap
                           : echoes_of_current_ + 1 < options_.factor;
}

}  // namespace gpufeed::pipeline
