// UniqueMapping maps a file read-only and unmaps it exactly when its owner goes; moves hand
// the mapping over without unmapping it.
#include "gpufeed/base/unique_mapping.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gpufeed/base/unique_handle.hpp"
#include "temp_dir.hpp"

namespace gpufeed {
namespace {

/// How many lines of /proc/self/maps name `path`: the mappings of that file.
int mappings_of(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= path.size() &&
        line.compare(line.size() - path.size(), path.size(), path) == 0) {
      ++n;
    }
  }
  return n;
}

class UniqueMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (std::size_t i = 0; i < content_.size(); ++i) {
      content_[i] = static_cast<std::uint8_t>(i * 7 + 1);
    }
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(content_.data()),
               static_cast<std::streamsize>(content_.size()));
  }

  /// Maps the whole file and closes the descriptor.
  UniqueMapping map() const {
    const UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd);
    return UniqueMapping::map_read_only(fd.get(), content_.size());
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("mapped.bin");
  std::vector<std::uint8_t> content_ = std::vector<std::uint8_t>(10000);
};

TEST_F(UniqueMappingTest, MapsTheFileAndUnmapsOnDestruction) {
  {
    const UniqueMapping m = map();  // the descriptor is already closed
    ASSERT_TRUE(m);
    ASSERT_EQ(m.bytes().size(), content_.size());
    EXPECT_TRUE(std::equal(m.bytes().begin(), m.bytes().end(), content_.begin()));
    EXPECT_EQ(mappings_of(path_), 1);
  }
  EXPECT_EQ(mappings_of(path_), 0);
}

TEST_F(UniqueMappingTest, MoveHandsTheMappingOver) {
  UniqueMapping a = map();
  ASSERT_TRUE(a);
  const std::uint8_t* data = a.bytes().data();
  {
    const UniqueMapping b(std::move(a));
    EXPECT_FALSE(a);  // the moved-from state is specified
    EXPECT_TRUE(a.bytes().empty());
    EXPECT_EQ(b.bytes().data(), data);
    EXPECT_EQ(b.bytes().size(), content_.size());
    EXPECT_EQ(mappings_of(path_), 1);
    EXPECT_EQ(b.bytes()[9999], content_[9999]);
  }
  EXPECT_EQ(mappings_of(path_), 0);
  a.reset();  // the moved-from owner has nothing to unmap
  EXPECT_FALSE(a);
}

TEST_F(UniqueMappingTest, MoveAssignUnmapsTheOldMapping) {
  UniqueMapping a = map();
  UniqueMapping b = map();
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(mappings_of(path_), 2);
  const std::uint8_t* data = a.bytes().data();
  b = std::move(a);
  EXPECT_EQ(mappings_of(path_), 1);
  EXPECT_EQ(b.bytes().data(), data);
  EXPECT_FALSE(a);
  b.reset();
  EXPECT_FALSE(b);
  EXPECT_TRUE(b.bytes().empty());
  EXPECT_EQ(mappings_of(path_), 0);
  b.reset();  // twice is harmless
}

TEST_F(UniqueMappingTest, FailureIsAnEmptyMappingWithErrno) {
  errno = 0;
  const UniqueMapping m = UniqueMapping::map_read_only(-1, 4096);
  EXPECT_FALSE(m);
  EXPECT_TRUE(m.bytes().empty());
  EXPECT_EQ(errno, EBADF);
  const UniqueMapping empty;
  EXPECT_FALSE(empty);
}

}  // namespace
}  // namespace gpufeed
