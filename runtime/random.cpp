// The random engine (see random.h).
#include "runtime/random.h"

#include <cmath>

namespace ampjit {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

void Generator::set_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
  has_spare_ = false;
}

uint64_t Generator::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::next_double() {
  return static_cast<double>(next_u64() >> 11) * 0x1p-53;
}
float Generator::next_float() {
  return static_cast<float>(next_u64() >> 40) * 0x1p-24f;
}

double Generator::next_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1;
  do u1 = next_double();
  while (u1 <= 0.0);
  const double u2 = next_double();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(2.0 * M_PI * u2);
  has_spare_ = true;
  return r * std::cos(2.0 * M_PI * u2);
}

uint64_t Generator::reserve(uint64_t n) {
  const uint64_t o = offset_;
  offset_ += n;
  return o;
}

Generator& default_generator(DeviceType type) {
  static Generator gens[kNumDeviceTypes];
  return gens[static_cast<int>(type)];
}

void manual_seed(uint64_t seed) {
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    Generator& g = default_generator(static_cast<DeviceType>(i));
    std::lock_guard<std::mutex> lock(g.mutex());
    g.set_seed(seed);
  }
}

}  // namespace ampjit
