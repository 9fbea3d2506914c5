// Random numbers: one generator per device type, seeded by manual_seed; deterministic per seed.
// The engine is xoshiro256** (seeded through splitmix64); normals come from Box-Muller.
#pragma once
#include <cstdint>
#include <mutex>

#include "runtime/device.h"

namespace ampjit {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) { set_seed(seed); }
  void set_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  uint64_t next_u64();
  double next_double();  // uniform in [0, 1)
  float next_float();    // uniform in [0, 1)
  double next_normal();  // standard normal
  std::mutex& mutex() { return mu_; }
  // Reserves `n` draws for a device kernel and returns its (seed, offset) pair.
  uint64_t reserve(uint64_t n);

 private:
  uint64_t s_[4];
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
