#pragma once
// Counter-based random numbers: a value is a pure function of (seed, stream, counter), so results
// do not depend on the backend, the thread count or the order in which work is scheduled, and a
// restarted run draws exactly what the uninterrupted run would have.
#include "compat/kokkos_compat.hpp"

#include <cstdint>

namespace hayate::util {

// SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 64 random bits for (seed, stream, counter). Streams separate uses (per particle, per site,
// per purpose); counters separate draws within a stream (per step, per component).
KOKKOS_INLINE_FUNCTION std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream,
                                                 std::uint64_t counter) {
  std::uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ull);
  h = mix64(h ^ (stream * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
  return mix64(h ^ (counter * 0xaf251af3b0f025b5ull + 0x2545f4914f6cdd1dull));
}

// Uniform in [0, 1) with 53 random bits.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t stream,
                                        std::uint64_t counter) {
  return double(random_bits(seed, stream, counter) >> 11) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from two uniforms drawn at counters 2c and 2c+1.
KOKKOS_INLINE_FUNCTION double normal01(std::uint64_t seed, std::uint64_t stream,
                                       std::uint64_t counter) {
  const double u1 = 1.0 - uniform01(seed, stream, 2 * counter);  // (0, 1]: log is finite
  const double u2 = uniform01(seed, stream, 2 * counter + 1);
  return compat::sqrt(-2.0 * compat::log(u1)) * compat::cos(6.283185307179586 * u2);
}

}  // namespace hayate::util
