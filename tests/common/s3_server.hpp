#pragma once
// tests/common/s3_server.py as a child process of a test: a real moto S3 server, or a
// fault-injecting proxy in front of one. The process stops when its object is destroyed (its
// standard input closes), and also when the test process dies.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX has no header for it

namespace gpufeed::testing {

/// Empty when `python` can run s3_server.py (it imports moto and boto3), else why not.
inline std::string s3_server_unavailable(const std::string& python) {
  if (python.empty() || ::access(python.c_str(), X_OK) != 0) {
    return "no Python for the S3 tests at '" + python + "': run .ci/python-env (build/venv)";
  }
  const std::string command =
      "'" + python + "' -c 'import moto.server, boto3' >/dev/null 2>&1";  // NOLINT
  if (std::system(command.c_str()) != 0) {
    return python + " cannot import moto: run .ci/python-env (python/requirements-dev.txt)";
  }
  return {};
}

class S3ServerProcess {
 public:
  /// Runs `python script args...` and reads `lines` lines of its standard output (the URL
  /// first). Throws std::runtime_error when it does not start within 60 s.
  S3ServerProcess(const std::string& python, const std::string& script,
                  const std::vector<std::string>& args, int lines) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    std::vector<std::string> argv_text{python, "-u", script};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_text) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int spawned =
        ::posix_spawn(&pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    stdout_ = from_child[0];
    if (spawned != 0) {
      pid_ = -1;
      stop();
      throw std::runtime_error("cannot run " + python);
    }
    try {
      for (int i = 0; i < lines; ++i) lines_.push_back(read_line());
    } catch (...) {
      stop();
      throw;
    }
  }
  ~S3ServerProcess() { stop(); }
  S3ServerProcess(const S3ServerProcess&) = delete;
  S3ServerProcess& operator=(const S3ServerProcess&) = delete;

  [[nodiscard]] const std::string& url() const { return lines_.at(0); }
  [[nodiscard]] const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::string read_line() {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      pollfd ready{stdout_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
        throw std::runtime_error("s3_server.py printed no line within 60 s");
      }
      char c = 0;
      if (::read(stdout_, &c, 1) != 1) throw std::runtime_error("s3_server.py exited early");
      if (c == '\n') return line;
      line += c;
    }
  }

  void stop() noexcept {
    if (stdin_ >= 0) ::close(stdin_);  // the server's signal to stop
    stdin_ = -1;
    if (pid_ > 0) {
      int status = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    pid_ = -1;
    if (stdout_ >= 0) ::close(stdout_);
    stdout_ = -1;
  }

  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::vector<std::string> lines_;
};

}  // namespace gpufeed::testing
