#include "pipebench/sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/base/names.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::tools::pipebench {

namespace {

constexpr double kTieShare = 0.03;     ///< rows this close to the best count as tied
constexpr double kConfirmGain = 0.05;  ///< a recommendation must gain this much samples/s

std::vector<std::string> split(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) {
      throw UsageError("--" + flag + " " + text + ": empty value in the list; give e.g. 1,2,4");
    }
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      throw UsageError("--" + flag + " " + text + ": " + item + " is listed twice");
    }
    out.push_back(std::move(item));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::uint64_t mib(std::uint64_t bytes) {
  return bytes >> 20;
}

/// Counts or auto, in the field's range (kLoaderFields).
std::vector<AutoCount> auto_counts(std::string_view field, const std::string& text) {
  std::vector<AutoCount> out;
  for (const std::string& item : split(field_flag(field).substr(2), text)) {
    const std::optional<AutoCount> count = AutoCount::parse(item);
    if (!count || !field_takes(field, *count))
      throw UsageError(field_flag(field) + " " + text + ": " + item + " is not " +
                       range_text(field));
    out.push_back(*count);
  }
  return out;
}

/// MiB in a flag for a field in bytes, in the field's range.
std::vector<std::uint64_t> bytes_in_mib(std::string_view field, const std::string& text) {
  std::vector<std::uint64_t> out;
  const FieldRange r = flag_unit_range(field);
  const unsigned shift = flag_shift(field);
  for (const std::string& item : split(field_flag(field).substr(2), text)) {
    const std::optional<std::uint64_t> mib = whole_number<std::uint64_t>(item, r.low, r.high);
    if (!mib) {
      throw UsageError(field_flag(field) + " " + text + ": " + item +
                       " is not a whole number in [" + std::to_string(r.low) + ", " +
                       std::to_string(r.high) + "]");
    }
    out.push_back(*mib << shift);
  }
  return out;
}

std::vector<EchoOptions> echoes(const std::string& text) {
  std::vector<EchoOptions> out;
  try {
    for (const std::string& e : split("echo", text)) out.push_back(EchoOptions::parse(e));
  } catch (const OptionError& e) {
    throw UsageError(e.render(field_flag));
  }
  return out;
}

std::vector<Order> orders(const std::string& text) {
  std::vector<Order> out;
  for (const std::string& o : split("order", text)) {
    const std::optional<Order> order = find_order(o);
    if (!order) throw UsageError("--order " + text + ": " + o + " is not " + order_choices());
    out.push_back(*order);
  }
  return out;
}

std::vector<Decode> decodes(const std::string& text) {
  std::vector<Decode> out;
  for (const std::string& d : split("decode", text)) {
    const std::optional<Decode> decode = find_named<Decode>(kDecodeNames, d);
    if (!decode) throw UsageError("--decode " + text + ": " + d + " is not cpu, gpu or auto");
    out.push_back(*decode);
  }
  return out;
}

std::vector<AutoCount> default_workers(unsigned cores) {
  const std::set<unsigned> values{1, std::max(1u, cores / 2), std::max(1u, cores)};
  return {values.begin(), values.end()};
}

std::string percent(const std::optional<double>& share) {
  if (!share) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * *share);
  return buffer;
}

}  // namespace

SweepPoint SweepPoint::of(const LoaderOptions& o) {
  return {o.resources.workers,   o.resources.prefetch,    o.echo,        o.sampling.order,
          o.storage.cache_bytes, o.storage.read_requests, o.image.decode};
}

void SweepPoint::apply_to(LoaderOptions& o) const {
  o.resources.workers = workers;
  o.resources.prefetch = prefetch;
  o.echo = echo.with_reaugment(o.echo.reaugment);  // a sweep varies the schedule alone
  o.sampling.order = order;
  o.storage.cache_bytes = cache_bytes;
  o.storage.read_requests = read_requests;
  o.image.decode = decode;
}

SweepPoint with_setting(SweepPoint point, const Setting& s) {
  switch (s.knob) {
    case Knob::workers:
      point.workers = static_cast<unsigned>(s.value);
      break;
    case Knob::prefetch:
      point.prefetch = static_cast<unsigned>(s.value);
      break;
    case Knob::echo:
      point.echo = EchoOptions{static_cast<std::uint32_t>(s.value)};
      break;
    case Knob::cache_bytes:
      point.cache_bytes = s.value;
      break;
    case Knob::order:
      point.order = s.order();
      break;
    case Knob::read_requests:
      point.read_requests = static_cast<unsigned>(s.value);
      break;
  }
  return point;
}

