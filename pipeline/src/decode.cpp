#include "gpufeed/pipeline/decode.hpp"

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/names.hpp"

namespace gpufeed::pipeline {

std::string to_string(Decode decode) {
  return name_of(kDecodeNames, decode);
}

Decode parse_decode(const std::string& text) {
  if (const auto decode = find_named<Decode>(kDecodeNames, text)) return *decode;
  throw OptionError("decode", "unknown {decode} '" + text + "'; use cpu, gpu or auto");
}

}  // namespace gpufeed::pipeline
