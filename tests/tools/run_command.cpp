#include "run_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "temp_dir.hpp"

extern char** environ;

namespace gpufeed::testing {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (extra.count(name) == 0) env.push_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

std::vector<std::string> CommandResult::err_lines() const {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string CommandResult::describe() const {
  return "exit code " + std::to_string(exit_code) + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
}

RunningCommand::RunningCommand(const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env)
    : capture_(std::make_unique<TempDir>()) {
  const std::string out_path = capture_->file("stdout");
  const std::string err_path = capture_->file("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> argv_strings = args;
  std::vector<std::string> env_strings = environment(env);
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<char*> envp = pointers(env_strings);
  const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
}

RunningCommand::~RunningCommand() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string RunningCommand::out_so_far() const {
  return slurp(capture_->file("stdout"));
}

std::string RunningCommand::err_so_far() const {
  return slurp(capture_->file("stderr"));
}

void RunningCommand::signal(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);
}

CommandResult RunningCommand::wait() {
  CommandResult result;
  result.exit_code = wait_for(std::exchange(pid_, -1));
  result.out = slurp(capture_->file("stdout"));
  result.err = slurp(capture_->file("stderr"));
  return result;
}

CommandResult run_command(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env) {
  return RunningCommand(args, env).wait();
}

}  // namespace gpufeed::testing
