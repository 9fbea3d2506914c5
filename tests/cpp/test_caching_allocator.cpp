// The caching allocator (runtime/caching_allocator.h) over a fake device: size classes, reuse from
// the cache, per-device separation, statistics, empty_cache, the out-of-memory retry and message,
// bad frees, threads, and what the destructor gives back.
//
// The fake Backend hands out malloc'd blocks, refuses (returns nullptr) when a device's live raw
// bytes would exceed its capacity, and counts every raw call, so each test can check exactly what
// reached the device.
#include "runtime/caching_allocator.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/error.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;

// --- The fake device -----------------------------------------------------------------------------

struct FakeDevice {
  size_t capacity = std::numeric_limits<size_t>::max();
  size_t live_bytes = 0;
  uint64_t raw_allocs = 0;  // that succeeded
  uint64_t failed_raw_allocs = 0;
  uint64_t raw_frees = 0;
};

struct RawBlock {
  int device;
  size_t size;
};

struct FakeBackendState {
  std::mutex mutex;
  std::map<int, FakeDevice> devices;
  std::unordered_map<void*, RawBlock> blocks;  // malloc'd and not yet raw-freed
  size_t total_memory = 0;                     // what total_memory() reports, for every device
  bool raw_alloc_throws = false;               // a failure other than out of memory
};

std::unique_ptr<FakeBackendState> fake;  // fresh for each test (CachingAllocatorTest::SetUp)

void* fake_raw_alloc(size_t nbytes, int device) {
  std::lock_guard lock(fake->mutex);
  if (fake->raw_alloc_throws) throw Error("fake device: launch failure");
  FakeDevice& state = fake->devices[device];
  if (nbytes > state.capacity || state.live_bytes > state.capacity - nbytes) {
    ++state.failed_raw_allocs;
    return nullptr;
  }
  void* ptr = std::malloc(nbytes);
  fake->blocks.emplace(ptr, RawBlock{device, nbytes});
  state.live_bytes += nbytes;
  ++state.raw_allocs;
  return ptr;
}

void fake_raw_free(void* ptr, int device) {
  std::lock_guard lock(fake->mutex);
  auto found = fake->blocks.find(ptr);
  if (found == fake->blocks.end()) {
    ADD_FAILURE() << "raw_free of a pointer the fake device did not allocate";
    return;
  }
  EXPECT_EQ(found->second.device, device) << "raw_free on the wrong device";
  FakeDevice& state = fake->devices[found->second.device];
  state.live_bytes -= found->second.size;
  ++state.raw_frees;
  std::free(ptr);
  fake->blocks.erase(found);
}

size_t fake_total_memory(int) {
  std::lock_guard lock(fake->mutex);
  return fake->total_memory;
}

class CachingAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override { fake = std::make_unique<FakeBackendState>(); }
  void TearDown() override {
    // Blocks a test left live (on purpose, or because it failed half-way).
    for (auto& [ptr, block] : fake->blocks) std::free(ptr);
    fake.reset();
  }

  static CachingAllocator::Backend fake_backend() {
    return {"CUDA", fake_raw_alloc, fake_raw_free, fake_total_memory};
  }
  static FakeDevice device(int index) {
    std::lock_guard lock(fake->mutex);
    return fake->devices[index];
  }
  static void set_capacity(int index, size_t bytes) {
    std::lock_guard lock(fake->mutex);
    fake->devices[index].capacity = bytes;
  }
};

// The message of the OutOfMemoryError that allocate(nbytes, device) throws ("" if it throws none).
std::string out_of_memory_message(CachingAllocator& allocator, size_t nbytes, int device) {
  try {
    allocator.allocate(nbytes, device);
  } catch (const OutOfMemoryError& e) {
    return e.what();
  }
  return "";
}

// --- Size classes (Note [Size classes]) ----------------------------------------------------------

