#pragma once
// The collision table as boolean logic on 64 sites at once (multi-spin coding). Every state that
// a chirality changes contributes its minterm (an AND of the 7 state bits or their complements)
// to the flip masks of the bits it changes; the table is a compile-time constant, so the loops
// below unroll into straight-line AND/OR code with no table in memory. Solid sites bounce back
// and the forcing moves are the same ones apply_forcing() makes on a byte.
#include "fhp/fhp_rules.hpp"

#include <cstdint>
#include <utility>

namespace hayate::fhp {

// A rule is self-dual when exchanging particles and holes commutes with it (FHP-III): then only
// states with at most 3 particles need logic; the others are complemented, collided and
// complemented back, which halves the minterms.
constexpr bool self_dual(const CollisionTable& t) {
  for (unsigned c = 0; c < 2; ++c)
    for (unsigned s = 0; s < 128; ++s)
      if (t.out[(~s & 0x7fu) | (c << 8)] != (~unsigned(t.out[s | (c << 8)]) & 0x7fu)) return false;
  return true;
}
template <Model M>
struct Duality {
  static constexpr bool value = self_dual(TableOf<M>::value);
};

template <Model M, unsigned S>
struct TableEntry {
  static constexpr unsigned flip0 = S ^ TableOf<M>::value.out[S];
  static constexpr unsigned flip1 = S ^ TableOf<M>::value.out[S | 256u];
  // Self-dual rules only need the states with at most 3 particles.
  static constexpr bool needed = !Duality<M>::value || popcount7(S) <= 3;
};

struct FlipMasks {
  std::uint64_t both[7], only0[7], only1[7];
};

template <Model M, unsigned S>
KOKKOS_INLINE_FUNCTION void add_minterm(const std::uint64_t (&lo)[8], const std::uint64_t (&hi)[16],
                                        FlipMasks& f) {
  constexpr unsigned f0 = TableEntry<M, S>::flip0;
  constexpr unsigned f1 = TableEntry<M, S>::flip1;
  if constexpr (TableEntry<M, S>::needed && (f0 != 0 || f1 != 0)) {
    const std::uint64_t m = lo[S & 7u] & hi[S >> 3];
    for (int j = 0; j < 7; ++j) {
      const bool b0 = (f0 >> j) & 1u, b1 = (f1 >> j) & 1u;
      if (b0 && b1)
        f.both[j] |= m;
      else if (b0)
        f.only0[j] |= m;
      else if (b1)
        f.only1[j] |= m;
    }
  }
}

template <Model M, std::size_t... S>
KOKKOS_INLINE_FUNCTION void add_minterms(const std::uint64_t (&lo)[8],
                                         const std::uint64_t (&hi)[16], FlipMasks& f,
                                         std::index_sequence<S...>) {
  (add_minterm<M, unsigned(S)>(lo, hi, f), ...);
}

// n: the 7 state planes after streaming (n[6] = rest particles); solid: solid-site mask;
// chirality, force: one random bit per site. Writes the post-collision planes to out.
template <Model M>
KOKKOS_INLINE_FUNCTION void collide_bits(const std::uint64_t (&n)[7], std::uint64_t solid,
                                         std::uint64_t chirality, std::uint64_t force,
                                         std::uint64_t (&out)[7]) {
  std::uint64_t in[7];
  std::uint64_t dual = 0;
  if constexpr (Duality<M>::value) {
    // Lanes with 4 or more particles: a bit-sliced count of the 7 bits, then count >= 4.
    const std::uint64_t s1 = n[0] ^ n[1] ^ n[2], c1 = (n[0] & n[1]) | (n[2] & (n[0] ^ n[1]));
    const std::uint64_t s2 = n[3] ^ n[4] ^ n[5], c2 = (n[3] & n[4]) | (n[5] & (n[3] ^ n[4]));
    // count = (s1 ^ s2 ^ n[6]) + 2 (c1 + c2 + c3); count >= 4 iff c1 + c2 + c3 >= 2.
    const std::uint64_t c3 = (s1 & s2) | (n[6] & (s1 ^ s2));
    dual = (c1 & c2) | (c3 & (c1 ^ c2));
  }
  for (int i = 0; i < 7; ++i) in[i] = n[i] ^ dual;
  std::uint64_t lo[8], hi[16];
  for (unsigned k = 0; k < 8; ++k)
    lo[k] = ((k & 1u) ? in[0] : ~in[0]) & ((k & 2u) ? in[1] : ~in[1]) & ((k & 4u) ? in[2] : ~in[2]);
  for (unsigned k = 0; k < 16; ++k)
    hi[k] = ((k & 1u) ? in[3] : ~in[3]) & ((k & 2u) ? in[4] : ~in[4]) &
            ((k & 4u) ? in[5] : ~in[5]) & ((k & 8u) ? in[6] : ~in[6]);
  FlipMasks f{};
  add_minterms<M>(lo, hi, f, std::make_index_sequence<128>{});
  for (int j = 0; j < 7; ++j) {
    // Flipping a bit of the complemented state flips the same bit of the state.
    const std::uint64_t flip = f.both[j] | (f.only0[j] & ~chirality) | (f.only1[j] & chirality);
    const std::uint64_t bounced = j < 6 ? n[(j + 3) % 6] : n[6];
    out[j] = ((n[j] ^ flip) & ~solid) | (bounced & solid);
  }
  const std::uint64_t fluid_force = force & ~solid;
  for (int k = 0; k < forcing_moves; ++k) {
    const ForcingMove mv = forcing_move(k);
    const std::uint64_t move = fluid_force & out[mv.from] & ~out[mv.to];
    out[mv.from] ^= move;
    out[mv.to] ^= move;
  }
}

}  // namespace hayate::fhp
