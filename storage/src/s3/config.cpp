// Url and Config of the S3 client: the AWS variables and files, read as the AWS CLI reads them.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "client.hpp"
#include "gpufeed/base/errors.hpp"
#include "request.hpp"

namespace gpufeed::storage::s3 {

namespace {

// One INI file: section name -> key -> value. A key indented under a key with no value (the
// config file's "s3 =" sub-sections) is stored as "parent.key".
using Section = std::map<std::string, std::string, std::less<>>;
using IniFile = std::map<std::string, Section, std::less<>>;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "[profile  ci]" -> "profile ci": the AWS CLI allows any spacing inside the brackets.
std::string section_name(std::string_view inside) {
  std::string out;
  for (char c : trim(inside)) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A missing or unreadable file reads as empty: the AWS tools treat it so too.
IniFile read_ini(const std::string& path) {
  IniFile file;
  std::ifstream in(path);
  Section* section = nullptr;
  std::string parent;  // the key that opened a sub-section ("s3 ="), else empty
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      section = &file[section_name(text.substr(1, text.size() - 2))];
      parent.clear();
      continue;
    }
    const auto eq = text.find('=');
    if (section == nullptr || eq == std::string_view::npos) continue;
    const std::string key = lower(trim(text.substr(0, eq)));
    const std::string value(trim(text.substr(eq + 1)));
    const bool indented = line.front() == ' ' || line.front() == '\t';
    if (indented && !parent.empty()) {
      (*section)[parent + "." + key] = value;
      continue;
    }
    parent = value.empty() ? key : std::string();
    (*section)[key] = value;
  }
  return file;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string home_directory() {
  std::string home = env("HOME");
  if (!home.empty()) return home;
  const passwd* entry = ::getpwuid(::getuid());  // NOLINT(concurrency-mt-unsafe): once, at start
  return entry != nullptr && entry->pw_dir != nullptr ? std::string(entry->pw_dir) : ".";
}

// The file named by `variable`, else ~/.aws/<name>; "~/" expanded as the AWS CLI does.
std::string aws_file(const char* variable, const char* name) {
  std::string path = env(variable);
  if (path.empty()) return home_directory() + "/.aws/" + name;
  if (path == "~" || path.starts_with("~/")) path = home_directory() + path.substr(1);
  return path;
}

const Section* find_section(const IniFile& file, const std::string& name) {
  const auto it = file.find(name);
  return it == file.end() ? nullptr : &it->second;
}

std::string value_of(const Section* section, std::string_view key) {
  if (section == nullptr) return {};
  const auto it = section->find(key);
  return it == section->end() ? std::string() : it->second;
}

bool is_true(std::string_view value) {
  const std::string v = lower(trim(value));
  return v == "true" || v == "1" || v == "yes";
}

int positive_int(const std::string& text, const char* what, int most) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > most) {
    throw UsageError(std::string(what) + "='" + text + "' is not a whole number from 1 to " +
                     std::to_string(most) + ": set it to one, or unset it");
  }
  return value;
}

// "http://host:port[/path]" without a trailing '/'; throws UsageError naming `where`.
std::string checked_endpoint(std::string text, const std::string& where) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  const auto scheme_end = text.find("://");
  const std::string scheme =
      scheme_end == std::string::npos ? "" : lower(text.substr(0, scheme_end));
  const bool has_host = scheme_end != std::string::npos && text.size() > scheme_end + 3 &&
                        text[scheme_end + 3] != '/';
  const bool has_space = text.find_first_of(" \t\r\n") != std::string::npos;
  if ((scheme != "http" && scheme != "https") || !has_host || has_space) {
    throw UsageError(where + "='" + text +
                     "' is not an endpoint URL: give one like http://127.0.0.1:9000 or "
                     "https://s3.example.com");
  }
  return text;
}

// The profile's keys, when `section` has both; `source` says where they came from.
bool take_keys(Config& config, const Section* section, const std::string& source) {
  const std::string key = value_of(section, "aws_access_key_id");
  const std::string secret = value_of(section, "aws_secret_access_key");
  if (key.empty() || secret.empty()) return false;
  config.access_key = key;
  config.secret_key = secret;
  config.session_token = value_of(section, "aws_session_token");
  if (config.session_token.empty()) config.session_token = value_of(section, "aws_security_token");
  config.credential_source = source;
  return true;
}

