// No thread of the S3 client outlives its owner: a reader closed with read-ahead in flight
// cancels it and sends nothing more, and a process that read objects ends with its own exit
// status (never SIGSEGV in OpenSSL's exit handler) after its epochs, after a read that failed
// mid-epoch, or with a reader left in a global (s3_exit_probe, run as a child process).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "s3_dataset_fixture.hpp"

namespace gpufeed::formats {
namespace {

namespace s3 = storage::s3;

using namespace std::chrono_literals;

constexpr SampleShape kShape{16, 16, 3, Layout::nhwc};
constexpr std::uint64_t kSamples = 16384;
constexpr std::uint64_t kChunk = 32;

// s3_exit_probe with a pipe on its standard input and output.
class Probe {
 public:
  explicit Probe(std::vector<std::string> args) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    args.insert(args.begin(), GPUFEED_S3_EXIT_PROBE);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    if (spawned != 0) throw std::runtime_error("cannot run s3_exit_probe");
  }
  ~Probe() {
    if (stdin_ >= 0) ::close(stdin_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(stdout_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  /// Reads its output until a line equal to `line` (true), its end or 60 s (false).
  bool read_until(const std::string& line) {
    std::string current;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd ready{stdout_, POLLIN, 0};
      if (::poll(&ready, 1, 100) <= 0) continue;
      char c = 0;
      if (::read(stdout_, &c, 1) != 1) return false;
      output_ += c;
      if (c != '\n') {
        current += c;
      } else if (current == line) {
        return true;
      } else {
        current.clear();
      }
    }
    return false;
  }
  void write_line() {
    const char newline = '\n';
    EXPECT_EQ(::write(stdin_, &newline, 1), 1);
  }

  /// Its exit status (128 + N when signal N ended it), or -1 after 120 s (then it is killed).
  int wait() {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      char buffer[4096];
      pollfd ready{stdout_, POLLIN, 0};
      if (::poll(&ready, 1, 10) > 0) {
        const ssize_t got = ::read(stdout_, buffer, sizeof buffer);
        if (got > 0) output_.append(buffer, static_cast<std::size_t>(got));
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
    }
    pid_ = -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }
  [[nodiscard]] const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string output_;
};

class S3Lifetime : public testing::S3DatasetTest {
 protected:
  S3Lifetime() : S3DatasetTest(kShape, kSamples, kChunk) {}

  // One GET per chunk, many in flight.
  static storage::ReadAhead one_get_per_chunk() {
    storage::ReadAhead r;
    r.requests = 32;
    r.coalesce_gap_bytes = 0;
    r.max_request_bytes = 1;
    return r;
  }
};

TEST_F(S3Lifetime, ClosingAReaderCancelsItsReadAheadAndSendsNothingMore) {
  // A slow server: the planned GETs are still in flight when the reader goes.
  const auto proxy = testing::start_proxy(moto_->url(), {"--delay-ms", "2000"});
  env_.set("AWS_ENDPOINT_URL_S3", proxy->url());
  auto reader = std::make_unique<DatasetReader>(url_);
  std::vector<std::uint64_t> chunks(reader->num_chunks());
  std::iota(chunks.begin(), chunks.end(), std::uint64_t{0});
  reader->plan_reads(chunks, one_get_per_chunk());
  std::vector<std::uint8_t> out(reader->chunk_buffer_bytes());
  reader->read_chunk(chunks[0], out);
  ASSERT_GT(storage::object_store_stats().in_flight, 0u) << "nothing was in flight to cancel";
  const auto closing = std::chrono::steady_clock::now();
  reader.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - closing, 1s) << "it waited for the GETs";
  EXPECT_EQ(storage::object_store_stats().in_flight, 0u);
  const std::uint64_t sent = storage::object_store_stats().requests;
  std::this_thread::sleep_for(2500ms);  // longer than a GET takes: one landing would send more
  EXPECT_EQ(storage::object_store_stats().requests, sent)
      << "GETs were sent after the reader closed";
}

TEST_F(S3Lifetime, TheFirstBatchsGetsGoOutTogetherTheRestAfterThemInASlowStart) {
  // A slow server: no GET lands while they are counted.
  const auto proxy = testing::start_proxy(moto_->url(), {"--delay-ms", "1500"});
  env_.set("AWS_ENDPOINT_URL_S3", proxy->url());
  std::vector<std::uint64_t> chunks(kSamples / kChunk);
  std::iota(chunks.begin(), chunks.end(), std::uint64_t{0});
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{20}}) {
    auto reader = std::make_unique<DatasetReader>(url_);
    storage::ReadAhead settings = one_get_per_chunk();
    settings.first_ranges = first;
    reader->plan_reads(chunks, settings);
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(storage::object_store_stats().in_flight, std::max<std::uint64_t>(8, first))
        << "the first batch reads " << first << " chunks";
    reader.reset();  // cancels them
    ASSERT_EQ(storage::object_store_stats().in_flight, 0u);
  }
}

