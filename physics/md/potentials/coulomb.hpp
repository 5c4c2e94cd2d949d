#pragma once
// Coulomb interactions between point charges, and their combination with a short-range style,
// as LAMMPS' coul/cut, coul/long, lj/cut/coul/cut and lj/cut/coul/long:
//   coul/cut:  E = C q_i q_j / r                    for r < r_coul
//   coul/long: E = C q_i q_j erfc(g r) / r          for r < r_coul (Ewald's real-space part;
//              the rest comes from the k-space sum, kspace.style: ewald)
// C is the units' Coulomb constant (qqr2e). The short-range part keeps its own per-pair cutoff
// and shift; the Coulomb cutoff is global (pair.coul_cutoff), as LAMMPS' pair_style arguments.
#include "compat/kokkos_special_math.hpp"
#include "lj_cut.hpp"
#include "pair_style.hpp"
#include "table.hpp"

#include <cstddef>
#include <vector>

namespace hayate::md {

// The Coulomb part alone: plain 1/r.
struct CoulCutKind {
  template <class Real>
  KOKKOS_INLINE_FUNCTION static void eval(const Real r2, const Real qq, const Real, Real& fpair,
                                          Real& energy) {
    const Real rinv = Real(1) / compat::sqrt(r2);
    energy = qq * rinv;
    fpair = energy * rinv * rinv;
  }
};

// The Coulomb part alone: Ewald's screened erfc(g r) / r. erfc comes from the exponential the
// force needs anyway (compat::erfc_from_exp), and 1/r from one reciprocal square root: no
// division, no second exponential, no branch in the pair loop.
struct CoulLongKind {
  template <class Real>
  KOKKOS_INLINE_FUNCTION static void eval(const Real r2, const Real qq, const Real g, Real& fpair,
                                          Real& energy) {
    const Real rinv = compat::rsqrt(r2), gr = g * r2 * rinv;
    const Real exp_gr2 = compat::exp(-gr * gr);
    // 2 / sqrt(pi)
    const Real two_over_sqrt_pi = Real(1.12837916709551257390);
    energy = qq * compat::erfc_from_exp(gr, exp_gr2) * rinv;
    fpair = (energy + qq * two_over_sqrt_pi * gr * exp_gr2 * rinv) * rinv * rinv;
  }
};

// No short-range part (pure coul/cut and coul/long).
struct NoShort {
  static constexpr int nparams = 0;
  static constexpr const char* const* params = nullptr;
  static constexpr const double* defaults = nullptr;
  static constexpr bool mixes = true;
  template <class Real>
  struct Coeff {};
  template <class Real>
  static Coeff<Real> coeff(const double*) {
    return {};
  }
  static void mix(const double*, const double*, Mixing, double*) {}
  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real, const Coeff<Real>&) {
    return {Real(0), Real(0)};
  }
};

// A short-range style plus point charges. The driver's cutoff is the larger of the two; each
// part tests its own (multiplied by 0 or 1, as the driver does).
template <class Short, class Kind>
struct WithCoulomb {
  static constexpr bool charged = true;
  static constexpr bool own_cutoffs = true;
  static constexpr int nparams = Short::nparams;
  static constexpr const char* const* params = Short::params;
  static constexpr const double* defaults = Short::defaults;
  static constexpr bool mixes = Short::mixes;
  static constexpr bool has_tables = md::has_tables<Short>::value;

  template <class Real>
  struct Coeff {
    typename Short::template Coeff<Real> s;
    Real cut_shortsq = 0, short_offset = 0, cut_coulsq = 0, qqr2e = 1, g = 0;
    Real qq_types = 0;  // C q_a q_b of the pair's types (PairCoeffs sets it)
  };

  template <class Real>
  static std::vector<Real> flatten(const TypeSet& t) {
    if constexpr (has_tables) return Short::template flatten<Real>(t);
    return {};
  }

  // `data` and `t`: the flattened tables and their sizes, for a short-range table.
  template <class Real>
  static Coeff<Real> coeff(const double* p, double cutoff, const CoulombSettings& c, bool shift,
                           const Real* data, const TypeSet& t) {
    Coeff<Real> out;
    if constexpr (has_tables) {
      out.s = Short::template coeff<Real>(p, data, t);
      if (shift) out.short_offset = Real(t.tables[std::size_t(p[0])].e.back());
    } else {
      out.s = Short::template coeff<Real>(p);
      if (shift)
        out.short_offset =
            Real(Short::compute(cutoff * cutoff, Short::template coeff<double>(p)).energy);
    }
    out.cut_shortsq = Real(cutoff * cutoff);
    out.cut_coulsq = Real(c.cutoff * c.cutoff);
    out.qqr2e = Real(c.qqr2e);
    out.g = Real(c.g_ewald);
    return out;
  }
  static double driver_cutoff(double cutoff, const CoulombSettings& c) {
    return cutoff > c.cutoff ? cutoff : c.cutoff;
  }

  static void mix(const double* a, const double* b, Mixing rule, double* out) {
    Short::mix(a, b, rule, out);
  }

  // Only the short-range part has a range below which it is undefined (a table's first point).
  template <class Real>
  KOKKOS_INLINE_FUNCTION static bool below_range(const Real r2, const Coeff<Real>& c) {
    if constexpr (has_tables)
      return r2 < c.cut_shortsq && Short::below_range(r2, c.s);
    else
      return false;
  }

  // qq: C q_i q_j, Coulomb's constant included (the driver takes it from c.qq_types or forms it
  // from the atoms' charges).
  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c,
                                                        const Real qq) {
    const Real in_short = r2 < c.cut_shortsq ? Real(1) : Real(0);
    const Real in_coul = r2 < c.cut_coulsq ? Real(1) : Real(0);
    const PairForce<Real> s = Short::compute(r2, c.s);
    Real fc, ec;
    Kind::eval(r2, qq, c.g, fc, ec);
    return {in_short * s.fpair + in_coul * fc,
            in_short * (s.energy - c.short_offset) + in_coul * ec};
  }
};

struct CoulCut : WithCoulomb<NoShort, CoulCutKind> {
  static constexpr const char* name = "coul/cut";
};
struct CoulLong : WithCoulomb<NoShort, CoulLongKind> {
  static constexpr const char* name = "coul/long";
};
struct LjCutCoulCut : WithCoulomb<LjCut, CoulCutKind> {
  static constexpr const char* name = "lj/cut/coul/cut";
};
struct LjCutCoulLong : WithCoulomb<LjCut, CoulLongKind> {
  static constexpr const char* name = "lj/cut/coul/long";
};
// A tabulated short-range force plus charges (LAMMPS: pair_style hybrid/overlay table coul/*).
struct TableCoulCut : WithCoulomb<Table, CoulCutKind> {
  static constexpr const char* name = "table/coul/cut";
};
struct TableCoulLong : WithCoulomb<Table, CoulLongKind> {
  static constexpr const char* name = "table/coul/long";
};

}  // namespace hayate::md
