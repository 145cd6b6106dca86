#pragma once
// What the S3 clients of one process share: libcurl's global setup, the list of I/O threads
// alive, the exit handler that stops them, and the process's counters.
//
// No I/O thread may outlive the process's exit handlers: curl_global_init sets up OpenSSL, which
// registers an exit handler of its own that frees the locks and digests a request being signed
// uses. A client can outlive main() (a loader left in a global, a Python object never freed, a
// static cache), so stopping its thread is not left to its destructor: an exit handler
// registered right after curl_global_init, which therefore runs before OpenSSL's, stops and
// joins every I/O thread still running. An I/O thread made after it is stopped at once, and a
// request made later fails at once ("cancelled").
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::storage::s3 {

class IoThread;

/// curl_global_init, once per process, followed by registering the exit handler above. Throws
/// IoError when libcurl cannot be set up.
void init_curl_once();

/// Adds `thread` (running) to the threads the exit handler stops; false once that handler ran
/// (the process is exiting: the thread must be stopped at once).
[[nodiscard]] bool add_live_io_thread(IoThread* thread);
/// Removes `thread` (stopped, so `final` are its last counters, kept in the process's totals).
/// Waits while the exit handler is stopping it.
void remove_live_io_thread(IoThread* thread, const ObjectStoreStats& final);

/// Every client's counters since the process started, those of clients gone included.
[[nodiscard]] ObjectStoreStats process_stats();

}  // namespace gpufeed::storage::s3
