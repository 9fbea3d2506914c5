// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11): a
// counter-based generator, so element i of a random tensor is a pure function of (seed, counter)
// and any thread computes its own draws. Host and device code share it (tests/cpp/test_philox.cpp
// checks the published known-answer vectors on the host).
#pragma once
#include <cstdint>

#include "kernels/host_device.h"

namespace ampjit::philox {

struct Block {
  uint32_t v[4];
};

AMPJIT_HOST_DEVICE uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
}

// Ten rounds of Philox4x32 on `counter` with the 64-bit key.
AMPJIT_HOST_DEVICE Block philox4x32_10(Block counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  Block c = counter;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = mulhilo(kM0, c.v[0], &hi0);
    const uint32_t lo1 = mulhilo(kM1, c.v[2], &hi1);
    c = Block{{hi1 ^ c.v[1] ^ key0, lo1, hi0 ^ c.v[3] ^ key1, lo0}};
    key0 += kW0;
    key1 += kW1;
  }
  return c;
}

// The four draws of block `index` of the stream keyed by `seed`.
AMPJIT_HOST_DEVICE Block draws(uint64_t seed, uint64_t index) {
  return philox4x32_10(
      Block{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

}  // namespace ampjit::philox
