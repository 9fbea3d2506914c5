// The random engine (see random.h).
#include "runtime/random.h"

#include <cmath>
#include <cstring>

#include "runtime/error.h"

namespace ampjit {

// Note [torch's CPU generator] (random.h).
void Generator::set_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
  state_[0] = static_cast<uint32_t>(seed & 0xffffffffu);
  for (int j = 1; j < 624; ++j)
    state_[j] = 1812433253u * (state_[j - 1] ^ (state_[j - 1] >> 30)) + static_cast<uint32_t>(j);
  left_ = 1;
  next_ = 0;
  has_spare_ = false;
}

std::vector<uint8_t> Generator::state() const {
  std::vector<uint8_t> out;
  auto put = [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  put(state_, sizeof(state_));
  put(&left_, sizeof(left_));
  put(&next_, sizeof(next_));
  put(&seed_, sizeof(seed_));
  put(&offset_, sizeof(offset_));
  put(&has_spare_, sizeof(has_spare_));
  put(&spare_, sizeof(spare_));
  return out;
}

void Generator::set_state(const std::vector<uint8_t>& bytes) {
  const size_t want = sizeof(state_) + sizeof(left_) + sizeof(next_) + sizeof(seed_) +
                      sizeof(offset_) + sizeof(has_spare_) + sizeof(spare_);
  AMPJIT_CHECK(bytes.size() == want,
               "set_rng_state: expected a state of {} bytes (from get_rng_state), got {}", want,
               bytes.size());
  std::lock_guard<std::mutex> lock(mu_);
  size_t pos = 0;
  auto get = [&](void* p, size_t n) {
    std::memcpy(p, bytes.data() + pos, n);
    pos += n;
  };
  get(state_, sizeof(state_));
  get(&left_, sizeof(left_));
  get(&next_, sizeof(next_));
  get(&seed_, sizeof(seed_));
  get(&offset_, sizeof(offset_));
  get(&has_spare_, sizeof(has_spare_));
  get(&spare_, sizeof(spare_));
}

uint32_t Generator::random() {
  constexpr int kN = 624, kM = 397;
  constexpr uint32_t kMatrixA = 0x9908b0dfu, kUpper = 0x80000000u, kLower = 0x7fffffffu;
  if (--left_ <= 0) {  // regenerate the state
    const auto twist = [](uint32_t u, uint32_t v) {
      return (((u & kUpper) | (v & kLower)) >> 1) ^ ((v & 1u) ? kMatrixA : 0u);
    };
    for (int i = 0; i < kN - kM; ++i) state_[i] = state_[i + kM] ^ twist(state_[i], state_[i + 1]);
    for (int i = kN - kM; i < kN - 1; ++i)
      state_[i] = state_[i + kM - kN] ^ twist(state_[i], state_[i + 1]);
    state_[kN - 1] = state_[kM - 1] ^ twist(state_[kN - 1], state_[0]);
    left_ = kN;
    next_ = 0;
  }
  uint32_t y = state_[next_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

uint64_t Generator::random64() {
  const uint64_t hi = random();
  const uint64_t lo = random();
  return (hi << 32) | lo;
}

double Generator::next_double() {
  return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * 0x1p-53;
}
float Generator::next_float() {
  // torch computes it in its accumulate type (double), then stores a float: exact for 24 bits
  return static_cast<float>(static_cast<double>(random() & ((1u << 24) - 1)) * 0x1p-24);
}
float Generator::next_uniform_digits(int digits) {
  const uint32_t mask = (1u << digits) - 1;
  return static_cast<float>(random() & mask) * (1.0f / static_cast<float>(1u << digits));
}

double Generator::next_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = next_double();
  const double u2 = next_double();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * M_PI * u1;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
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
