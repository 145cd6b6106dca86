#include "s3_xml.hpp"

#include <expat.h>

#include <climits>
#include <cstring>

#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::storage::s3 {

namespace {

struct ParserTraits {
  using handle_type = XML_Parser;
  static constexpr XML_Parser null() noexcept { return nullptr; }
  static void destroy(XML_Parser parser) noexcept { XML_ParserFree(parser); }
};
using UniqueParser = UniqueHandle<ParserTraits>;

struct Walk {
  XmlReply reply;
  int depth = 0;
  std::string* field = nullptr;  // the child of the root whose text is being read
};

// "s3:Code" and "Code" alike.
std::string_view local_name(const XML_Char* name) {
  std::string_view text(name);
  const auto colon = text.rfind(':');
  return colon == std::string_view::npos ? text : text.substr(colon + 1);
}

void XMLCALL on_start(void* data, const XML_Char* name, const XML_Char** /*attributes*/) {
  auto& walk = *static_cast<Walk*>(data);
  ++walk.depth;
  walk.field = nullptr;
  const std::string_view element = local_name(name);
  if (walk.depth == 1) {
    walk.reply.root = element;
  } else if (walk.depth == 2) {
    if (element == "Code") walk.field = &walk.reply.code;
    if (element == "Message") walk.field = &walk.reply.message;
    if (element == "UploadId") walk.field = &walk.reply.upload_id;
    if (element == "Region") walk.field = &walk.reply.region;
  }
}

void XMLCALL on_end(void* data, const XML_Char* /*name*/) {
  auto& walk = *static_cast<Walk*>(data);
  --walk.depth;
  walk.field = nullptr;
}

void XMLCALL on_text(void* data, const XML_Char* text, int length) {
  auto& walk = *static_cast<Walk*>(data);
  if (walk.field != nullptr && length > 0)
    walk.field->append(text, static_cast<std::size_t>(length));
}

}  // namespace

XmlReply parse_xml_reply(std::string_view body) {
  Walk walk;
  if (body.empty() || body.size() > INT_MAX) return {};
  const UniqueParser parser(XML_ParserCreate(nullptr));
  if (!parser) return {};
  XML_SetUserData(parser.get(), &walk);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  XML_SetCharacterDataHandler(parser.get(), on_text);
  // A body cut short (or not XML after its first elements) still gives what came before.
  XML_Parse(parser.get(), body.data(), static_cast<int>(body.size()), XML_TRUE);
  return walk.reply;
}

}  // namespace gpufeed::storage::s3
