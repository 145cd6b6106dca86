#pragma once
// The one table of stage names: the loader's counters (LoaderStats), its NVTX ranges, the
// profiler's analysis, the reports, --json and --inject-stall all use these names.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpufeed {

/// `transform`: a Python transform's ops that run on the delivered batch, on the consumer's
/// thread, before the consumer gets it.
enum class Stage : std::uint8_t {
  read,
  decode,
  assemble,
  h2d,
  normalize,
  echo,
  transform,
  wait,
  step
};
inline constexpr std::size_t kStageCount = 9;

struct StageInfo {
  Stage stage;
  const char* name;
  /// A loader stage (one of which can be the bottleneck); false for the consumer's `wait` and
  /// `step`.
  bool loader;
};

/// Every stage, in the order of the enum.
inline constexpr std::array<StageInfo, kStageCount> kStages{{
    {Stage::read, "read", true},
    {Stage::decode, "decode", true},
    {Stage::assemble, "assemble", true},
    {Stage::h2d, "h2d", true},
    {Stage::normalize, "normalize", true},
    {Stage::echo, "echo", true},
    {Stage::transform, "transform", true},
    {Stage::wait, "wait", false},
    {Stage::step, "step", false},
}};

/// The loader's stages, in table order.
inline constexpr std::array<Stage, 7> kLoaderStages{
    Stage::read,      Stage::decode, Stage::assemble, Stage::h2d,
    Stage::normalize, Stage::echo,   Stage::transform};

[[nodiscard]] constexpr const char* stage_name(Stage stage) noexcept {
  return kStages[static_cast<std::size_t>(stage)].name;
}

/// Parses a stage name; nullopt for an unknown one.
[[nodiscard]] constexpr std::optional<Stage> parse_stage(std::string_view name) noexcept {
  for (const StageInfo& s : kStages) {
    if (std::string_view(s.name) == name) return s.stage;
  }
  return std::nullopt;
}

static_assert([] {
  for (std::size_t i = 0; i < kStageCount; ++i) {
    if (static_cast<std::size_t>(kStages[i].stage) != i) return false;
  }
  for (const Stage s : kLoaderStages) {
    if (!kStages[static_cast<std::size_t>(s)].loader) return false;
  }
  return true;
}());

}  // namespace gpufeed