// A profile that gets its credentials some other way (a role, SSO, a helper program): the
// client cannot, so it says what to do rather than sending unsigned requests that fail with 403.
void reject_indirect_credentials(const Section* section, const std::string& profile) {
  for (const char* key : {"role_arn", "credential_process", "sso_session", "sso_start_url"}) {
    if (!value_of(section, key).empty()) {
      throw UsageError("the AWS profile '" + profile + "' gets its credentials through " + key +
                       ", which gpufeed does not support: export them as AWS_ACCESS_KEY_ID, "
                       "AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (e.g. `aws configure "
                       "export-credentials --profile " +
                       profile + " --format env`)");
    }
  }
}

void read_credentials(Config& config, const std::string& profile, const Section* credentials,
                      const std::string& credentials_path, const Section* settings,
                      const std::string& config_path) {
  const std::string key = env("AWS_ACCESS_KEY_ID");
  const std::string secret = env("AWS_SECRET_ACCESS_KEY");
  if (!key.empty() || !secret.empty()) {
    if (key.empty() || secret.empty()) {
      throw UsageError(std::string(key.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID") +
                       " is set but " +
                       (key.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY") +
                       " is not: set both, or neither");
    }
    config.access_key = key;
    config.secret_key = secret;
    config.session_token = env("AWS_SESSION_TOKEN");
    if (config.session_token.empty()) config.session_token = env("AWS_SECURITY_TOKEN");
    config.credential_source = "AWS_ACCESS_KEY_ID";
    return;
  }
  const std::string name = "profile '" + profile + "' in ";
  if (take_keys(config, credentials, name + credentials_path)) return;
  if (take_keys(config, settings, name + config_path)) return;
  reject_indirect_credentials(credentials, profile);
  reject_indirect_credentials(settings, profile);
  config.credential_source = "none (unsigned requests)";
}

// The CA bundle: the first file named by AWS_CA_BUNDLE, the profile or SSL_CERT_FILE, which must
// exist (a typo there would otherwise surface as a certificate error on every request), else the
// system's.
std::string find_ca_bundle(const Section* settings, const std::string& profile_source) {
  const std::array<std::array<std::string, 3>, 3> named = {{
      {"AWS_CA_BUNDLE", env("AWS_CA_BUNDLE"), ""},
      {"ca_bundle", value_of(settings, "ca_bundle"), " (" + profile_source + ")"},
      {"SSL_CERT_FILE", env("SSL_CERT_FILE"), ""},
  }};
  for (const auto& [name, path, where] : named) {
    if (path.empty()) continue;
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) return path;
    const bool exists = std::filesystem::exists(path, error);
    throw UsageError(name + "=" + path + where + (exists ? ": not a file" : ": no such file") +
                     "; point it at a PEM file of the CA certificates to trust");
  }
  return first_ca_bundle();
}

}  // namespace

std::string first_ca_bundle(std::span<const std::string_view> candidates) {
  for (const std::string_view candidate : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return std::string(candidate);
  }
  return {};
}

Url Url::parse(std::string_view text) {
  const auto fail = [&]() -> Url {
    throw UsageError("'" + std::string(text) +
                     "' is not an object URL: give one like s3://bucket/path/to/object (or "
                     "gs://bucket/path/to/object)");
  };
  if (!text.starts_with("s3://") && !text.starts_with("gs://")) return fail();
  const std::string_view scheme = text.substr(0, 2);
  const std::string_view rest = text.substr(5);
  const auto slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == rest.size()) return fail();
  return Url{std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1)),
             std::string(scheme)};
}

Config Config::from_environment(std::string_view scheme) {
  Config config = from_environment();
  if (scheme != "gs") return config;
  // Google Cloud Storage's XML API takes AWS Signature V4 requests signed with an HMAC key.
  const std::string endpoint = env("GS_ENDPOINT_URL");
  config.endpoint = endpoint.empty() ? "https://storage.googleapis.com"
                                     : checked_endpoint(endpoint, "GS_ENDPOINT_URL");
  config.region = "auto";
  if (const std::string id = env("GS_ACCESS_KEY_ID"); !id.empty()) {
    config.access_key = id;
    config.secret_key = env("GS_SECRET_ACCESS_KEY");
    config.session_token.clear();
    config.credential_source = "GS_ACCESS_KEY_ID (an HMAC key)";
  }
  return config;
}

