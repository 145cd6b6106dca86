#include "h5pack/raw_staging.hpp"
#include "gpufeed/base/errors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "gpufeed/storage/error.hpp"

namespace gpufeed::tools::h5pack {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;

void write_all(int fd, const std::uint8_t* data, std::size_t size, std::uint64_t offset,
               const std::string& path) {
  while (size > 0) {
    const ssize_t put = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) storage::throw_errno("cannot write the staging file " + path);
    data += put;
    size -= static_cast<std::size_t>(put);
    offset += static_cast<std::uint64_t>(put);
  }
}

void read_all(int fd, std::uint8_t* data, std::size_t size, std::uint64_t offset,
              const std::string& path) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, data, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) storage::throw_errno("cannot read back the staging file " + path);
    if (got == 0) throw storage::IoError("the staging file " + path + " ended early");
    data += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
}

}  // namespace

RawStaging::RawStaging(const std::string& output, std::uint64_t sample_bytes)
    : path_(output + ".raw.tmp." + std::to_string(::getpid())), sample_bytes_(sample_bytes) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) storage::throw_errno("cannot create the staging file " + path_);
  ::unlink(path_.c_str());
  buffer_.reserve(kBufferBytes);
}

RawStaging::~RawStaging() {
  if (fd_ >= 0) ::close(fd_);
}

void RawStaging::append(std::span<const std::uint8_t> sample) {
  if (sample.size() != sample_bytes_) {
    throw Error("RawStaging::append: a sample of " + std::to_string(sample.size()) +
                " bytes, not " + std::to_string(sample_bytes_));
  }
  if (buffer_.size() + sample.size() > kBufferBytes) flush();
  buffer_.insert(buffer_.end(), sample.begin(), sample.end());
  ++samples_;
}

void RawStaging::flush() {
  write_all(fd_, buffer_.data(), buffer_.size(), written_, path_);
  written_ += buffer_.size();
  buffer_.clear();
}

formats::SampleSource RawStaging::source() const {
  return [this](std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
    read_all(fd_, out.data(), count * sample_bytes_, first * sample_bytes_, path_);
  };
}

}  // namespace gpufeed::tools::h5pack
