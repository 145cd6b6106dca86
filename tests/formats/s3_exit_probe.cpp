// A process that reads a dataset in object storage and then ends, for s3_lifetime_test: what a
// training job does at its end, with read-ahead still in flight. The test asserts how it
// ended (its exit status), which no test inside one process can see; the probe exits 70 when an
// I/O thread of the S3 client is still running after every exit handler ran.
//
//   s3_exit_probe epochs URL N        N epochs: each plans every chunk and reads a quarter of
//                                     them (the loader's cache served the rest), then returns
//   s3_exit_probe global URL N        the same, with the last reader left in a global that is
//                                     destroyed after main (a leaked loader, a Python global)
//   s3_exit_probe error URL           prints "reading", waits for a line on standard input (the
//                                     test stops the server meanwhile), reads on until a read
//                                     fails, prints the error and returns 3
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace {

using gpufeed::formats::DatasetReader;

// Declared before anything of the library is made, so destroyed after every exit handler the
// library (libcurl, OpenSSL) registered: the worst place for a client to end.
std::unique_ptr<DatasetReader> left_over;

// The S3 client's I/O threads alive (they are named so).
int io_threads() {
  int threads = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (const dirent* entry = ::readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      threads += name == "gpufeed-s3-io" ? 1 : 0;
    }
    ::closedir(tasks);
  }
  return threads;
}

// Run after every exit handler the library registered (this one was registered before the
// library was set up), OpenSSL's cleanup included: an I/O thread still alive here outlived its
// owner, and may be signing a request with what OpenSSL just freed. A race made certain.
void fail_if_a_thread_is_left() {
  // A thread the exit handler joined can still be listed for a moment, while the kernel reaps it
  // (join returns when the thread cleared its id, before its task is gone): what is still listed
  // after 200 ms was left running.
  for (int waited_ms = 0; waited_ms < 200 && io_threads() > 0; waited_ms += 5) ::usleep(5000);
  if (const int threads = io_threads(); threads > 0) {
    std::fprintf(stderr, "s3_exit_probe: %d S3 I/O threads still running after the exit handlers\n",
                 threads);
    std::fflush(stderr);
    ::_exit(70);
  }
}

// One GET per chunk, many in flight: plenty still running when the reads stop.
gpufeed::storage::ReadAhead read_ahead() {
  gpufeed::storage::ReadAhead r;
  r.requests = 32;
  r.coalesce_gap_bytes = 0;
  r.max_request_bytes = 1;
  return r;
}

std::vector<std::uint64_t> shuffled_chunks(const DatasetReader& reader, unsigned seed) {
  std::vector<std::uint64_t> chunks(reader.num_chunks());
  std::iota(chunks.begin(), chunks.end(), std::uint64_t{0});
  std::shuffle(chunks.begin(), chunks.end(), std::mt19937(seed));
  return chunks;
}

// Plans every chunk and reads every `stride`-th of the plan, up to `limit` of them.
void read_some(const DatasetReader& reader, unsigned seed, std::size_t stride, std::size_t limit) {
  const std::vector<std::uint64_t> chunks = shuffled_chunks(reader, seed);
  reader.plan_reads(chunks, read_ahead());
  std::vector<std::uint8_t> out(reader.chunk_buffer_bytes());
  std::size_t read = 0;
  for (std::size_t i = 0; i < chunks.size() && read < limit; i += stride, ++read) {
    reader.read_chunk(chunks[i], out);
  }
}

int epochs(const std::string& url, int count, bool leave_global) {
  for (int epoch = 0; epoch < count; ++epoch) {
    auto reader = std::make_unique<DatasetReader>(url);
    read_some(*reader, static_cast<unsigned>(epoch), 4, 64);
    std::cout << "epoch " << epoch << " done\n" << std::flush;
    if (leave_global && epoch + 1 == count) left_over = std::move(reader);
  }
  return 0;
}

int error_mid_epoch(const std::string& url) {
  const DatasetReader reader(url);
  const std::vector<std::uint64_t> chunks = shuffled_chunks(reader, 7);
  reader.plan_reads(chunks, read_ahead());
  std::vector<std::uint8_t> out(reader.chunk_buffer_bytes());
  reader.read_chunk(chunks[0], out);
  std::cout << "reading" << std::endl;
  std::string line;
  std::getline(std::cin, line);  // the server is gone once the test writes this line
  try {
    for (const std::uint64_t c : chunks) reader.read_chunk(c, out);
  } catch (const std::exception& e) {
    std::cout << "error: " << e.what() << std::endl;
    return 3;
  }
  std::cout << "no error" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(fail_if_a_thread_is_left);
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 3 && (args[0] == "epochs" || args[0] == "global")) {
      return epochs(args[1], std::stoi(args[2]), args[0] == "global");
    }
    if (args.size() == 2 && args[0] == "error") return error_mid_epoch(args[1]);
  } catch (const std::exception& e) {
    std::cerr << "s3_exit_probe: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "usage: s3_exit_probe epochs URL N | global URL N | error URL\n";
  return 64;
}
