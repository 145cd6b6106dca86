#include "gpufeed/base/spare_buffers.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpufeed {
namespace {

TEST(SpareBuffers, ABufferGivenBackIsTakenAgainByARequestItFits) {
  SpareBuffers spares(1 << 20);
  bool recycled = true;
  SpareBuffers::Buffer a = spares.take(1000, &recycled);
  EXPECT_FALSE(recycled);
  EXPECT_EQ(a.capacity, 1000u);
  const std::uint8_t* first = a.bytes.get();
  spares.give(std::move(a));
  EXPECT_EQ(spares.held(), 1000u);
  // 500 would waste half of it: a new buffer.
  SpareBuffers::Buffer small = spares.take(500, &recycled);
  EXPECT_FALSE(recycled);
  SpareBuffers::Buffer b = spares.take(900, &recycled);
  EXPECT_TRUE(recycled);
  EXPECT_EQ(b.bytes.get(), first);
  EXPECT_EQ(b.capacity, 1000u);
  EXPECT_EQ(spares.held(), 0u);
}

TEST(SpareBuffers, WhatIsGivenBeyondTheLimitIsFreed) {
  SpareBuffers spares(1500);
  spares.give(spares.take(1000));
  spares.give(spares.take(1000));  // the first is taken again: one buffer
  spares.give({std::make_unique<std::uint8_t[]>(1000), 1000});
  EXPECT_EQ(spares.held(), 1000u);
  spares.clear();
  EXPECT_EQ(spares.held(), 0u);
}

TEST(SpareBuffers, ASharedBufferComesBackWithItsLastOwner) {
  auto spares = std::make_shared<SpareBuffers>(1 << 20);
  std::shared_ptr<std::uint8_t[]> a = spares->take_shared(4096);
  const std::uint8_t* bytes = a.get();
  std::shared_ptr<std::uint8_t[]> b = a;
  a.reset();
  EXPECT_EQ(spares->held(), 0u);
  b.reset();
  EXPECT_EQ(spares->held(), 4096u);
  EXPECT_EQ(spares->take_shared(4096).get(), bytes);
  // One that outlives its spares is freed (ASan checks it is freed once).
  std::shared_ptr<std::uint8_t[]> orphan = spares->take_shared(4096);
  spares.reset();
  orphan.reset();
}

TEST(SpareBuffers, StockAddsMappedBuffersUpToItsTarget) {
  SpareBuffers spares(1 << 20);
  spares.stock(8192, 16384);
  spares.stock(8192, 16384);
  spares.stock(8192, 16384);  // at the target: nothing more
  EXPECT_EQ(spares.held(), 16384u);
  bool recycled = false;
  SpareBuffers::Buffer b = spares.take(8192, &recycled);
  EXPECT_TRUE(recycled);
}

TEST(SpareBuffers, AStockedBufferHasEveryPageMappedIn) {
  // Larger than glibc's largest mmap threshold: a fresh mapping, no page of it resident yet.
  constexpr std::size_t kBytes = std::size_t{40} << 20;
  SpareBuffers spares(kBytes);
  spares.stock(kBytes, kBytes);
  SpareBuffers::Buffer b = spares.take(kBytes);
  const long page = sysconf(_SC_PAGESIZE);
  const auto address = reinterpret_cast<std::uintptr_t>(b.bytes.get());
  const std::uintptr_t first = (address + page - 1) / page * page;
  const std::size_t pages = (address + kBytes - first) / page;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(mincore(reinterpret_cast<void*>(first), pages * page, resident.data()), 0);
  EXPECT_EQ(std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }),
            static_cast<std::ptrdiff_t>(pages));
}

}  // namespace
}  // namespace gpufeed