TEST(CachingAllocatorRoundSize, Classes) {
  using A = CachingAllocator;
  EXPECT_EQ(A::round_size(0), 512u);
  EXPECT_EQ(A::round_size(1), 512u);
  EXPECT_EQ(A::round_size(511), 512u);
  EXPECT_EQ(A::round_size(512), 512u);
  // 512..1024 in steps of 128.
  EXPECT_EQ(A::round_size(513), 640u);
  EXPECT_EQ(A::round_size(640), 640u);
  EXPECT_EQ(A::round_size(641), 768u);
  EXPECT_EQ(A::round_size(769), 896u);
  EXPECT_EQ(A::round_size(897), 1024u);
  EXPECT_EQ(A::round_size(1024), 1024u);
  // 1024..2048 in steps of 256, and so on up.
  EXPECT_EQ(A::round_size(1025), 1280u);
  EXPECT_EQ(A::round_size(1000 * 1000), 1024u * 1024);
  EXPECT_EQ(A::round_size(MiB), MiB);
  EXPECT_EQ(A::round_size(MiB + 1), MiB + MiB / 4);
  EXPECT_EQ(A::round_size(3 * MiB / 2), 3 * MiB / 2);
  EXPECT_EQ(A::round_size(2 * GiB), 2 * GiB);
  EXPECT_EQ(A::round_size(2 * GiB + 1), 2 * GiB + GiB / 2);
  // The top of size_t: 7/8 of 2^64 is the last class; above it no class fits.
  EXPECT_EQ(A::kLargestSizeClass, size_t{7} << 61);
  EXPECT_EQ(A::round_size(A::kLargestSizeClass - 1), A::kLargestSizeClass);
  EXPECT_EQ(A::round_size(A::kLargestSizeClass), A::kLargestSizeClass);
  EXPECT_THROW(A::round_size(A::kLargestSizeClass + 1), ValueError);
  EXPECT_THROW(A::round_size(std::numeric_limits<size_t>::max()), ValueError);
}

TEST(CachingAllocatorRoundSize, FourClassesPerDoubling) {
  for (int k = 9; k < 40; ++k) {
    const size_t low = size_t{1} << k;  // the classes in (low, 2 low]
    const size_t quarter = low / 4;
    const std::set<size_t> expected = {5 * quarter, 6 * quarter, 7 * quarter, 8 * quarter};
    std::set<size_t> seen;
    for (size_t n = low + 1; n <= 2 * low; n += std::max<size_t>(1, low / 64)) {
      seen.insert(CachingAllocator::round_size(n));
    }
    for (size_t boundary : expected) {  // each class holds its own size and the byte below it
      seen.insert(CachingAllocator::round_size(boundary));
      seen.insert(CachingAllocator::round_size(boundary - 1));
    }
    EXPECT_EQ(seen, expected) << "in (2^" << k << ", 2^" << k + 1 << "]";
  }
}

TEST(CachingAllocatorRoundSize, WasteAtMostAQuarter) {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= (size_t{1} << 24); n += 1 + n / 4096) sizes.push_back(n);
  for (int k = 1; k <= 24; ++k) {
    for (size_t n = (size_t{1} << k) - 3; n <= (size_t{1} << k) + 3; ++n) sizes.push_back(n);
  }
  std::sort(sizes.begin(), sizes.end());
  size_t previous = 0;
  double worst_waste = 0;
  for (size_t n : sizes) {
    const size_t rounded = CachingAllocator::round_size(n);
    ASSERT_GE(rounded, n);
    ASSERT_GE(rounded, 512u);
    ASSERT_EQ(CachingAllocator::round_size(rounded), rounded) << n << ": not a class";
    ASSERT_GE(rounded, previous) << n << ": not monotonic";
    previous = rounded;
    if (n > 512) {
      ASSERT_LE(4 * (rounded - n), n) << n << " -> " << rounded << " wastes more than 25%";
      worst_waste = std::max(worst_waste, double(rounded - n) / double(n));
    }
  }
  EXPECT_GT(worst_waste, 0.24);  // the bound is tight: the classes are no finer than promised
}

// --- Reuse ---------------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, AllocateZeroReturnsNullptrAndCountsNothing) {
  CachingAllocator allocator(fake_backend());
  EXPECT_EQ(allocator.allocate(0, 0), nullptr);
  const CachingAllocator::Stats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_allocs, 0u);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_EQ(device(0).raw_allocs, 0u);
}

