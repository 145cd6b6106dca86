#pragma once
// The insides of s3::Client, shared by its requests (client.cpp) and its uploads
// (upload.cpp).
#include <memory>
#include <string>

#include "client.hpp"
#include "io_thread.hpp"
#include "request.hpp"

namespace gpufeed::storage::s3 {

/// A configuration and the I/O thread that runs its requests.
struct ClientCore {
  explicit ClientCore(Config c) : config(std::move(c)), io(config) {}

  /// A request of `method` for `url`'s object; `query` ("?uploads=") is appended as it is, so
  /// it must be in SigV4's canonical form already (names sorted, values URI-encoded, '=' after
  /// each name): libcurl 7.88 signs the query as it is sent.
  [[nodiscard]] std::unique_ptr<Request> request(Method method, const Url& url, std::string what,
                                                 const std::string& query = {}) const;
  /// Runs `request` to its end and returns its response; throws its IoError.
  Response run(std::unique_ptr<Request> request);

  Config config;
  IoThread io;  // after config, which it reads
};

struct Client::Impl : ClientCore {
  using ClientCore::ClientCore;
};

}  // namespace gpufeed::storage::s3
