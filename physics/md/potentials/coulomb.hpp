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

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace hayate::md {

// The Coulomb part alone: plain 1/r.
struct CoulCutKind {
  template <class Real>
  struct Table {};  // nothing to tabulate: 1/r is one reciprocal square root
  template <class Real>
  static std::vector<Real> flatten(const CoulombSettings&) {
    return {};
  }
  template <class Real>
  static Table<Real> table_at(const Real*, const CoulombSettings&) {
    return {};
  }

  template <bool Energy = true, class Real>
  KOKKOS_INLINE_FUNCTION static void eval(const Real r2, const Real qq, const Real,
                                          const Table<Real>&, Real& fpair, Real& energy) {
    const Real rinv = Real(1) / compat::sqrt(r2);
    energy = qq * rinv;
    fpair = energy * rinv * rinv;
  }
};

// The Coulomb part alone: Ewald's screened erfc(g r) / r.
//
// By default from a table in r^2, as MDGRAPE's function evaluator and LAMMPS (pair_modify table)
// do: r^2 is cut into 64 segments per octave by its exponent and top mantissa bits, and each
// segment holds cubics in the segment's fraction for |F| / r and E per unit C q_i q_j: Hermite
// interpolants of the exact values and slopes at both ends, so both are continuous. The force's
// cubic is kept in float whatever the precision, one 16-byte load per pair: the lanes of a warp
// read segments scattered over the table, each load costing the L1 a request per lane, and two
// double loads per pair made the GPU kernel L1-bound (docs/dev/decisions.md). Its error is the
// coefficients' rounding, below 6e-8 of the unscreened 1/r^2 force (the interpolation's own,
// the fourth derivative's h^4 / 384 with h <= r^2 / 64, is below 1e-8); LAMMPS' default table
// is good to about 1e-6, and the Ewald sum itself to the 1e-5 or so it was set up for. The
// energy's cubic, read only when energies are asked for, stays in the run's precision (below
// 1e-9). The table runs from r_cut / 256 to the cutoff (17 octaves, 52 KB in double, of which a
// run touches the few octaves its pairs fill); closer pairs take the expression
// (pair.coul_long: analytic takes it everywhere). unit_tests/md/test_md_coulomb.cpp.
//
// The expression: erfc comes from the exponential the force needs anyway
// (compat::erfc_from_exp), and 1/r from one reciprocal square root: no division, no second
// exponential.
struct CoulLongKind {
  static constexpr int table_bits = 6;  // 2^6 segments per octave of r^2
  // Per segment, in Reals: the 4 float coefficients of |F| / r's cubic (16 bytes), then the 4 of
  // E's in Real. A multiple of 16 bytes, so every segment's loads stay aligned.
  template <class Real>
  static constexpr int force_slots = int(4 * sizeof(float) / sizeof(Real));
  template <class Real>
  static constexpr int stride = force_slots<Real> + 4;
  template <class Real>
  using Segments = compat::ExponentSegments<table_bits, Real>;

  // Segments base .. base + last of the table; last = -1: no table (the expression throughout).
  // One for all type pairs, held by the kernel (not loaded per pair with the pair's entry).
  template <class Real>
  struct Table {
    const Real* segments = nullptr;  // 16-byte aligned: a cubic is one or two 16-byte loads
    int base = 0;
    int last = -1;
  };

  // The segments [base, base + count) that cover r_cut / 256 .. r_cut.
  template <class Real>
  static void segment_range(const CoulombSettings& c, int& base, int& count) {
    base = 0;
    count = 0;
    if (c.eval != CoulLongEval::Table || !(c.cutoff > 0)) return;
    const double cutsq = c.cutoff * c.cutoff;
    base = Segments<Real>::index(Real(cutsq / 65536.0));
    count = Segments<Real>::index(Real(cutsq)) - base + 1;
  }

  // The table's coefficients, segment after segment (empty: no table).
  template <class Real>
  static std::vector<Real> flatten(const CoulombSettings& c) {
    int base, count;
    segment_range<Real>(c, base, count);
    std::vector<Real> out;
    out.reserve(std::size_t(count) * stride<Real>);
    const double g = c.g_ewald;
    // E and |F| / r per unit C q_i q_j at r^2 = s, with their slopes in s.
    auto at = [g](double s, double& e, double& f, double& de, double& df) {
      const double r = std::sqrt(s), gauss = std::exp(-g * g * s);
      const double two_over_sqrt_pi = 1.12837916709551257390;
      e = std::erfc(g * r) / r;
      const double a = e + two_over_sqrt_pi * g * gauss;  // -dE/dr
      f = a / s;
      const double da_dr = -e / r - two_over_sqrt_pi * g * gauss / r -
                           2.0 * two_over_sqrt_pi * g * g * g * r * gauss;
      de = -0.5 * f;
      df = da_dr / (2.0 * r * s) - f / s;
    };
    // Hermite cubic in x in [0, 1]: values v0, v1 and slopes h d0, h d1 at the ends.
    auto cubic = [](const double v0, const double v1, const double hd0, const double hd1) {
      return std::array<double, 4>{v0, hd0, 3.0 * (v1 - v0) - 2.0 * hd0 - hd1,
                                   2.0 * (v0 - v1) + hd0 + hd1};
    };
    for (int k = 0; k < count; ++k) {
      const double s0 = double(Segments<Real>::start(base + k));
      const double s1 = double(Segments<Real>::start(base + k + 1));
      const double h = s1 - s0;
      double e0, f0, de0, df0, e1, f1, de1, df1;
      at(s0, e0, f0, de0, df0);
      at(s1, e1, f1, de1, df1);
      // The force's cubic in float, made to end where the next segment's begins (both ends
      // rounded first, the last coefficient closing the gap): continuous to a float rounding
      // of the small cubic term, not of the value.
      const float v0 = float(f0), v1 = float(f1), d0 = float(h * df0);
      const float c2 = float(3.0 * (double(v1) - v0) - 2.0 * double(d0) - h * df1);
      const float c3 = float(double(v1) - v0 - double(d0) - c2);
      const float packed[4] = {v0, d0, c2, c3};
      Real slots[force_slots<Real>];
      std::memcpy(slots, packed, sizeof packed);
      out.insert(out.end(), slots, slots + force_slots<Real>);
      for (const double c : cubic(e0, e1, h * de0, h * de1)) out.push_back(Real(c));
    }
    return out;
  }

  // The table in `data` (its flattened values, in device memory).
  template <class Real>
  static Table<Real> table_at(const Real* data, const CoulombSettings& c) {
    int base, count;
    segment_range<Real>(c, base, count);
    if (count > 0 && reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
      throw std::logic_error("the coul/long table is not aligned for its loads");
    return Table<Real>{count > 0 ? data : nullptr, base, count - 1};
  }

  // Energy: whether the caller reads `energy` (else it is left 0). Its cubic is read only
  // then: the read-only loads are inline assembly, which the front end keeps in the PTX even
  // when their values go unused.
  template <bool Energy = true, class Real>
  KOKKOS_INLINE_FUNCTION static void eval(const Real r2, const Real qq, const Real g,
                                          const Table<Real>& t, Real& fpair, Real& energy) {
    // Beyond the table's end (a listed pair outside the cutoff, whose result the caller
    // multiplies by 0) the last segment's cubics are evaluated at some x in [0, 1): finite.
    const int index = Segments<Real>::index(r2);
    const int k = index - t.base < t.last ? index - t.base : t.last;
    if (k >= 0) {
      const Real x = Segments<Real>::fraction(r2, index);
      const Real* p = t.segments + stride<Real> * k;
      float f0, f1, f2, f3;
      compat::load4f_aligned(p, f0, f1, f2, f3);
      fpair = qq * (Real(f0) + x * (Real(f1) + x * (Real(f2) + x * Real(f3))));
      energy = Real(0);
      if constexpr (Energy) {
        Real c0, c1, c2, c3;
        compat::load4_aligned(p + force_slots<Real>, c0, c1, c2, c3);
        energy = qq * (c0 + x * (c1 + x * (c2 + x * c3)));
      }
      return;
    }
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

  // Per type pair: what the kernel loads with each pair's entry.
  template <class Real>
  struct Coeff {
    typename Short::template Coeff<Real> s;
    Real cut_shortsq = 0, short_offset = 0;
    Real qq_types = 0;  // C q_a q_b of the pair's types (PairCoeffs sets it)
  };

  // A short-range style's tables, then the Coulomb part's.
  template <class Real>
  static std::vector<Real> flatten(const TypeSet& t, const CoulombSettings& c) {
    std::vector<Real> out;
    if constexpr (has_tables) out = Short::template flatten<Real>(t);
    const std::vector<Real> coul = Kind::template flatten<Real>(c);
    out.insert(out.end(), coul.begin(), coul.end());
    return out;
  }

  // What every type pair shares, held once by the kernel rather than loaded with each pair's
  // entry: the Coulomb cutoff, constant and splitting, and the Coulomb part's table (coul/long),
  // which follows the short-range style's tables in `data` (the flattened values; `t`: the
  // short-range tables' sizes).
  template <class Real>
  struct Shared {
    typename Kind::template Table<Real> table;
    Real cut_coulsq = 0, qqr2e = 1, g = 0;
  };
  template <class Real>
  static Shared<Real> shared(const Real* data, const TypeSet& t, const CoulombSettings& c) {
    std::size_t short_values = 0;
    if constexpr (has_tables) short_values = Short::template size<Real>(t);
    return {Kind::table_at(data + short_values, c), Real(c.cutoff * c.cutoff), Real(c.qqr2e),
            Real(c.g_ewald)};
  }

  // `data` and `t`: the flattened tables and their sizes.
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
  // from the atoms' charges with shared.qqr2e); shared: what shared() returned. Energy: whether
  // the caller reads the energy (else it is 0 where the Coulomb part would add to it).
  template <bool Energy = true, class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c,
                                                        const Real qq, const Shared<Real>& shared) {
    const Real in_short = r2 < c.cut_shortsq ? Real(1) : Real(0);
    const Real in_coul = r2 < shared.cut_coulsq ? Real(1) : Real(0);
    const PairForce<Real> s = Short::compute(r2, c.s);
    Real fc, ec;
    Kind::template eval<Energy>(r2, qq, shared.g, shared.table, fc, ec);
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
