// h5pack info FILE.h5 [--json]: what a dataset file holds and how it will be read.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/probe.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/info_text.hpp"

namespace gpufeed::tools::h5pack {

using nlohmann::json;

namespace {

json info_json(const formats::DatasetReader& r) {
  const formats::SampleShape shape = r.sample_shape();
  const std::uint64_t raw = r.num_samples() * shape.bytes();
  const std::uint64_t stored = r.stored_bytes();
  json j = {{"path", r.path()},
            {"schema_version", r.schema_version()},
            {"storage", "raw"},
            {"layout", formats::to_string(shape.layout)},
            {"samples", r.num_samples()},
            {"shape", {shape.height, shape.width, shape.channels}},
            {"sample_bytes", shape.bytes()},
            {"chunk", r.samples_per_chunk()},
            {"chunks", r.num_chunks()},
            {"chunk_bytes", r.chunk_buffer_bytes()},
            {"compression", r.compression()},
            {"read_path", formats::to_string(r.read_path())},
            {"images", r.options().images},
            {"stored_bytes", stored},
            {"raw_bytes", raw},
            {"compression_ratio",
             stored == 0 ? 0.0 : static_cast<double>(raw) / static_cast<double>(stored)}};
  j["labels"] = label_summary(r.labels());
  const auto& names = r.class_names();
  j["class_names"] = names;
  j["classes"] = names.empty() ? j["labels"]["distinct"] : json(names.size());
  j.update(channel_stats_json(r.channel_stats()));
  return j;
}

void print_text(const json& j) {
  const auto row = [](const char* key, const std::string& value) {
    std::printf("%-12s %s\n", key, value.c_str());
  };
  const auto& s = j["shape"];
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", j["compression_ratio"].get<double>());
  row("file", j["path"].get<std::string>());
  row("schema", j["schema_version"].dump() + (j["schema_version"] == 0 ? " (not h5pack)" : ""));
  row("samples", j["samples"].dump());
  row("sample", s[0].dump() + "x" + s[1].dump() + "x" + s[2].dump() + " " +
                    j["layout"].get<std::string>() + " (" + j["sample_bytes"].dump() + " bytes)");
  row("chunking", j["chunk"].dump() + " samples per chunk, " + j["chunks"].dump() + " chunks, " +
                      j["chunk_bytes"].dump() + " bytes each");
  row("compression", j["compression"].get<std::string>());
  row("read path", j["read_path"].get<std::string>());
  row("stored", j["stored_bytes"].dump() + " bytes (ratio " + ratio + " of " +
                    j["raw_bytes"].dump() + " raw)");
  row("labels", labels_text(j["labels"]));
  row("classes", names_text(j));
  row("mean", numbers(j["mean"]));
  row("std", numbers(j["std"]));
}

}  // namespace

json label_summary(const std::vector<std::int64_t>& labels) {
  const bool present = std::any_of(labels.begin(), labels.end(), [](auto l) { return l != -1; });
  if (!present) return {{"present", false}, {"min", nullptr}, {"max", nullptr}, {"distinct", 0}};
  const auto [lo, hi] = std::minmax_element(labels.begin(), labels.end());
  const std::unordered_set<std::int64_t> distinct(labels.begin(), labels.end());
  return {{"present", true}, {"min", *lo}, {"max", *hi}, {"distinct", distinct.size()}};
}

json channel_stats_json(const std::optional<formats::ChannelStats>& stats) {
  if (!stats) return {{"mean", nullptr}, {"std", nullptr}};
  return {{"mean", stats->mean}, {"std", stats->std}};
}

std::string numbers(const json& values) {
  if (values.is_null()) return "-";
  std::string text;
  for (const auto& v : values) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%s%.2f", text.empty() ? "" : " ", v.get<double>());
    text += buffer;
  }
  return text;
}

std::string names_text(const json& j) {
  constexpr std::size_t kNamesShown = 5;
  const auto& names = j["class_names"];
  if (names.empty()) return j["classes"].dump() + " (no class names)";
  std::string text = std::to_string(names.size()) + ":";
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
    text += i == 0 ? " " : ", ";
    text += names[i].get<std::string>();
  }
  return names.size() > kNamesShown ? text + ", ..." : text;
}

std::string labels_text(const json& labels) {
  if (!labels["present"].get<bool>()) return "none";
  return labels["min"].dump() + " .. " + labels["max"].dump() + ", " + labels["distinct"].dump() +
         " distinct";
}

int run_info(const InspectOptions& o) {
  if (default_dataset_options(o) && formats::probe_layout(o.file) == formats::FileLayout::jpeg) {
    return run_info_jpeg(o);
  }
  const formats::DatasetReader reader(o.file, reader_options(o));
  const json j = info_json(reader);
  if (o.json) {
    std::cout << j.dump(2) << '\n';
  } else {
    print_text(j);
  }
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
