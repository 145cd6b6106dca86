// The range checks of LoaderOptions, from the one table of its fields (kLoaderFields).
#include "gpufeed/base/fields.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed {

namespace {

void check_count(const char* field, const AutoCount& count) {
  if (!count.is_auto()) check_field_range(field, count.value_or(0));
}

}  // namespace

void check_options(const LoaderOptions& o) {
  check_field_range("batch_size", o.batch_size);
  check_count("workers", o.workers);
  check_count("prefetch", o.prefetch);
  check_field_range("cpu_budget", o.cpu_budget);
  check_field_range("memory_bytes", o.memory_bytes);
  check_field_range("seed", o.seed);
  check_field_range("chunk_window", o.chunk_window);
  check_field_range("cache_bytes", o.cache_bytes);
  check_count("read_requests", o.read_requests);
  check_field_range("cache_dir_bytes", o.cache_dir_bytes);
}

}  // namespace gpufeed
