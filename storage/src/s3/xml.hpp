#pragma once
// The few fields the S3 client reads from S3's XML bodies (errors, CreateMultipartUpload,
// CompleteMultipartUpload), parsed with libexpat.
#include <string>
#include <string_view>
#include <vector>

namespace gpufeed::storage::s3 {

/// The root element and the texts of its children Code, Message, UploadId and Region: enough
/// to word an error (<Error><Code>SlowDown</Code>...) or to go on with an upload. Fields the
/// body lacks are empty.
struct XmlReply {
  std::string root;
  std::string code;
  std::string message;
  std::string upload_id;
  std::string region;
};

/// One page of a ListObjectsV2 reply: the keys, and where the next page starts.
struct ListPage {
  std::vector<std::string> keys;
  bool truncated = false;
  std::string next_token;
};

/// Parses a ListObjectsV2 body; never throws (a body that is not one gives an empty page).
ListPage parse_list_page(std::string_view body);

/// Parses `body`; never throws: a body that is not XML (a proxy's HTML page) gives empty
/// fields, a body cut short the fields before the cut.
XmlReply parse_xml_reply(std::string_view body);

}  // namespace gpufeed::storage::s3
