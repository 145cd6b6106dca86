#pragma once
// Traces `pipebench analyze` reads: PyTorch profiler (Kineto) traces, and the Chrome traces
// pipebench itself writes with --trace (.json or .json.gz either way).
#include <cstddef>
#include <optional>
#include <string>

#include "gpufeed/profiler/kineto_trace.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

struct TraceInput {
  std::string path;
  std::string format;  ///< "kineto" or "gpufeed"
  profiler::Timeline timeline;
  std::size_t events = 0;     ///< events read (all phases)
  std::size_t malformed = 0;  ///< events skipped as unreadable
  bool truncated = false;     ///< the document was cut off: the events are a prefix
  std::optional<profiler::KinetoCounts> kineto;  ///< what a Kineto trace held, by kind
};

/// Reads a trace, telling the two formats apart by the producer in the trace's otherData.
/// Damage degrades to a partial timeline with warnings; throws profiler::TraceError when the
/// file cannot be read or holds no readable event.
TraceInput read_trace(const std::string& path);

/// A gpufeed Chrome trace (ChromeTrace::write) as text back into a Timeline; `source` names
/// it in messages. Throws profiler::TraceError when no event is readable.
TraceInput parse_gpufeed_trace(const std::string& text, const std::string& source);

}  // namespace gpufeed::profiler
