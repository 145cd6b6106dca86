// UniqueHandle destroys its handle exactly once, whatever moves and resets happen; UniqueFd
// closes its descriptor.
#include "gpufeed/base/unique_handle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "temp_dir.hpp"

namespace gpufeed {
namespace {

/// Records every destroy() call.
struct CountingTraits {
  using handle_type = int;
  static inline std::vector<int> destroyed;
  static constexpr int null() noexcept { return 0; }
  static void destroy(int h) noexcept { destroyed.push_back(h); }
};
using Handle = UniqueHandle<CountingTraits>;

class UniqueHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { CountingTraits::destroyed.clear(); }
};

TEST_F(UniqueHandleTest, DefaultIsEmptyAndDestroysNothing) {
  {
    const Handle h;
    EXPECT_FALSE(h);
    EXPECT_EQ(h.get(), 0);
  }
  EXPECT_TRUE(CountingTraits::destroyed.empty());
}

TEST_F(UniqueHandleTest, DestroysOnScopeExitOnce) {
  {
    const Handle h(7);
    EXPECT_TRUE(h);
    EXPECT_EQ(h.get(), 7);
  }
  EXPECT_EQ(CountingTraits::destroyed, std::vector<int>{7});
}

TEST_F(UniqueHandleTest, MoveTransfersOwnership) {
  {
    Handle a(3);
    Handle b(std::move(a));
    EXPECT_FALSE(a);  // the moved-from state is specified
    EXPECT_EQ(b.get(), 3);
    EXPECT_TRUE(CountingTraits::destroyed.empty());
  }
  EXPECT_EQ(CountingTraits::destroyed, std::vector<int>{3});
}

TEST_F(UniqueHandleTest, MoveAssignDestroysTheOldHandle) {
  {
    Handle a(1);
    Handle b(2);
    b = std::move(a);
    EXPECT_EQ(CountingTraits::destroyed, std::vector<int>{2});
    EXPECT_EQ(b.get(), 1);
    EXPECT_FALSE(a);
    Handle& self = b;
    b = std::move(self);  // self-move keeps the handle
    EXPECT_EQ(b.get(), 1);
    EXPECT_EQ(CountingTraits::destroyed, std::vector<int>{2});
  }
  EXPECT_EQ(CountingTraits::destroyed, (std::vector<int>{2, 1}));
}

TEST_F(UniqueHandleTest, ReleaseGivesUpOwnershipAndResetReplaces) {
  int released = 0;
  {
    Handle h(5);
    released = h.release();
    EXPECT_FALSE(h);
    h.reset(6);
    EXPECT_EQ(h.get(), 6);
    h.reset(8);
    EXPECT_EQ(CountingTraits::destroyed, std::vector<int>{6});
    h.reset();
    EXPECT_FALSE(h);
    EXPECT_EQ(CountingTraits::destroyed, (std::vector<int>{6, 8}));
  }
  EXPECT_EQ(released, 5);
  EXPECT_EQ(CountingTraits::destroyed, (std::vector<int>{6, 8}));  // 5 was released, not destroyed
}

bool fd_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesTheDescriptor) {
  const testing::TempDir dir;
  const std::string path = dir.file("fd");
  int raw = -1;
  {
    const UniqueFd fd(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd);
    raw = fd.get();
    EXPECT_TRUE(fd_open(raw));
  }
  errno = 0;
  EXPECT_FALSE(fd_open(raw));
  EXPECT_EQ(errno, EBADF);
  const UniqueFd empty;
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.get(), -1);
}

}  // namespace
}  // namespace gpufeed
