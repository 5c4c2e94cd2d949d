#pragma once
// pair_style lj/cut, as LAMMPS: E = 4 eps [(sigma/r)^12 - (sigma/r)^6] for r < rc.
#include "pair_style.hpp"

#include <cmath>

namespace hayate::md {

struct LjCut {
  static constexpr const char* name = "lj/cut";
  // pair_coeff order (LAMMPS: pair_coeff I J epsilon sigma [cutoff]).
  static constexpr int nparams = 2;
  static constexpr const char* params[nparams] = {"epsilon", "sigma"};
  static constexpr double defaults[nparams] = {1.0, 1.0};
  static constexpr bool mixes = true;

  // lj1 = 48 eps s^12, lj2 = 24 eps s^6 (force); lj3 = 4 eps s^12, lj4 = 4 eps s^6 (energy).
  template <class Real>
  struct Coeff {
    Real lj1 = 0, lj2 = 0, lj3 = 0, lj4 = 0;
  };

  template <class Real>
  static Coeff<Real> coeff(const double* p) {
    const double eps = p[0], s2 = p[1] * p[1], s6 = s2 * s2 * s2;
    return {Real(48.0 * eps * s6 * s6), Real(24.0 * eps * s6), Real(4.0 * eps * s6 * s6),
            Real(4.0 * eps * s6)};
  }

  // LAMMPS' pair_modify mix rules: epsilon is always the geometric mean; sigma (and the cutoff,
  // mixed by the caller) the geometric or the arithmetic one.
  static void mix(const double* a, const double* b, Mixing rule, double* out) {
    out[0] = std::sqrt(a[0] * b[0]);
    out[1] = rule == Mixing::Geometric ? std::sqrt(a[1] * b[1]) : 0.5 * (a[1] + b[1]);
  }

  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c) {
    const Real r2inv = Real(1) / r2;
    const Real r6inv = r2inv * r2inv * r2inv;
    return {r6inv * (c.lj1 * r6inv - c.lj2) * r2inv, r6inv * (c.lj3 * r6inv - c.lj4)};
  }
};

}  // namespace hayate::md