TEST_F(CachingAllocatorTest, ReusesAFreedBlockOfTheSameClass) {
  CachingAllocator allocator(fake_backend());
  void* first = allocator.allocate(1000, 0);  // class 1024
  ASSERT_NE(first, nullptr);
  allocator.free(first);
  void* second = allocator.allocate(900, 0);  // also class 1024
  EXPECT_EQ(second, first);
  EXPECT_EQ(allocator.stats(0).num_cache_hits, 1u);
  EXPECT_EQ(allocator.stats(0).num_raw_allocs, 1u);
  EXPECT_EQ(device(0).raw_allocs, 1u);
  allocator.free(second);
}

TEST_F(CachingAllocatorTest, DoesNotReuseAcrossClasses) {
  CachingAllocator allocator(fake_backend());
  void* block_1024 = allocator.allocate(1024, 0);
  allocator.free(block_1024);
  void* block_1280 = allocator.allocate(1025, 0);  // one byte more: the next class
  void* block_512 = allocator.allocate(512, 0);    // smaller: no splitting of the cached 1024
  EXPECT_NE(block_1280, block_1024);
  EXPECT_NE(block_512, block_1024);
  EXPECT_EQ(allocator.stats(0).num_cache_hits, 0u);
  EXPECT_EQ(device(0).raw_allocs, 3u);
  EXPECT_EQ(allocator.stats(0).reserved_bytes, 1024u + 1280u + 512u);
  allocator.free(block_1280);
  allocator.free(block_512);
}

TEST_F(CachingAllocatorTest, DevicesHaveSeparateCachesAndStats) {
  CachingAllocator allocator(fake_backend());
  void* on_device_0 = allocator.allocate(1024, 0);
  allocator.free(on_device_0);
  void* on_device_1 = allocator.allocate(1024, 1);
  EXPECT_NE(on_device_1, on_device_0);
  EXPECT_EQ(device(0).raw_allocs, 1u);
  EXPECT_EQ(device(1).raw_allocs, 1u);
  EXPECT_EQ(allocator.stats(1).num_cache_hits, 0u);
  EXPECT_EQ(allocator.stats(0).allocated_bytes, 0u);
  EXPECT_EQ(allocator.stats(0).reserved_bytes, 1024u);
  EXPECT_EQ(allocator.stats(1).allocated_bytes, 1024u);
  EXPECT_EQ(allocator.stats(1).reserved_bytes, 1024u);
  // Device 0's cached block still serves device 0.
  EXPECT_EQ(allocator.allocate(1024, 0), on_device_0);
  EXPECT_EQ(allocator.stats(0).num_cache_hits, 1u);
  allocator.free(on_device_0);
  allocator.free(on_device_1);  // the fake checks each block is raw-freed on its own device
}

// --- Statistics ----------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, StatsAcrossASequence) {
  CachingAllocator allocator(fake_backend());
  auto expect_stats = [&](size_t allocated, size_t reserved, size_t peak, size_t requested,
                          uint64_t allocs, uint64_t hits, uint64_t raw_allocs) {
    const CachingAllocator::Stats stats = allocator.stats(0);
    EXPECT_EQ(stats.allocated_bytes, allocated);
    EXPECT_EQ(stats.reserved_bytes, reserved);
    EXPECT_EQ(stats.peak_allocated_bytes, peak);
    EXPECT_EQ(stats.requested_bytes, requested);
    EXPECT_EQ(stats.num_allocs, allocs);
    EXPECT_EQ(stats.num_cache_hits, hits);
    EXPECT_EQ(stats.num_raw_allocs, raw_allocs);
    EXPECT_EQ(stats.num_ooms, 0u);
    EXPECT_EQ(device(0).live_bytes, reserved);
  };
  void* a = allocator.allocate(1000, 0);  // 1024
  void* b = allocator.allocate(3000, 0);  // 3072
  void* c = allocator.allocate(100, 0);   // 512
  expect_stats(4608, 4608, 4608, 4100, 3, 0, 3);
  allocator.free(b);
  expect_stats(1536, 4608, 4608, 1100, 3, 0, 3);
  void* d = allocator.allocate(2900, 0);  // 3072, from the cache
  EXPECT_EQ(d, b);
  expect_stats(4608, 4608, 4608, 4000, 4, 1, 3);
  allocator.free(a);
  allocator.free(c);
  expect_stats(3072, 4608, 4608, 2900, 4, 1, 3);
  allocator.reset_peak_stats(0);
  expect_stats(3072, 4608, 3072, 2900, 4, 1, 3);
  void* e = allocator.allocate(600, 0);  // 640: a new class
  expect_stats(3712, 5248, 3712, 3500, 5, 1, 4);
  allocator.free(d);
  allocator.free(e);
  expect_stats(0, 5248, 3712, 0, 5, 1, 4);
  // A device never used reads as zeros.
  EXPECT_EQ(allocator.stats(3).num_allocs, 0u);
  EXPECT_EQ(allocator.stats(3).reserved_bytes, 0u);
}

