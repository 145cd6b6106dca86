// bench_micro: Google Benchmark micro-benchmarks of the pipeline's inner loops.
//
//   chunk_read.cpp   DatasetReader::read_chunk on the lock-free index path vs HDF5's
//                    direct-chunk path, uncompressed and gzip, 1 and 2 threads
//   sample_copy.cpp  gathering 12288-byte samples into a batch in random order vs one memcpy
//   normalize.cpp    normalize_cpu vs normalize_reference vs a memcpy of the output size
//
// Every benchmark reports bytes/s; compare rows of the same run, never absolute numbers.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
