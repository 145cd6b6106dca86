#pragma once
// Pieces of h5pack info shared by the raw and the jpeg layout.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpufeed/formats/dataset_reader.hpp"

namespace gpufeed::tools::h5pack {

/// {"present", "min", "max", "distinct"} of the labels (-1 everywhere: not present).
nlohmann::json label_summary(const std::vector<std::int64_t>& labels);
/// {"mean": [...], "std": [...]} or nulls.
nlohmann::json channel_stats_json(const std::optional<formats::ChannelStats>& stats);
/// "12.30 4.00 ..." or "-" for null.
std::string numbers(const nlohmann::json& values);
/// "10: airplane, automobile, ..." from j["class_names"] and j["classes"].
std::string names_text(const nlohmann::json& j);
/// "0 .. 9, 10 distinct" or "none".
std::string labels_text(const nlohmann::json& labels);

}  // namespace gpufeed::tools::h5pack