// --- empty_cache and the destructor --------------------------------------------------------------

TEST_F(CachingAllocatorTest, EmptyCacheReturnsOnlyFreeBlocks) {
  CachingAllocator allocator(fake_backend());
  void* freed_0 = allocator.allocate(1024, 0);
  void* live_0 = allocator.allocate(2048, 0);
  void* freed_1 = allocator.allocate(1024, 1);
  allocator.free(freed_0);
  allocator.free(freed_1);
  allocator.empty_cache();
  EXPECT_EQ(device(0).raw_frees, 1u);
  EXPECT_EQ(device(1).raw_frees, 1u);
  EXPECT_EQ(device(0).live_bytes, 2048u);
  EXPECT_EQ(device(1).live_bytes, 0u);
  EXPECT_EQ(allocator.stats(0).reserved_bytes, 2048u);
  EXPECT_EQ(allocator.stats(0).allocated_bytes, 2048u);
  EXPECT_EQ(allocator.stats(1).reserved_bytes, 0u);
  std::memset(live_0, 0x5a, 2048);  // still ours (ASan would catch a use after free)
  // The emptied class is allocated afresh; the live block goes to the cache when freed.
  void* again = allocator.allocate(1024, 0);
  EXPECT_EQ(device(0).raw_allocs, 3u);
  allocator.free(live_0);
  allocator.free(again);
  EXPECT_EQ(allocator.stats(0).reserved_bytes, 2048u + 1024u);
  EXPECT_EQ(device(0).raw_frees, 1u);
}

TEST_F(CachingAllocatorTest, DestructorReturnsCachedBlocks) {
  {
    CachingAllocator allocator(fake_backend());
    std::vector<void*> blocks;
    for (size_t size : {100, 1000, 1000, 5000, 70000})
      blocks.push_back(allocator.allocate(size, 0));
    blocks.push_back(allocator.allocate(1000, 2));
    for (void* block : blocks) allocator.free(block);
  }
  EXPECT_EQ(device(0).raw_allocs, 5u);
  EXPECT_EQ(device(0).raw_frees, 5u);
  EXPECT_EQ(device(2).raw_allocs, 1u);
  EXPECT_EQ(device(2).raw_frees, 1u);
  EXPECT_TRUE(fake->blocks.empty());
}

TEST_F(CachingAllocatorTest, DestructorLeavesLiveBlocksAlone) {
  void* still_live = nullptr;
  {
    CachingAllocator allocator(fake_backend());
    allocator.free(allocator.allocate(1000, 0));
    still_live = allocator.allocate(5000, 0);
  }
  EXPECT_EQ(device(0).raw_allocs, 2u);
  EXPECT_EQ(device(0).raw_frees, 1u);
  EXPECT_EQ(fake->blocks.count(still_live), 1u);  // TearDown frees it
}

// --- Out of memory -------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, OutOfMemoryFlushesTheDeviceCacheAndRetries) {
  set_capacity(0, 4096);
  CachingAllocator allocator(fake_backend());
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(allocator.allocate(1024, 0));
  for (void* block : blocks) allocator.free(block);  // device 0 is full of cached 1024s
  allocator.free(allocator.allocate(1024, 1));       // one cached block on device 1
  void* block_2048 = allocator.allocate(2048, 0);
  ASSERT_NE(block_2048, nullptr);
  EXPECT_EQ(device(0).failed_raw_allocs, 1u);
  EXPECT_EQ(device(0).raw_frees, 4u);
  EXPECT_EQ(device(0).raw_allocs, 5u);
  const CachingAllocator::Stats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_raw_allocs, 5u);
  EXPECT_EQ(stats.num_allocs, 5u);
  EXPECT_EQ(stats.reserved_bytes, 2048u);
  EXPECT_EQ(stats.allocated_bytes, 2048u);
  EXPECT_EQ(stats.num_ooms, 0u);
  // Only the failing device's cache went back.
  EXPECT_EQ(device(1).raw_frees, 0u);
  EXPECT_EQ(allocator.stats(1).reserved_bytes, 1024u);
  allocator.free(block_2048);
}

