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

template <Model M, unsigned S>
struct TableEntry {
  static constexpr unsigned flip0 = S ^ TableOf<M>::value.out[S];
  static constexpr unsigned flip1 = S ^ TableOf<M>::value.out[S | 256u];
};

struct FlipMasks {
  std::uint64_t both[7], only0[7], only1[7];
};

template <Model M, unsigned S>
KOKKOS_INLINE_FUNCTION void add_minterm(const std::uint64_t (&lo)[8], const std::uint64_t (&hi)[16],
                                        FlipMasks& f) {
  constexpr unsigned f0 = TableEntry<M, S>::flip0;
  constexpr unsigned f1 = TableEntry<M, S>::flip1;
  if constexpr (f0 != 0 || f1 != 0) {
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
  std::uint64_t lo[8], hi[16];
  for (unsigned k = 0; k < 8; ++k)
    lo[k] = ((k & 1u) ? n[0] : ~n[0]) & ((k & 2u) ? n[1] : ~n[1]) & ((k & 4u) ? n[2] : ~n[2]);
  for (unsigned k = 0; k < 16; ++k)
    hi[k] = ((k & 1u) ? n[3] : ~n[3]) & ((k & 2u) ? n[4] : ~n[4]) & ((k & 4u) ? n[5] : ~n[5]) &
            ((k & 8u) ? n[6] : ~n[6]);
  FlipMasks f{};
  add_minterms<M>(lo, hi, f, std::make_index_sequence<128>{});
  for (int j = 0; j < 7; ++j) {
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