Config Config::from_environment() {
  Config config;
  std::string profile = env("AWS_PROFILE");
  if (profile.empty()) profile = env("AWS_DEFAULT_PROFILE");
  const bool named = !profile.empty();
  if (!named) profile = "default";

  const std::string credentials_path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const std::string config_path = aws_file("AWS_CONFIG_FILE", "config");
  const IniFile credentials_file = read_ini(credentials_path);
  const IniFile config_file = read_ini(config_path);
  const Section* credentials = find_section(credentials_file, profile);
  const Section* settings = find_section(config_file, "profile " + profile);
  if (settings == nullptr && profile == "default") settings = find_section(config_file, "default");
  if (named && credentials == nullptr && settings == nullptr) {
    throw UsageError("AWS_PROFILE names the profile '" + profile + "', which neither " +
                     credentials_path + " nor " + config_path +
                     " has: add it (aws configure --profile " + profile +
                     "), or unset AWS_PROFILE");
  }

  read_credentials(config, profile, credentials, credentials_path, settings, config_path);
  if (is_true(env("AWS_NO_SIGN_REQUEST"))) {
    config.access_key.clear();
    config.secret_key.clear();
    config.session_token.clear();
    config.credential_source = "none (AWS_NO_SIGN_REQUEST: unsigned requests)";
  }

  for (const std::string& region :
       {env("AWS_REGION"), env("AWS_DEFAULT_REGION"), value_of(settings, "region")}) {
    if (!region.empty()) {
      config.region = region;
      break;
    }
  }
  const std::pair<std::string, std::string> endpoints[] = {
      {"AWS_ENDPOINT_URL_S3", env("AWS_ENDPOINT_URL_S3")},
      {"AWS_ENDPOINT_URL", env("AWS_ENDPOINT_URL")},
      {"s3.endpoint_url of profile '" + profile + "' in " + config_path,
       value_of(settings, "s3.endpoint_url")},
      {"endpoint_url of profile '" + profile + "' in " + config_path,
       value_of(settings, "endpoint_url")}};
  for (const auto& [where, endpoint] : endpoints) {
    if (!endpoint.empty()) {
      config.endpoint = checked_endpoint(endpoint, where);
      break;
    }
  }

  if (const std::string attempts = env("AWS_MAX_ATTEMPTS"); !attempts.empty()) {
    config.max_attempts = positive_int(attempts, "AWS_MAX_ATTEMPTS", 100);
  } else if (const std::string from_profile = value_of(settings, "max_attempts");
             !from_profile.empty()) {
    config.max_attempts = positive_int(from_profile, "max_attempts", 100);
  }
  if (const std::string stall = env("GPUFEED_S3_STALL_SECONDS"); !stall.empty()) {
    config.stall_timeout =
        std::chrono::seconds(positive_int(stall, "GPUFEED_S3_STALL_SECONDS", 3600));
  }
  config.ca_bundle = find_ca_bundle(settings, "profile '" + profile + "' in " + config_path);
  return config;
}

std::string Config::object_url(const Url& url) const {
  const std::string key = uri_encode(url.key, /*keep_slash=*/true);
  if (!endpoint.empty()) return endpoint + "/" + url.bucket + "/" + key;
  const std::string domain = region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com";
  // A bucket name with dots does not match AWS's wildcard certificate as a host name: such
  // buckets are addressed path-style, as the AWS SDKs do.
  if (url.bucket.find('.') != std::string::npos) {
    return "https://s3." + region + domain + "/" + url.bucket + "/" + key;
  }
  return "https://" + url.bucket + ".s3." + region + domain + "/" + key;
}

std::string Config::describe() const {
  std::string text = endpoint.empty() ? "endpoint AWS S3 in " + region : "endpoint " + endpoint;
  if (signed_requests()) return text + ", credentials from " + credential_source;
  return text + ", credentials: " + credential_source;
}

}  // namespace gpufeed::storage::s3
