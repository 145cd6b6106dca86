// h5pack built without libarchive (the wheel's, which would otherwise carry libarchive's
// libxml2 and ICU): --from webdataset says so in one line.
#include "gpufeed/base/errors.hpp"
#include "webdataset.hpp"

namespace gpufeed::tools::h5pack {

ImageFolder read_webdataset(const std::string& source, const std::string&) {
  throw UsageError("--from webdataset " + source +
                   ": this h5pack was built without libarchive (the wheel's is); pack tar "
                   "shards with gpufeed.pack(\"shards/*.tar\", OUT) in Python, or with an h5pack "
                   "built from source");
}

}  // namespace gpufeed::tools::h5pack
