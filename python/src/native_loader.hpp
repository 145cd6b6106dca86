#pragma once
// The C++ Loader behind gpufeed.Loader: waits without the GIL and lets Ctrl-C through.
#include <memory>
#include <string>

#include <nanobind/nanobind.h>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::python {

class NativeLoader {
 public:
  NativeLoader(const std::string& path, const nanobind::dict& keywords);
  ~NativeLoader();
  NativeLoader(const NativeLoader&) = delete;
  NativeLoader& operator=(const NativeLoader&) = delete;

  /// The loader; gpufeed.UsageError once closed.
  Loader& get();
  [[nodiscard]] bool open() const { return loader_ != nullptr; }
  void start_epoch(std::uint64_t epoch);
  /// The next Delivery, or None at the end of the epoch. Waits with the GIL released and checks
  /// for signals every few tens of milliseconds (KeyboardInterrupt comes out of here).
  nanobind::object next();
  /// Stops the epoch in flight and frees the loader; batches still held stay valid.
  void close();

 private:
  std::unique_ptr<Loader> loader_;
};

}  // namespace gpufeed::python