nlohmann::json count_json(const AutoCount& count) {
  return count.is_auto() ? nlohmann::json("auto") : nlohmann::json(count.value_or(0));
}

std::string describe(const SweepPoint& p) {
  return "workers " + p.workers.str() + ", prefetch " + p.prefetch.str() + ", echo " +
         p.echo.to_string() + ", order " + to_string(p.order) + ", cache " +
         std::to_string(mib(p.cache_bytes)) + " MiB, decode " + to_string(p.decode);
}

std::vector<SweepPoint> SweepGrid::points() const {
  std::vector<SweepPoint> out;
  for (const AutoCount& w : workers) {
    for (const AutoCount& p : prefetch) {
      for (const EchoOptions& e : echo) {
        for (const Order o : order) {
          for (const std::uint64_t c : cache_bytes) {
            for (const Decode d : decode) {
              SweepPoint point{w, p, e, o, c};
              point.decode = d;
              out.push_back(point);
            }
          }
        }
      }
    }
  }
  return out;
}

SweepGrid parse_grid(const SweepAxes& a, const SweepPoint& base, unsigned cores) {
  SweepGrid g;
  const bool any = !a.workers.empty() || !a.prefetch.empty() || !a.echo.empty() ||
                   !a.order.empty() || !a.cache_mb.empty() || !a.decode.empty();
  g.workers = !a.workers.empty() ? auto_counts("workers", a.workers)
              : any              ? std::vector<AutoCount>{base.workers}
                                 : default_workers(cores);
  g.prefetch = !a.prefetch.empty() ? auto_counts("prefetch", a.prefetch)
                                   : std::vector<AutoCount>{base.prefetch};
  g.echo = !a.echo.empty() ? echoes(a.echo)
           : any           ? std::vector<EchoOptions>{base.echo}
                           : std::vector<EchoOptions>{EchoOptions{1}, EchoOptions{2}};
  g.order = !a.order.empty() ? orders(a.order) : std::vector<Order>{base.order};
  g.cache_bytes = !a.cache_mb.empty() ? bytes_in_mib("cache_bytes", a.cache_mb)
                                      : std::vector<std::uint64_t>{base.cache_bytes};
  g.decode = !a.decode.empty() ? decodes(a.decode) : std::vector<Decode>{base.decode};
  const std::size_t n = g.workers.size() * g.prefetch.size() * g.echo.size() * g.order.size() *
                        g.cache_bytes.size() * g.decode.size();
  if (n > kMaxSweepPoints) {
    throw UsageError("the sweep has " + std::to_string(n) + " settings, more than " +
                     std::to_string(kMaxSweepPoints) + "; give fewer values per flag");
  }
  return g;
}

std::optional<std::size_t> best_row(const std::vector<SweepRow>& rows) {
  std::optional<std::size_t> fastest;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].error.empty()) continue;
    if (!fastest || rows[i].samples_per_s > rows[*fastest].samples_per_s) fastest = i;
  }
  if (!fastest) return std::nullopt;
  std::size_t best = *fastest;
  const double floor = rows[*fastest].samples_per_s * (1.0 - kTieShare);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].error.empty() && rows[i].samples_per_s >= floor &&
        rows[i].peak_rss_bytes < rows[best].peak_rss_bytes) {
      best = i;
    }
  }
  return best;
}

Confirmation confirm_recommendation(const std::vector<SweepRow>& rows) {
  if (rows.empty() || !rows.front().error.empty()) {
    return {"no_recommendation", "the first setting did not run, so there is nothing to confirm"};
  }
  const SweepRow& first = rows.front();
  if (first.recommendation.empty()) {
    return {"no_recommendation",
            "the first setting's diagnosis recommended no change" +
                std::string(first.verdict.empty() ? "" : " (" + first.verdict + ")")};
  }
  if (!first.setting) {
    return {"not_in_grid", "the first setting's diagnosis recommended " + first.recommendation +
                               ", which is not a setting the sweep varies"};
  }
  const SweepPoint wanted = with_setting(first.point, *first.setting);
  const auto it =
      std::find_if(rows.begin(), rows.end(), [&](const SweepRow& r) { return r.point == wanted; });
  if (it == rows.end() || !it->error.empty()) {
    return {"not_in_grid", "the first setting's diagnosis recommended " + first.recommendation +
                               "; the grid has no such setting next to the first one (add " +
                               flag_spelling(*first.setting) + " to the sweep)"};
  }
  const double gain = first.samples_per_s > 0 ? it->samples_per_s / first.samples_per_s - 1.0 : 0.0;
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "%+.0f%% samples/s", 100.0 * gain);
  std::string text = "the first setting's diagnosis recommended " + first.recommendation;
  if (first.predicted_util >= 0) text += " (predicted util " + percent(first.predicted_util) + ")";
  text += "; with it the sweep measured " + std::string(buffer);
  if (it->device_util) text += ", util " + percent(it->device_util);
  const bool confirmed = gain >= kConfirmGain;
  text += confirmed ? ": confirmed" : ": not confirmed";
  return {confirmed ? "confirmed" : "not_confirmed", text};
}