TEST_F(S3Lifetime, CancellingAnOwnersGetsEndsThemAndLeavesTheOthers) {
  struct Board {
    std::mutex mutex;
    std::condition_variable changed;
    int ok = 0;
    int cancelled = 0;
  } board;  // before the client: its callbacks are done before it goes
  const auto proxy = testing::start_proxy(moto_->url(), {"--delay-ms", "2000"});
  s3::Config config = testing::local_config(proxy->url());
  config.stall_timeout = 30s;  // the proxy's delay is no stall
  s3::Client client(config);
  const s3::Url object{testing::kBucket, "sets/data.h5"};
  std::vector<std::vector<std::uint8_t>> buffers(8, std::vector<std::uint8_t>(1000));
  const int owner = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const void* const mine = i % 2 == 0 ? &owner : nullptr;
    client.get_async(
        object, {i * 1000, 1000}, buffers[i], {},
        [&board](std::exception_ptr error) {
          const std::lock_guard lock(board.mutex);
          ++(error ? board.cancelled : board.ok);
          board.changed.notify_all();
        },
        mine);
  }
  client.cancel(&owner);
  std::unique_lock lock(board.mutex);
  EXPECT_TRUE(board.changed.wait_for(lock, 1s, [&] { return board.cancelled == 4; }))
      << "the owner's GETs were not ended at once";
  EXPECT_TRUE(board.changed.wait_for(lock, 30s, [&] { return board.ok == 4; }));
  EXPECT_EQ(board.cancelled, 4);
}

TEST_F(S3Lifetime, ASharedClientGoesWithItsLastOwnerAndItsCountsStay) {
  std::weak_ptr<s3::Client> weak;
  std::uint64_t counted = 0;
  {
    const std::shared_ptr<s3::Client> client = s3::Client::shared();
    weak = client;
    EXPECT_EQ(s3::Client::shared(), client);
    EXPECT_EQ(client->head(s3::Url{testing::kBucket, "sets/data.h5"}).size,
              std::filesystem::file_size(local_));
    counted = storage::object_store_stats().requests;
  }
  EXPECT_TRUE(weak.expired()) << "the process kept the client (and its I/O thread)";
  EXPECT_GE(storage::object_store_stats().requests, counted) << "the process's counters went back";
}

TEST_F(S3Lifetime, AProcessEndsWithItsOwnStatusAfterTwoEpochsOfReadAhead) {
  for (int run = 0; run < 3; ++run) {  // a race: the exit handlers against the I/O thread
    Probe probe({"epochs", url_, "2"});
    const int status = probe.wait();
    ASSERT_EQ(status, 0) << "run " << run << ":\n" << probe.output();
  }
}

TEST_F(S3Lifetime, AReaderLeftInAGlobalAtExitDoesNotOutliveTheExitHandlers) {
  Probe probe({"global", url_, "1"});
  EXPECT_EQ(probe.wait(), 0) << probe.output();
}

TEST_F(S3Lifetime, AReadThatFailsMidEpochEndsTheProcessWithItsErrorNotACrash) {
  env_.set("AWS_MAX_ATTEMPTS", "3");
  Probe probe({"error", url_});
  ASSERT_TRUE(probe.read_until("reading")) << probe.output();
  moto_.reset();  // the server stops mid-epoch: every range fails after its retries
  probe.write_line();
  EXPECT_EQ(probe.wait(), 3) << probe.output();
  EXPECT_NE(probe.output().find("error: cannot read"), std::string::npos) << probe.output();
}

}  // namespace
}  // namespace gpufeed::formats
