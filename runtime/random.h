// Random numbers: one generator per device type, seeded by manual_seed; deterministic per seed.
//
// Note [torch's CPU generator]
// The engine is torch's: MT19937, seeded as torch seeds it (its 32-bit seed, Knuth's initializer),
// so that ampjit.manual_seed(s) gives the numbers torch.manual_seed(s) gives (users compare runs
// across implementations by seed). On it, torch's transforms: a 32-bit draw (random()), a 64-bit
// draw made of two (the first the high half: random64()), a uniform of D digits as
// (draw & (2^D - 1)) * 2^-D (24 for float, 53 for double), and a double normal by Box-Muller on two
// uniform doubles, r = sqrt(-2 log(1 - u2)), theta = 2 pi u1, returning r cos(theta) and keeping
// r sin(theta) for the next call. The kernels (kernels/cpu/creation.cpp) draw as torch's do.
// Device generators are counter-based: reserve() hands a kernel its (seed, offset).
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/device.h"

namespace ampjit {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) { set_seed(seed); }
  void set_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  uint32_t random();    // torch's random(): one MT19937 output
  uint64_t random64();  // torch's random64(): two outputs, the first the high half
  uint64_t next_u64() { return random64(); }
  double next_double();  // uniform in [0, 1), 53 bits (torch's uniform_real_distribution<double>)
  float next_float();    // uniform in [0, 1), 24 bits (torch's uniform_real_distribution<float>)
  // uniform in [0, 1) with `digits` bits (Half 11, BFloat16 8), computed in float as torch does
  float next_uniform_digits(int digits);
  double next_normal();  // standard normal (torch's normal_distribution<double>)
  std::mutex& mutex() { return mu_; }
  // Reserves `n` draws for a device kernel and returns its (seed, offset) pair.
  uint64_t reserve(uint64_t n);
  // The whole state as bytes, and back (torch.get_rng_state / set_rng_state; ampjit's layout, not
  // torch's): what activation checkpointing replays dropout with. set_state checks the size.
  std::vector<uint8_t> state() const;
  void set_state(const std::vector<uint8_t>& bytes);

 private:
  uint32_t state_[624];
  int left_ = 1;
  int next_ = 0;
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
  bool has_spare_ = false;
  double spare_ = 0;
  std::mutex mu_;
};

Generator& default_generator(DeviceType type = DeviceType::CPU);
// torch.manual_seed: seeds every device's generator.
void manual_seed(uint64_t seed);

}  // namespace ampjit
