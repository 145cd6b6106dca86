#pragma once
// A tool's JSON output file, read back for the tests.
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace gpufeed::testing {

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace gpufeed::testing
