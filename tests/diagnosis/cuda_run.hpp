#pragma once
// A CUDA training run that follows every practice, for the practice checks' tests (diagnosis's
// own, and pipebench's words for them in tests/tools).
#include "gpufeed/diagnosis/practices.hpp"

namespace gpufeed::diagnosis {

inline PracticeInputs cuda_run() {
  PracticeInputs in;
  in.cuda = true;
  in.profiled = true;
  in.device_records = true;
  in.training = true;
  in.cores = 16;
  in.workers = 8;
  in.torch_threads = 8;
  in.loader_busy_threads = 3.0;
  in.steps = 100;
  in.fresh_batches = 100;
  in.fresh_samples = 25600;
  in.uint8_bytes_per_sample = 12288;
  in.pinned = true;
  in.pinned_bytes = 20'000'000;
  in.pinned_h2d_bytes_per_s = 50e9;
  in.pageable_h2d_bytes_per_s = 10e9;
  in.h2d_copies = 200;
  in.h2d_bytes = 25600 * 12288 + 25600 * 8;
  in.seed = 7;
  in.order = Order::chunk;
  in.augment = Augment::none;
  return in;
}

}  // namespace gpufeed::diagnosis
