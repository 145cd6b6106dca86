// The S3 client over HTTPS against a real nginx whose certificate a test CA signed (made with the
// openssl command): with that CA as the CA bundle it reads exactly the object's bytes; with a
// bundle that lacks it, or a host name the certificate does not name, a request fails at once
// (no retry) with one line that names the CA bundle and what to do.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpufeed/storage/error.hpp"
#include "s3/client.hpp"
#include "s3_test_support.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

constexpr const char* kFix =
    "set AWS_CA_BUNDLE to the PEM file of the CA that signed the endpoint's certificate";

// `name` in a directory of PATH, else `fallback` where it is executable, else empty.
std::string find_program(const std::string& name, const std::string& fallback = {}) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): read, not set
  std::string dirs = path == nullptr ? "" : path;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return !fallback.empty() && ::access(fallback.c_str(), X_OK) == 0 ? fallback : "";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Starts `argv` with its output in `log`, in a process group of its own that gets SIGTERM when
// this process dies. Prepared before fork(): the child only makes async-signal-safe calls.
pid_t spawn(std::vector<std::string> argv, const std::string& log) {
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw std::runtime_error("cannot open " + log);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(126);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out);
  if (pid < 0) throw std::runtime_error("cannot fork to run " + argv[0]);
  return pid;
}

// Runs `argv` to its end; throws with its output when it fails.
void run(const std::vector<std::string>& argv, const std::string& log) {
  int status = 0;
  ::waitpid(spawn(argv, log), &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(argv[0] + " " + argv.at(1) + " failed: " + read_text(log));
  }
}

// A port that was free a moment ago.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  auto* any = reinterpret_cast<sockaddr*>(&address);
  const bool bound = ::bind(fd, any, size) == 0 && ::getsockname(fd, any, &size) == 0;
  ::close(fd);
  if (!bound) throw std::runtime_error("cannot bind a port on 127.0.0.1");
  return ntohs(address.sin_port);
}

bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool connected =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return connected;
}

// In `dir`: ca.pem (a self-signed CA) and server.pem + server.key (for IP 127.0.0.1, signed by
// the CA). EC keys: made in milliseconds.
void make_certificates(const std::string& openssl, const TempDir& dir) {
  const std::string log = dir.file("openssl.log");
  const std::vector<std::string> ec_key{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                        "-nodes"};
  std::vector<std::string> ca{openssl, "req", "-x509"};
  ca.insert(ca.end(), ec_key.begin(), ec_key.end());
  ca.insert(ca.end(),
            {"-keyout", dir.file("ca.key"), "-out", dir.file("ca.pem"), "-days", "2", "-subj",
             "/CN=gpufeed test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
             "keyUsage=critical,keyCertSign,cRLSign"});
  run(ca, log);
  std::vector<std::string> request{openssl, "req", "-new"};
  request.insert(request.end(), ec_key.begin(), ec_key.end());
  request.insert(request.end(), {"-keyout", dir.file("server.key"), "-out", dir.file("server.csr"),
                                 "-subj", "/CN=127.0.0.1"});
  run(request, log);
  std::ofstream(dir.file("server.ext"))
      << "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
         "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n";
  run({openssl, "x509", "-req", "-in", dir.file("server.csr"), "-CA", dir.file("ca.pem"), "-CAkey",
       dir.file("ca.key"), "-CAcreateserial", "-out", dir.file("server.pem"), "-days", "2",
       "-extfile", dir.file("server.ext")},
      log);
}

/// nginx serving dir/data over HTTPS on 127.0.0.1 with dir/server.pem: one process in the
/// foreground (daemon off, master_process off), its files under dir/nginx. Killed and waited for
/// on destruction, and ended when the test process dies.
class HttpsServer {
 public:
  HttpsServer(const std::string& nginx, const TempDir& dir) {
    const std::string prefix = dir.file("nginx");
    std::filesystem::create_directories(prefix + "/tmp");
    for (int tries = 0; tries < 3 && pid_ < 0; ++tries) {  // the port was taken meanwhile
      port_ = free_port();
      std::ofstream(prefix + "/nginx.conf") << config(dir);
      pid_ = spawn({nginx, "-p", prefix, "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log"},
                   prefix + "/output.log");
      if (!wait_until_listening()) stop();
    }
    if (pid_ < 0) {
      throw std::runtime_error("nginx did not start: " + read_text(prefix + "/error.log") +
                               read_text(prefix + "/output.log"));
    }
  }
  ~HttpsServer() { stop(); }
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  [[nodiscard]] int port() const { return port_; }

