// The pieces of h5pack info that both layouts print: labels, classes, mean and std, and the
// text rows they make.
#include "h5pack/info_text.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <unordered_set>

#include "common/cli.hpp"

namespace gpufeed::tools::h5pack {

using nlohmann::json;

namespace {

json label_summary(const std::vector<std::int64_t>& labels) {
  const bool present = std::any_of(labels.begin(), labels.end(), [](auto l) { return l != -1; });
  if (!present) return {{"present", false}, {"min", nullptr}, {"max", nullptr}, {"distinct", 0}};
  const auto [lo, hi] = std::minmax_element(labels.begin(), labels.end());
  const std::unordered_set<std::int64_t> distinct(labels.begin(), labels.end());
  return {{"present", true}, {"min", *lo}, {"max", *hi}, {"distinct", distinct.size()}};
}

json channel_stats_json(const std::optional<formats::ChannelStats>& stats) {
  if (!stats) return {{"mean", nullptr}, {"std", nullptr}};
  return {{"mean", stats->mean}, {"std", stats->stddev}};
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

}  // namespace

void add_contents_json(json& j, const std::vector<std::int64_t>& labels,
                       const std::vector<std::string>& class_names,
                       const std::optional<formats::ChannelStats>& stats) {
  j["labels"] = label_summary(labels);
  j["class_names"] = class_names;
  j["classes"] = class_names.empty() ? j["labels"]["distinct"] : json(class_names.size());
  j.update(channel_stats_json(stats));
}

void print_row(const char* key, const std::string& value) {
  std::printf("%-12s %s\n", key, value.c_str());
}

void print_file_rows(const json& j) {
  print_row("file", j["path"].get<std::string>());
  print_row("schema",
            j["schema_version"].dump() + (j["schema_version"] == 0 ? " (not h5pack)" : ""));
}

void print_contents_rows(const json& j) {
  print_row("labels", labels_text(j["labels"]));
  print_row("classes", names_text(j));
  print_row("mean", numbers(j["mean"]));
  print_row("std", numbers(j["std"]));
}

int print_info(const json& j, bool as_json, void (*print_text)(const json&)) {
  if (as_json) {
    std::cout << j.dump(2) << '\n';
  } else {
    print_text(j);
  }
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