void print_sweep_table(const std::vector<SweepRow>& rows) {
  std::printf("%7s %8s %6s %-10s %8s %6s %11s %6s %10s %9s  %s\n", "workers", "prefetch", "echo",
              "order", "cache_mb", "decode", "samples/s", "util", "input_wait", "peak_mb",
              "verdict");
  for (const SweepRow& r : rows) {
    std::printf("%7s %8s %6s %-10s %8llu %6s ", r.point.workers.str().c_str(),
                r.point.prefetch.str().c_str(), r.point.echo.to_string().c_str(),
                to_string(r.point.order).c_str(),
                static_cast<unsigned long long>(mib(r.point.cache_bytes)),
                to_string(r.point.decode).c_str());
    if (!r.error.empty()) {
      std::printf("failed: %s\n", r.error.c_str());
      continue;
    }
    std::printf("%11.0f %6s %10s %9.1f  %s\n", r.samples_per_s, percent(r.device_util).c_str(),
                percent(r.input_wait_share).c_str(), static_cast<double>(r.peak_rss_bytes) * 1e-6,
                r.verdict.empty() ? "-" : r.verdict.c_str());
  }
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  std::string out =
      "workers,prefetch,echo,order,cache_mb,decode,samples_per_s,device_util,input_wait_share,"
      "peak_rss_bytes,verdict,bottleneck_stage,recommendation,error\n";
  const auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  char buffer[64];
  for (const SweepRow& r : rows) {
    out += r.point.workers.str() + "," + r.point.prefetch.str() + "," +
           quoted(r.point.echo.to_string()) + "," + to_string(r.point.order) + "," +
           std::to_string(mib(r.point.cache_bytes)) + "," + to_string(r.point.decode) + ",";
    if (r.error.empty()) {
      std::snprintf(buffer, sizeof buffer, "%.3f", r.samples_per_s);
      out += buffer;
    }
    out += ",";
    if (r.error.empty() && r.device_util) {
      std::snprintf(buffer, sizeof buffer, "%.6f", *r.device_util);
      out += buffer;
    }
    out += ",";
    if (r.error.empty()) {
      std::snprintf(buffer, sizeof buffer, "%.6f", r.input_wait_share);
      out += buffer;
    }
    out += "," + (r.error.empty() ? std::to_string(r.peak_rss_bytes) : std::string()) + "," +
           quoted(r.verdict) + "," + quoted(r.bottleneck_stage) + "," + quoted(r.recommendation) +
           "," + quoted(r.error) + "\n";
  }
  return out;
}

nlohmann::json sweep_json(const std::vector<SweepRow>& rows, const std::optional<std::size_t>& best,
                          const Confirmation& confirmation) {
  using nlohmann::json;
  json settings = json::array();
  for (const SweepRow& r : rows) {
    const bool ok = r.error.empty();
    settings.push_back(
        {{"workers", count_json(r.point.workers)},
         {"prefetch", count_json(r.point.prefetch)},
         {"echo", r.point.echo.to_string()},
         {"order", to_string(r.point.order)},
         {"cache_mb", mib(r.point.cache_bytes)},
         {"decode", to_string(r.point.decode)},
         {"samples_per_s", ok ? json(r.samples_per_s) : json(nullptr)},
         {"device_util", ok && r.device_util ? json(*r.device_util) : json(nullptr)},
         {"input_wait_share", ok ? json(r.input_wait_share) : json(nullptr)},
         {"peak_rss_bytes", ok ? json(r.peak_rss_bytes) : json(nullptr)},
         {"verdict", r.verdict.empty() ? json(nullptr) : json(r.verdict)},
         {"bottleneck_stage",
          r.bottleneck_stage.empty() ? json(nullptr) : json(r.bottleneck_stage)},
         {"recommendation", r.recommendation.empty() ? json(nullptr) : json(r.recommendation)},
         {"predicted_util", r.predicted_util >= 0 ? json(r.predicted_util) : json(nullptr)},
         {"error", ok ? json(nullptr) : json(r.error)}});
  }
  return {{"settings", settings},
          {"best", best ? json(*best) : json(nullptr)},
          {"recommendation", {{"status", confirmation.status}, {"text", confirmation.text}}}};
}

}  // namespace gpufeed::tools::pipebench