TEST_F(CachingAllocatorTest, ImpossibleAllocationThrowsOutOfMemoryError) {
  fake->total_memory = GiB;
  set_capacity(0, 4 * MiB);
  CachingAllocator allocator(fake_backend());
  void* live = allocator.allocate(3 * MiB / 2, 0);
  allocator.free(allocator.allocate(MiB, 0));  // cached, and flushed by the failed attempt
  EXPECT_EQ(out_of_memory_message(allocator, 2 * GiB, 0),
            "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 1.00 GiB total capacity; "
            "1.50 MiB already allocated; 1.50 MiB reserved in total by ampjit)");
  EXPECT_EQ(device(0).failed_raw_allocs, 2u);  // the attempt and its one retry
  EXPECT_EQ(device(0).raw_frees, 1u);
  CachingAllocator::Stats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_ooms, 1u);
  EXPECT_EQ(stats.num_allocs, 2u);
  EXPECT_EQ(stats.allocated_bytes, 3 * MiB / 2);
  EXPECT_EQ(stats.requested_bytes, 3 * MiB / 2);
  EXPECT_EQ(stats.reserved_bytes, 3 * MiB / 2);
  EXPECT_EQ(device(0).live_bytes, stats.reserved_bytes);
  // Still fully usable.
  void* fits = allocator.allocate(2 * MiB, 0);
  ASSERT_NE(fits, nullptr);
  std::memset(fits, 0, 2 * MiB);
  allocator.free(fits);
  allocator.free(live);
  stats = allocator.stats(0);
  EXPECT_EQ(stats.num_allocs, 3u);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_EQ(stats.requested_bytes, 0u);
  EXPECT_EQ(stats.reserved_bytes, 3 * MiB / 2 + 2 * MiB);
  EXPECT_EQ(stats.peak_allocated_bytes, 3 * MiB / 2 + 2 * MiB);
}

TEST_F(CachingAllocatorTest, OutOfMemoryMessageUnitsAndUnknownCapacity) {
  set_capacity(1, 0);  // and total_memory reports 0: no capacity clause
  CachingAllocator allocator(fake_backend());
  EXPECT_EQ(out_of_memory_message(allocator, 100, 1),
            "CUDA out of memory. Tried to allocate 512 bytes (GPU 1; 0 bytes already allocated; "
            "0 bytes reserved in total by ampjit)");
  EXPECT_EQ(out_of_memory_message(allocator, 3000, 1),
            "CUDA out of memory. Tried to allocate 3.00 KiB (GPU 1; 0 bytes already allocated; "
            "0 bytes reserved in total by ampjit)");
  // Beyond the largest size class: refused without asking the device.
  EXPECT_THAT(out_of_memory_message(allocator, std::numeric_limits<size_t>::max(), 1),
              StartsWith("CUDA out of memory. Tried to allocate 17179869184.00 GiB (GPU 1; "));
  EXPECT_EQ(device(1).failed_raw_allocs, 4u);
  EXPECT_EQ(allocator.stats(1).num_ooms, 3u);
  EXPECT_EQ(allocator.stats(1).num_allocs, 0u);
}

TEST_F(CachingAllocatorTest, OtherBackendErrorsPropagateUncounted) {
  CachingAllocator allocator(fake_backend());
  fake->raw_alloc_throws = true;
  try {
    allocator.allocate(1024, 0);
    ADD_FAILURE() << "no exception";
  } catch (const OutOfMemoryError&) {
    ADD_FAILURE() << "a launch failure reported as out of memory";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fake device: launch failure");
  }
  fake->raw_alloc_throws = false;
  CachingAllocator::Stats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_allocs, 0u);
  EXPECT_EQ(stats.num_ooms, 0u);
  EXPECT_EQ(stats.reserved_bytes, 0u);
  allocator.free(allocator.allocate(1024, 0));
  EXPECT_EQ(allocator.stats(0).num_allocs, 1u);
}

