#include "gpufeed/storage/object_store.hpp"

#include "gpufeed/storage/byte_source.hpp"
#include "s3/client.hpp"
#include "s3/process.hpp"

namespace gpufeed::storage {

ObjectStoreStats object_store_stats() {
  // Counting makes no client: a process that never read an object has nothing to report.
  return s3::process_stats();
}

void use_cache_dir(const std::string& url, const std::string& dir, std::uint64_t budget_bytes) {
  attach_cache_dir(*open_source(url, Opening::head), dir, budget_bytes);
}

std::vector<std::string> list_objects(const std::string& prefix) {
  // The bucket alone is a prefix too: "s3://bucket/" lists it all.
  const s3::Url url = s3::Url::parse(prefix + (prefix.ends_with('/') ? "x" : ""));
  std::string key = url.key;
  if (prefix.ends_with('/')) key.pop_back();
  std::vector<std::string> urls;
  for (const std::string& found :
       s3::Client::shared(url.scheme)->list(url.bucket, key, url.scheme)) {
    urls.push_back(s3::Url{url.bucket, found, url.scheme}.text());
  }
  return urls;
}

void check_object_url(const std::string& url) {
  (void)s3::Url::parse(url);
}

S3Settings s3_settings() {
  const s3::Config config = s3::Config::from_environment();
  return {config.endpoint, config.region, config.ca_bundle, config.credential_source};
}

void upload_file(const std::string& local_path, const std::string& url) {
  const s3::Url object = s3::Url::parse(url);
  s3::Client::shared(object.scheme)->put_file(object, local_path);
}

}  // namespace gpufeed::storage
