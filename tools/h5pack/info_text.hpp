#pragma once
// Pieces of h5pack info shared by the raw and the jpeg layout.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpufeed/formats/dataset_reader.hpp"

namespace gpufeed::tools::h5pack {

/// Adds what a file of either layout holds beside its samples to `j`: "labels" ({"present",
/// "min", "max", "distinct"}; -1 everywhere: not present), "class_names", "classes", and the
/// per-channel "mean" and "std" (nulls when the file has none).
void add_contents_json(nlohmann::json& j, const std::vector<std::int64_t>& labels,
                       const std::vector<std::string>& class_names,
                       const std::optional<formats::ChannelStats>& stats);

/// One "key         value" line of the text output.
void print_row(const char* key, const std::string& value);
/// The first rows of either layout's text: "file" and "schema".
void print_file_rows(const nlohmann::json& j);
/// The last rows of either layout's text, from add_contents_json()'s keys: "labels", "classes",
/// "mean" and "std".
void print_contents_rows(const nlohmann::json& j);

/// Prints `j` as JSON (--json) or as `print_text` writes it; returns h5pack info's exit code.
int print_info(const nlohmann::json& j, bool as_json, void (*print_text)(const nlohmann::json&));

}  // namespace gpufeed::tools::h5pack