// --- Bad frees -----------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, FreeOfNullptrIsANoOp) {
  CachingAllocator allocator(fake_backend());
  void* live = allocator.allocate(1024, 0);
  EXPECT_NO_THROW(allocator.free(nullptr));
  EXPECT_EQ(allocator.stats(0).allocated_bytes, 1024u);
  EXPECT_EQ(allocator.stats(0).reserved_bytes, 1024u);
  allocator.free(live);
}

TEST_F(CachingAllocatorTest, FreeOfAnUnknownPointerThrows) {
  CachingAllocator allocator(fake_backend());
  int not_allocated = 0;
  try {
    allocator.free(&not_allocated);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUDA caching allocator: free of a pointer this allocator did "
                                    "not allocate"));
  }
  // A second free of the same block is an unknown pointer too, and does not cache it twice.
  void* block = allocator.allocate(1024, 0);
  allocator.free(block);
  EXPECT_THROW(allocator.free(block), Error);
  void* first = allocator.allocate(1024, 0);
  void* second = allocator.allocate(1024, 0);
  EXPECT_NE(first, second);
  EXPECT_EQ(device(0).raw_allocs, 2u);
  allocator.free(first);
  allocator.free(second);
}

TEST_F(CachingAllocatorTest, IncompleteBackendIsRejected) {
  CachingAllocator::Backend backend = fake_backend();
  backend.total_memory = nullptr;
  EXPECT_THROW(CachingAllocator{backend}, Error);
}

// --- Threads -------------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, ManyThreadsEndWithNothingAllocated) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 4000;
  constexpr size_t kSizes[] = {1, 100, 700, 1000, 1024, 3000, 5000, 20000, 70000};
  CachingAllocator allocator(fake_backend());
  std::vector<uint64_t> allocations(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      const int dev = t % 2;
      const auto tag = static_cast<unsigned char>(t + 1);
      struct Live {
        unsigned char* data;
        size_t size;
      };
      std::vector<Live> live;
      auto release = [&](Live block) {
        // Another thread writing into this block (a block handed out twice) shows up here.
        EXPECT_EQ(block.data[0], tag);
        EXPECT_EQ(block.data[block.size - 1], tag);
        allocator.free(block.data);
      };
      for (int i = 0; i < kIterations; ++i) {
        if (live.size() < 16 && (live.empty() || rng() % 2 == 0)) {
          const size_t size = kSizes[rng() % std::size(kSizes)];
          auto* data = static_cast<unsigned char*>(allocator.allocate(size, dev));
          std::memset(data, tag, size);
          live.push_back({data, size});
          ++allocations[t];
        } else {
          const size_t index = rng() % live.size();
          release(live[index]);
          live[index] = live.back();
          live.pop_back();
        }
        if (i % 500 == 0) {
          if (t == 0) allocator.empty_cache();
          const CachingAllocator::Stats stats = allocator.stats(dev);
          EXPECT_LE(stats.allocated_bytes, stats.reserved_bytes);
        }
      }
      for (Live block : live) release(block);
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t total_allocations = 0;
  for (uint64_t n : allocations) total_allocations += n;
  const CachingAllocator::Stats stats_0 = allocator.stats(0), stats_1 = allocator.stats(1);
  EXPECT_EQ(stats_0.allocated_bytes, 0u);
  EXPECT_EQ(stats_1.allocated_bytes, 0u);
  EXPECT_EQ(stats_0.requested_bytes, 0u);
  EXPECT_EQ(stats_1.requested_bytes, 0u);
  EXPECT_EQ(stats_0.num_allocs + stats_1.num_allocs, total_allocations);
  EXPECT_GT(stats_0.num_cache_hits + stats_1.num_cache_hits, 0u);
  EXPECT_EQ(stats_0.reserved_bytes, device(0).live_bytes);
  EXPECT_EQ(stats_1.reserved_bytes, device(1).live_bytes);
  EXPECT_EQ(stats_0.num_raw_allocs, device(0).raw_allocs);
  EXPECT_EQ(stats_1.num_raw_allocs, device(1).raw_allocs);
}

}  // namespace
}  // namespace ampjit