 private:
  // bench/s3/link.sh's configuration, over TLS, in one process.
  [[nodiscard]] std::string config(const TempDir& dir) const {
    std::string text = R"(daemon off;
master_process off;
pid DIR/nginx/nginx.pid;
error_log DIR/nginx/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  default_type application/octet-stream;
  client_body_temp_path DIR/nginx/tmp;
  proxy_temp_path DIR/nginx/tmp;
  fastcgi_temp_path DIR/nginx/tmp;
  uwsgi_temp_path DIR/nginx/tmp;
  scgi_temp_path DIR/nginx/tmp;
  server {
    listen 127.0.0.1:PORT ssl;
    ssl_certificate DIR/server.pem;
    ssl_certificate_key DIR/server.key;
    root DIR/data;
    location / { }
  }
}
)";
    for (const auto& [name, value] :
         {std::pair<std::string, std::string>{"DIR", dir.path().string()},
          std::pair<std::string, std::string>{"PORT", std::to_string(port_)}}) {
      for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
        text.replace(at, name.size(), value);
        at += value.size();
      }
    }
    return text;
  }

  // False when nginx exited (the port was taken) or did not listen within 10 s.
  bool wait_until_listening() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (accepts_connections(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  void stop() noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

class S3Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string openssl = find_program("openssl");
    const std::string nginx = find_program("nginx", "/usr/sbin/nginx");
    if (openssl.empty() || nginx.empty()) {
      GTEST_SKIP() << "the HTTPS test needs the openssl command and nginx (apt-get install "
                      "openssl nginx; .ci/install-deps does)";
    }
    make_certificates(openssl, dir_);
    std::filesystem::create_directories(dir_.file("data") + "/" + kBucket + "/shards");
    write_file(dir_.file("data") + "/" + kBucket + "/" + url_.key, bytes_);
    server_ = std::make_unique<HttpsServer>(nginx, dir_);
  }

  [[nodiscard]] std::string endpoint(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(server_->port());
  }

  // Unsigned (nginx checks no signature), quick retries, trusting `ca_bundle`.
  [[nodiscard]] Config config(const std::string& ca_bundle,
                              const std::string& host = "127.0.0.1") const {
    Config config = local_config(endpoint(host));
    config.access_key.clear();
    config.secret_key.clear();
    config.credential_source = "none (unsigned requests)";
    config.ca_bundle = ca_bundle;
    return config;
  }

  TempDir dir_;
  const Url url_{kBucket, "shards/train-0.bin"};
  const std::vector<std::uint8_t> bytes_ = random_bytes(200000, 7);
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(S3Tls, TrustingTheTestCaReadsExactlyTheBytes) {
  Client client(config(dir_.file("ca.pem")));
  const auto info = client.head(url_);
  EXPECT_EQ(info.size, bytes_.size());
  EXPECT_FALSE(info.etag.empty());
  for (const ByteRange range :
       {ByteRange{0, 1}, ByteRange{12345, 54321}, ByteRange{199999, 1}, ByteRange{0, 200000}}) {
    std::vector<std::uint8_t> out(range.length);
    client.get(url_, range, out, info.etag);
    EXPECT_TRUE(
        std::equal(out.begin(), out.end(), bytes_.begin() + static_cast<long>(range.offset)))
        << range.offset << "+" << range.length;
  }
  const auto stats = client.stats();
  EXPECT_EQ(stats.requests, 5U);
  EXPECT_EQ(stats.retries, 0U);
  EXPECT_EQ(stats.bytes, 1U + 54321U + 1U + 200000U);
}

TEST_F(S3Tls, CaBundleFromAwsCaBundle) {
  ScopedAwsEnv env;
  env.set("AWS_ENDPOINT_URL", endpoint());
  env.set("AWS_CA_BUNDLE", dir_.file("ca.pem"));
  Client client(Config::from_environment());
  EXPECT_EQ(client.config().ca_bundle, dir_.file("ca.pem"));
  EXPECT_EQ(client.head(url_).size, bytes_.size());
}

TEST_F(S3Tls, UntrustedCertificateFailsOnceNamingTheCaBundle) {
  const std::string system_bundle = storage::s3::first_ca_bundle();
  Client client(config(system_bundle));
  const std::string bundle_text =
      system_bundle.empty() ? "libcurl's default CA bundle" : "CA bundle " + system_bundle;
  const std::string head = error_of([&] { client.head(url_); });
  EXPECT_THAT(head, AllOf(HasSubstr("HEAD " + url_.text() + ": TLS failed ("),
                          HasSubstr("SSL certificate problem"), HasSubstr(endpoint()),
                          HasSubstr(bundle_text), HasSubstr(kFix), Not(HasSubstr("attempts")),
                          Not(HasSubstr("\n"))));
  EXPECT_EQ(client.stats().requests, 1U);
  std::vector<std::uint8_t> out(100);
  const std::string get = error_of([&] { client.get(url_, ByteRange{0, 100}, out); });
  EXPECT_THAT(get, AllOf(HasSubstr("GET " + url_.text() + " bytes 0-99: TLS failed ("),
                         HasSubstr(bundle_text), HasSubstr(kFix)));
  EXPECT_EQ(client.stats().requests, 2U);
  EXPECT_EQ(client.stats().retries, 0U);

  Client by_default(config(""));
  EXPECT_THAT(error_of([&] { by_default.head(url_); }),
              AllOf(HasSubstr("libcurl's default CA bundle"), HasSubstr(kFix)));
  EXPECT_EQ(by_default.stats().requests, 1U);
}

TEST_F(S3Tls, HostNameIsVerified) {
  Client client(config(dir_.file("ca.pem"), "localhost"));  // the certificate names 127.0.0.1
  EXPECT_THAT(error_of([&] { client.head(url_); }),
              AllOf(HasSubstr("TLS failed ("), HasSubstr("'localhost'"),
                    HasSubstr("CA bundle " + dir_.file("ca.pem")), HasSubstr(kFix)));
  EXPECT_EQ(client.stats().requests, 1U);
}

}  // namespace
}  // namespace gpufeed::testing
