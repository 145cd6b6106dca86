#include "gpufeed/pipeline/loader_state.hpp"

#include <nlohmann/json.hpp>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

namespace {

using nlohmann::json;

[[noreturn]] void damaged(const std::string& what) {
  throw UsageError("loader state: " + what +
                   "; pass the state exactly as Loader::state() / state_dict() returned it");
}

template <typename T>
T field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) damaged(std::string("no \"") + name + "\"");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    damaged(std::string("\"") + name + "\" is " + it->dump() + ", not of the right type");
  }
}

}  // namespace

std::string LoaderState::to_json() const {
  json segs = json::array();
  for (const EpochSegment& s : segments) {
    segs.push_back({{"world_size", s.world_size}, {"samples_per_rank", s.samples_per_rank}});
  }
  const json j = {{"version", kVersion},
                  {"epoch", epoch},
                  {"segments", segs},
                  {"echo_repeats", echo_repeats},
                  {"dataset", dataset},
                  {"fingerprint", fingerprint},
                  {"next_samples", next_samples},
                  {"samples", samples},
                  {"seed", seed},
                  {"order", to_string(order)},
                  {"chunk_window", chunk_window},
                  {"batch_size", batch_size},
                  {"drop_tail", drop_tail},
                  {"drop_last", drop_last},
                  {"echo", echo},
                  {"rank", rank}};
  return j.dump();
}

LoaderState LoaderState::from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    damaged("not JSON");
  }
  if (!j.is_object()) damaged("not an object");
  if (const int version = field<int>(j, "version"); version != kVersion) {
    damaged("version " + std::to_string(version) + ", this gpufeed reads version " +
            std::to_string(kVersion));
  }
  LoaderState s;
  s.epoch = field<std::uint64_t>(j, "epoch");
  const json segments = field<json>(j, "segments");
  if (!segments.is_array()) damaged("\"segments\" is not a list");
  for (const json& one : segments) {
    if (!one.is_object()) damaged("a segment is not an object");
    EpochSegment seg{field<std::uint32_t>(one, "world_size"),
                     field<std::uint64_t>(one, "samples_per_rank")};
    if (seg.world_size == 0) damaged("a segment has world_size 0");
    s.segments.push_back(seg);
  }
  s.echo_repeats = field<std::uint32_t>(j, "echo_repeats");
  s.dataset = field<std::string>(j, "dataset");
  s.fingerprint = field<std::string>(j, "fingerprint");
  if (j.contains("next_samples")) s.next_samples = field<std::string>(j, "next_samples");
  s.samples = field<std::uint64_t>(j, "samples");
  s.seed = field<std::uint64_t>(j, "seed");
  try {
    s.order = parse_order(field<std::string>(j, "order"));
  } catch (const UsageError&) {
    damaged("\"order\" is " + j["order"].dump());
  }
  s.chunk_window = field<std::uint64_t>(j, "chunk_window");
  s.batch_size = field<std::uint32_t>(j, "batch_size");
  s.drop_tail = field<bool>(j, "drop_tail");
  s.drop_last = field<bool>(j, "drop_last");
  s.echo = field<std::string>(j, "echo");
  s.rank = field<std::uint32_t>(j, "rank");
  return s;
}

}  // namespace gpufeed::pipeline
