#pragma once
// pair_style morse, as LAMMPS: E = D0 [e^(-2 alpha (r - r0)) - 2 e^(-alpha (r - r0))] for r < rc.
#include "compat/kokkos_compat.hpp"
#include "pair_style.hpp"

namespace hayate::md {

struct Morse {
  static constexpr const char* name = "morse";
  // pair_coeff order (LAMMPS: pair_coeff I J d0 alpha r0 [cutoff]).
  static constexpr int nparams = 3;
  static constexpr const char* params[nparams] = {"d0", "alpha", "r0"};
  static constexpr double defaults[nparams] = {0.0, 0.0, 0.0};
  // LAMMPS has no mixing rule for morse: every type pair is given.
  static constexpr bool mixes = false;

  template <class Real>
  struct Coeff {
    Real d0 = 0, alpha = 0, r0 = 0, morse1 = 0;  // morse1 = 2 alpha d0
  };

  template <class Real>
  static Coeff<Real> coeff(const double* p) {
    return {Real(p[0]), Real(p[1]), Real(p[2]), Real(2.0 * p[1] * p[0])};
  }

  static void mix(const double*, const double*, Mixing, double*) {}

  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c) {
    const Real r = compat::sqrt(r2);
    const Real dexp = compat::exp(-c.alpha * (r - c.r0));
    return {c.morse1 * (dexp * dexp - dexp) / r, c.d0 * (dexp * dexp - Real(2) * dexp)};
  }
};

}  // namespace hayate::md
