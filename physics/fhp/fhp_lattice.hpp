#pragma once
// The hexagonal lattice on a rectangular array. Site (x, y) sits at X = x + (y odd)/2,
// Y = y sqrt(3)/2, so odd rows are shifted right by half a spacing; with an even number of rows
// the lattice is periodic in both directions. Sites are stored in row-major words of 64 bits:
// the byte layout packs 8 sites per word (one byte each), the bit layout 64 sites per word and
// direction. Streaming is a pull: the particle arriving along c_i comes from the site - c_i,
// which is a neighbour in row y + source_dy(i) and column x + source_dx(i, row parity); in a
// word this is a lane shift across the word boundary.
#include "util/random.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace hayate::fhp {

inline constexpr double sqrt3_2 = 0.8660254037844386;

// Row offset of the site a particle moving along c_i comes from.
KOKKOS_INLINE_FUNCTION constexpr int source_dy(int i) {
  return i == 1 || i == 2 ? -1 : i == 4 || i == 5 ? 1 : 0;
}
// Column offset of that site for a destination row of parity `odd`.
KOKKOS_INLINE_FUNCTION constexpr int source_dx(int i, int odd) {
  return i == 0 ? -1 : i == 3 ? 1 : i == 1 || i == 5 ? (odd ? 0 : -1) : (odd ? 1 : 0);
}

// Lanes of width L (8: byte layout, 1: bit layout); lane j of a word is site x0 + j. Returns,
// for every lane, the value at the site dx columns away, taking lanes across the boundary from
// the left (l) or right (r) neighbour word.
template <int L>
KOKKOS_INLINE_FUNCTION std::uint64_t shifted(std::uint64_t l, std::uint64_t c, std::uint64_t r,
                                             int dx) {
  return dx < 0 ? (c << L) | (l >> (64 - L)) : dx > 0 ? (c >> L) | (r << (64 - L)) : c;
}

// Set bits of a word, in the same arithmetic on every backend (sums of bit pairs, nibbles, then
// bytes); it counts particles for the totals, which are off the step path.
KOKKOS_INLINE_FUNCTION int popcount64(std::uint64_t v) {
  v -= (v >> 1) & 0x5555555555555555ull;
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return int((v * 0x0101010101010101ull) >> 56);
}

// Random bits are keyed by 64-site words, (row y, columns 64w..64w+63), so the byte and bit
// kernels, any backend and any thread count draw the same bit for a site: bit (x % 64) of the
// word (seed, y * random_words_per_row + x / 64, step).
KOKKOS_INLINE_FUNCTION std::uint64_t chirality_bits(std::uint64_t seed, std::int64_t step,
                                                    std::int64_t word) {
  return util::random_bits(seed, std::uint64_t(word), 2 * std::uint64_t(step));
}

// One bit per site, set with probability q / 65536 exactly: a bit-sliced comparison of a
// 16-bit uniform per lane against q, most significant bit first.
inline constexpr std::uint32_t forcing_one = 65536;
KOKKOS_INLINE_FUNCTION std::uint64_t forcing_bits(std::uint64_t seed, std::int64_t step,
                                                  std::int64_t word, std::uint32_t q) {
  if (q == 0) return 0;
  if (q >= forcing_one) return ~std::uint64_t(0);
  const std::uint64_t key =
      util::random_bits(seed, std::uint64_t(word), 2 * std::uint64_t(step) + 1);
  std::uint64_t less = 0, equal = ~std::uint64_t(0);
  for (int b = 15; b >= 0; --b) {
    const std::uint64_t r = util::mix64(key + std::uint64_t(b + 1) * 0x9e3779b97f4a7c15ull);
    if ((q >> b) & 1u) {
      less |= equal & ~r;
      equal &= r;
    } else {
      equal &= ~r;
    }
  }
  return less;
}

struct LatticeShape {
  int nx = 0, ny = 0;
  std::int64_t sites() const { return std::int64_t(nx) * ny; }
  int random_words_per_row() const { return (nx + 63) / 64; }
};

// Sums over the lattice in exact integers: particles, x momentum in half units, y momentum in
// units of sqrt(3)/2.
struct Totals {
  std::int64_t mass = 0, px2 = 0, py = 0;
  double momentum_x() const { return 0.5 * double(px2); }
  double momentum_y() const { return sqrt3_2 * double(py); }
  bool operator==(const Totals& o) const { return mass == o.mass && px2 == o.px2 && py == o.py; }
};

}  // namespace hayate::fhp
