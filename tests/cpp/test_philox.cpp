// The Philox4x32-10 generator behind CUDA's rand/randn (kernels/cuda/philox.h), checked on the
// host against the known-answer vectors published with Random123 (kat_vectors).
#include <gtest/gtest.h>

#include "kernels/cuda/philox.h"

namespace ampjit::philox {
namespace {

void expect_block(Block got, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  EXPECT_EQ(got.v[0], a);
  EXPECT_EQ(got.v[1], b);
  EXPECT_EQ(got.v[2], c);
  EXPECT_EQ(got.v[3], d);
}

TEST(Philox, KnownAnswerZeros) {
  expect_block(philox4x32_10(Block{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
               0x9b00dbd8u);
}

TEST(Philox, KnownAnswerOnes) {
  expect_block(philox4x32_10(Block{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                             0xffffffffu, 0xffffffffu),
               0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
}

TEST(Philox, KnownAnswerPi) {
  expect_block(philox4x32_10(Block{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                             0xa4093822u, 0x299f31d0u),
               0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(Philox, DrawsAreKeyedBySeedAndIndex) {
  const Block a = draws(42, 7), b = draws(42, 7), c = draws(43, 7), d = draws(42, 8);
  EXPECT_EQ(a.v[0], b.v[0]);
  EXPECT_NE(a.v[0], c.v[0]);
  EXPECT_NE(a.v[0], d.v[0]);
  // The index's high word reaches the counter.
  EXPECT_NE(draws(1, 5).v[0], draws(1, 5 + (uint64_t{1} << 32)).v[0]);
}

}  // namespace
}  // namespace ampjit::philox
