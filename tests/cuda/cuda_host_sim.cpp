// The scheduler of the CUDA host simulation (Note [Simulated CUDA threads] in cuda_host_sim.h),
// and the device properties the simulated kernels' launchers ask for.
#include "tests/cuda/cuda_host_sim.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "kernels/cuda/cuda_context.h"

namespace ampjit::cuda::host_sim {
namespace {

constexpr size_t kStackBytes = 256 * 1024;  // reserved, not committed: only touched pages count

size_t page_bytes() {
  static const size_t n = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return n;
}

// One simulated thread: its context and a stack above a guard page (an overflow faults).
struct Fiber {
  ucontext_t context;
  char* stack = nullptr;  // kStackBytes
  uint3 index;
  bool returned = false;

  Fiber() {
    void* m = mmap(nullptr, page_bytes() + kStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
    mprotect(m, page_bytes(), PROT_NONE);
    stack = static_cast<char*>(m) + page_bytes();
  }
  ~Fiber() { munmap(stack - page_bytes(), page_bytes() + kStackBytes); }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;
};

struct Scheduler {
  ucontext_t main;  // the launching code, resumed at every barrier and return
  std::vector<std::unique_ptr<Fiber>> fibers;  // ucontext_t points into itself: never moved
  Fiber* running = nullptr;
  void (*body)(const void*) = nullptr;
  const void* arg = nullptr;
  std::mt19937 order_rng{20240601};
  int multiprocessors = 4;
  Counters counters;
};

Scheduler& scheduler() {
  static Scheduler s;
  return s;
}

void fiber_main() {
  Scheduler& s = scheduler();
  s.body(s.arg);
  s.running->returned = true;
}  // uc_link resumes the scheduler

std::string dims_str(dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

// The configurations cudaLaunchKernel rejects (compute capability 8.0 and 9.0 limits).
void check_configuration(dim3 grid, dim3 block) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  const bool ok = grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 0x7fffffffu &&
                  grid.y <= 65535 && grid.z <= 65535 && threads >= 1 && threads <= 1024 &&
                  block.x <= 1024 && block.y <= 1024 && block.z <= 64;
  if (!ok)
    throw std::logic_error("invalid launch configuration: grid " + dims_str(grid) + ", block " +
                           dims_str(block));
}

// Runs the threads of block blockIdx from barrier to barrier (Note [Simulated CUDA threads]).
void run_block(Scheduler& s, unsigned threads) {
  const dim3 b = detail::block_dim;
  for (unsigned t = 0; t < threads; ++t) {
    Fiber& f = *s.fibers[t];
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &s.main;
    makecontext(&f.context, fiber_main, 0);
    f.index = {t % b.x, t / b.x % b.y, t / (b.x * b.y)};
    f.returned = false;
  }
  std::vector<unsigned> order(threads);
  std::iota(order.begin(), order.end(), 0u);
  for (;;) {
    std::shuffle(order.begin(), order.end(), s.order_rng);
    unsigned waiting = 0, returned = 0;
    for (unsigned t : order) {
      Fiber& f = *s.fibers[t];
      if (f.returned) continue;
      s.running = &f;
      detail::thread_idx = f.index;
      swapcontext(&s.main, &f.context);
      ++(f.returned ? returned : waiting);
    }
    s.running = nullptr;
    if (waiting == 0) return;
    if (returned > 0)
      throw std::logic_error("__syncthreads() reached by " + std::to_string(waiting) + " of the " +
                             std::to_string(threads) + " threads of block " +
                             dims_str(detail::block_idx) + "; the others returned");
  }
}

}  // namespace

namespace detail {

void run_grid(dim3 grid, dim3 block, void (*body)(const void*), const void* arg) {
  check_configuration(grid, block);
  Scheduler& s = scheduler();
  const unsigned threads = block.x * block.y * block.z;
  while (s.fibers.size() < threads) s.fibers.push_back(std::make_unique<Fiber>());
  s.body = body;
  s.arg = arg;
  grid_dim = grid;
  block_dim = block;
  ++s.counters.launches;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        block_idx = {x, y, z};
        run_block(s, threads);
        ++s.counters.blocks;
      }
}

}  // namespace detail

void set_multiprocessor_count(int n) {
  scheduler().multiprocessors = n;
}

const Counters& counters() {
  return scheduler().counters;
}

}  // namespace ampjit::cuda::host_sim

void __syncthreads() {
  using namespace ampjit::cuda::host_sim;
  Scheduler& s = scheduler();
  if (!s.running) throw std::logic_error("__syncthreads() outside a simulated kernel");
  swapcontext(&s.running->context, &s.main);
}

// What cuda_context.cpp answers on a device (this target does not link ampjit_cuda).
int ampjit::cuda::multiprocessor_count() {
  return ampjit::cuda::host_sim::scheduler().multiprocessors;
}
