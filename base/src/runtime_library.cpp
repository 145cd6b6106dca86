#include "gpufeed/base/runtime_library.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

namespace gpufeed {

std::vector<std::string> cuda_library_candidates(const char* env_var,
                                                 const std::vector<std::string>& given,
                                                 const std::string& soname,
                                                 std::initializer_list<const char*> subdirs) {
  std::vector<std::string> out;
  if (const char* file = std::getenv(env_var); file != nullptr && *file != '\0') {
    out.emplace_back(file);
  }
  out.insert(out.end(), given.begin(), given.end());
  out.push_back(soname);
  std::vector<std::string> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(variable); root != nullptr && *root != '\0') {
      roots.emplace_back(root);
    }
  }
  roots.emplace_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    for (const char* sub : subdirs) out.push_back(root + sub + soname);
  }
  std::vector<std::string> unique;
  for (std::string& c : out) {
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(std::move(c));
  }
  return unique;
}

std::vector<std::string> library_files_in(const std::string& directory, const std::string& prefix,
                                          const std::string& contains) {
  std::vector<std::string> found;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return found;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) == 0 && name.find(contains) != std::string::npos) {
      found.push_back(directory + "/" + name);
    }
  }
  ::closedir(dir);
  std::sort(found.begin(), found.end());
  return found;
}

std::string resolve_symbols(void* library, std::initializer_list<LibrarySymbol> symbols) {
  for (const LibrarySymbol& s : symbols) {
    *s.address = ::dlsym(library, s.name);
    if (*s.address == nullptr) return s.name;
  }
  return {};
}

}  // namespace gpufeed
