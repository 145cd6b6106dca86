// A recommendation's change as a front end writes it.
#include "gpufeed/profiler/recommendation.hpp"

namespace gpufeed::profiler {

std::string Recommendation::action(const SettingSpelling& spelling) const {
  std::string out;
  for (const Setting& s : settings) out += (out.empty() ? "" : " ") + spelling(s);
  if (!words.empty()) out += (out.empty() ? "" : " ") + words;
  return out;
}

}  // namespace gpufeed::profiler
