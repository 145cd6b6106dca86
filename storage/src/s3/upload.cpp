// Client::put_file: one PUT, or a multipart upload whose parts run `parallel` at once and which
// is aborted on any failure, so that the key never shows a partial object.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "client_impl.hpp"
#include "gpufeed/base/text.hpp"
#include "gpufeed/storage/error.hpp"
#include "xml.hpp"

namespace gpufeed::storage::s3 {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kMinPart = 5 * kMiB;              // S3's smallest part but the last
constexpr std::uint64_t kMaxSinglePut = 5 * 1024 * kMiB;  // S3's largest PUT (and part)
constexpr std::uint64_t kMaxParts = 10000;

// The parts in flight and what came back: shared with the I/O thread's callbacks, which may
// still hold it after the uploading thread moved on.
struct PartBoard {
  std::mutex mutex;
  std::condition_variable changed;
  unsigned in_flight = 0;
  std::vector<std::string> etags;
  std::exception_ptr error;
};

class MultipartUpload {
 public:
  MultipartUpload(ClientCore& client, const Url& url, const std::string& path, int fd,
                  std::uint64_t size, std::uint64_t part)
      : client_(client),
        url_(url),
        path_(path),
        fd_(fd),
        size_(size),
        part_(part),
        parts_((size + part - 1) / part) {}

  void run(unsigned parallel) {
    start();
    try {
      upload_parts(parallel);
      complete();
    } catch (const Error& error) {
      abort();
      throw IoError(std::string(error.what()) +
                    " (the multipart upload was aborted: " + url_.text() + " is unchanged)");
    } catch (...) {
      abort();
      throw;
    }
  }

 private:
  void start() {
    const Response response = client_.run(client_.request(
        Method::post, url_, "POST " + url_.text() + " (starting a multipart upload)", "?uploads="));
    upload_id_ = parse_xml_reply(response.body).upload_id;
    if (upload_id_.empty()) {
      throw IoError("POST " + url_.text() +
                    " (starting a multipart upload): the reply has no UploadId; the endpoint "
                    "does not support multipart uploads");
    }
  }

  void upload_parts(unsigned parallel) {
    auto board = std::make_shared<PartBoard>();
    board->etags.resize(parts_);
    std::unique_lock lock(board->mutex);
    for (std::uint64_t index = 0; index < parts_ && !board->error; ++index) {
      board->changed.wait(lock, [&] { return board->in_flight < parallel || board->error; });
      if (board->error) break;
      ++board->in_flight;
      lock.unlock();
      client_.io.submit(part_request(index, board));
      lock.lock();
    }
    board->changed.wait(lock, [&] { return board->in_flight == 0; });
    if (board->error) std::rethrow_exception(std::exchange(board->error, nullptr));
    etags_ = std::move(board->etags);
  }

  std::unique_ptr<Request> part_request(std::uint64_t index, std::shared_ptr<PartBoard> board) {
    const std::uint64_t number = index + 1;
    auto request = client_.request(
        Method::put, url_,
        "PUT " + url_.text() + " part " + std::to_string(number) + " of " + std::to_string(parts_),
        "?partNumber=" + std::to_string(number) + "&uploadId=" + uri_encode(upload_id_, false));
    request->upload_fd = fd_;
    request->upload_path = path_;
    request->upload_offset = index * part_;
    request->upload_length = std::min(part_, size_ - index * part_);
    request->finish = [board = std::move(board), index](Request& done, std::exception_ptr error) {
      const std::lock_guard lock(board->mutex);
      if (!error && done.response.etag.empty()) {
        error = std::make_exception_ptr(
            IoError(done.what + ": the reply has no ETag; the endpoint is not S3-compatible"));
      }
      if (!error) board->etags[index] = done.response.etag;
      if (error && !board->error)
        board->error = std::move(error);  // moved: released by the uploader only
      --board->in_flight;
      board->changed.notify_all();  // under the lock: the board outlives the notify
    };
    return request;
  }

  void complete() {
    std::string xml = "<CompleteMultipartUpload>";
    for (std::size_t i = 0; i < etags_.size(); ++i) {
      xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
             xml_escape(etags_[i]) + "</ETag></Part>";
    }
    xml += "</CompleteMultipartUpload>";
    auto request = client_.request(Method::post, url_,
                                   "POST " + url_.text() + " (completing the multipart upload)",
                                   "?uploadId=" + uri_encode(upload_id_, false));
    request->post_body = std::move(xml);
    client_.run(std::move(request));
  }

  // Best effort: an abort that fails leaves parts that S3's lifecycle rules clean up, never an
  // object at the key.
  void abort() noexcept {
    try {
      client_.run(client_.request(Method::remove, url_,
                                  "DELETE " + url_.text() + " (aborting the multipart upload)",
                                  "?uploadId=" + uri_encode(upload_id_, false)));
    } catch (...) {
    }
  }

  ClientCore& client_;
  const Url& url_;
  const std::string& path_;
  int fd_;
  std::uint64_t size_;
  std::uint64_t part_;
  std::uint64_t parts_;
  std::string upload_id_;
  std::vector<std::string> etags_;
};

}  // namespace

void Client::put_file(const Url& url, const std::string& path, std::uint64_t part_bytes,
                      unsigned parallel) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno("cannot open " + path + " to upload it to " + url.text());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw_errno("cannot read " + path);
  const auto size = static_cast<std::uint64_t>(info.st_size);

  std::uint64_t part = std::clamp(part_bytes, kMinPart, kMaxSinglePut);
  if (size <= part) {
    auto request = impl_->request(Method::put, url, "PUT " + url.text());
    request->upload_fd = fd.get();
    request->upload_path = path;
    request->upload_length = size;
    impl_->run(std::move(request));
    return;
  }
  if ((size + part - 1) / part > kMaxParts) {
    part = ((size + kMaxParts - 1) / kMaxParts + kMiB - 1) / kMiB * kMiB;
  }
  MultipartUpload(*impl_, url, path, fd.get(), size, part).run(std::max(parallel, 1U));
}

}  // namespace gpufeed::storage::s3
