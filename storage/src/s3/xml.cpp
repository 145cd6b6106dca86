#include "xml.hpp"

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

// The end of an element and its text, for any walk that keeps a depth and the field read.
template <typename W>
void XMLCALL on_end(void* data, const XML_Char* /*name*/) {
  auto& walk = *static_cast<W*>(data);
  --walk.depth;
  walk.field = nullptr;
}

template <typename W>
void XMLCALL on_text(void* data, const XML_Char* text, int length) {
  auto& walk = *static_cast<W*>(data);
  if (walk.field != nullptr && length > 0)
    walk.field->append(text, static_cast<std::size_t>(length));
}

// A ListObjectsV2 body: <ListBucketResult><IsTruncated/><NextContinuationToken/>
// <Contents><Key/>...</Contents>...</ListBucketResult>.
struct ListWalk {
  ListPage page;
  int depth = 0;
  std::string truncated;
  std::string* field = nullptr;
};

void XMLCALL on_list_start(void* data, const XML_Char* name, const XML_Char** /*attributes*/) {
  auto& walk = *static_cast<ListWalk*>(data);
  ++walk.depth;
  walk.field = nullptr;
  const std::string_view element = local_name(name);
  if (walk.depth == 2 && element == "IsTruncated") walk.field = &walk.truncated;
  if (walk.depth == 2 && element == "NextContinuationToken") walk.field = &walk.page.next_token;
  if (walk.depth == 3 && element == "Key") walk.field = &walk.page.keys.emplace_back();
}

/// Runs expat over `body` with the handlers given; a body cut short (or not XML after its
/// first elements) still gives what came before.
void walk_xml(std::string_view body, void* walk, XML_StartElementHandler start,
              XML_EndElementHandler end, XML_CharacterDataHandler text) {
  if (body.empty() || body.size() > INT_MAX) return;
  const UniqueParser parser(XML_ParserCreate(nullptr));
  if (!parser) return;
  XML_SetUserData(parser.get(), walk);
  XML_SetElementHandler(parser.get(), start, end);
  XML_SetCharacterDataHandler(parser.get(), text);
  XML_Parse(parser.get(), body.data(), static_cast<int>(body.size()), XML_TRUE);
}

}  // namespace

XmlReply parse_xml_reply(std::string_view body) {
  Walk walk;
  walk_xml(body, &walk, on_start, on_end<Walk>, on_text<Walk>);
  return walk.reply;
}

ListPage parse_list_page(std::string_view body) {
  ListWalk walk;
  walk_xml(body, &walk, on_list_start, on_end<ListWalk>, on_text<ListWalk>);
  walk.page.truncated = walk.truncated == "true";
  return walk.page;
}

}  // namespace gpufeed::storage::s3
