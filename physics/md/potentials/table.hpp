#pragma once
// pair_style table: a central force of any shape from a table in r^2, as MDGRAPE evaluates it
// and LAMMPS' pair_style table reads it. Each type pair has its table: N points equally spaced
// in r^2 from the inner radius to the cutoff holding the energy and |F|/r, interpolated linearly
// or by cubic splines in r^2. The tables come from LAMMPS table files (pair_table.hpp reads and
// resamples them) or from a built-in expression. A pair closer than the inner radius is a
// run-time error, not an extrapolation.
#include "compat/kokkos_special_math.hpp"
#include "pair_style.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace hayate::md {

struct Table {
  static constexpr const char* name = "table";
  // The table's index in TypeSet::tables (set from pair.coeffs' file or expression).
  static constexpr int nparams = 1;
  static constexpr const char* params[nparams] = {"table"};
  static constexpr double defaults[nparams] = {0.0};
  static constexpr bool mixes = false;
  static constexpr bool has_tables = true;

  // The force is read as each interval's pair of end values, (f_k, f_{k+1}) side by side and
  // aligned to the pair, so that a GPU reads a pair's force with one load through the read-only
  // path where f[k] and f[k + 1] were two generic loads: the lanes of a warp read scattered
  // intervals and each load costs the L1 a request per lane (docs/dev/decisions.md). The
  // energy, read only when energies are asked for, stays one value per point.
  template <class Real>
  struct Coeff {
    const Real* f = nullptr;   // n - 1 pairs (f_k, f_{k+1}), then n - 1 of f2 (device memory)
    const Real* f2 = nullptr;  // spline second derivatives of f, paired as f
    const Real* e = nullptr;   // n values each: e, e2
    const Real* e2 = nullptr;
    // h2_6 = delta^2 / 6 for splines, 0 for linear interpolation: no separate flag, which
    // would take the kernels' arguments past what CUDA launches pass directly (Kokkos then
    // copies them to constant memory and waits for the previous such kernel first).
    Real innersq = 0, invdelta = 0, h2_6 = 0;
    Real last = 0;  // n - 2: the last interval
  };

  // Reals per table: the paired f and f2 (2 (n - 1) each), then e and e2 (n each), padded to
  // 16 bytes, so that every table's pairs, and coul/long's table after them, stay aligned.
  template <class Real>
  static std::size_t size(const TableData& tab) {
    constexpr std::size_t align = 16 / sizeof(Real);
    return (6 * std::size_t(tab.n) - 4 + align - 1) / align * align;
  }
  // Reals of every table together: where a style's further values (coul/long's table) begin.
  template <class Real>
  static std::size_t size(const TypeSet& t) {
    std::size_t total = 0;
    for (const auto& tab : t.tables) total += size<Real>(tab);
    return total;
  }

  // Every table's values, flattened in the order of TypeSet::tables.
  template <class Real>
  static std::vector<Real> flatten(const TypeSet& t) {
    std::vector<Real> out;
    for (const auto& tab : t.tables) {
      for (const auto* v : {&tab.f, &tab.f2})
        for (std::size_t k = 0; k + 1 < v->size(); ++k)
          out.insert(out.end(), {Real((*v)[k]), Real((*v)[k + 1])});
      for (const auto* v : {&tab.e, &tab.e2})
        for (double x : *v) out.push_back(Real(x));
      out.resize(out.size() + size<Real>(tab) - (6 * std::size_t(tab.n) - 4), Real(0));
    }
    return out;
  }

  template <class Real>
  static Coeff<Real> coeff(const double* p, const Real* data, const TypeSet& t) {
    if (reinterpret_cast<std::uintptr_t>(data) % (2 * sizeof(Real)) != 0)
      throw std::logic_error("the pair tables are not aligned for their loads");
    const std::size_t k = std::size_t(p[0]);
    std::size_t offset = 0;
    for (std::size_t j = 0; j < k; ++j) offset += size<Real>(t.tables[j]);
    const TableData& tab = t.tables[k];
    const std::size_t pairs = 2 * (std::size_t(tab.n) - 1);
    Coeff<Real> c;
    c.f = data + offset;
    c.f2 = c.f + pairs;
    c.e = c.f2 + pairs;
    c.e2 = c.e + tab.n;
    c.innersq = Real(tab.innersq);
    c.invdelta = Real(1.0 / tab.delta);
    c.h2_6 = tab.spline ? Real(tab.delta * tab.delta / 6.0) : Real(0);
    c.last = Real(tab.n - 2);
    return c;
  }

  static void mix(const double*, const double*, Mixing, double*) {}

  // Closer than the table's first point: the driver reports it after the force call.
  template <class Real>
  KOKKOS_INLINE_FUNCTION static bool below_range(const Real r2, const Coeff<Real>& c) {
    return r2 < c.innersq;
  }

  // A pair's interval and its force at the interval's ends: the loads of a pair, made before
  // its arithmetic so that the driver can start those of several pairs at once (has_lookup).
  template <class Real>
  struct Lookup {
    Real b;  // position in the interval, 0 to 1
    int k;   // the interval
    Real f0, f1;
  };

  template <class Real>
  KOKKOS_INLINE_FUNCTION static Lookup<Real> lookup(const Real r2, const Coeff<Real>& c) {
    const Real x = (r2 - c.innersq) * c.invdelta;
    // Clamped: beyond the table (a pair outside the cutoff, whose result the driver multiplies
    // by 0) the index stays in bounds.
    Real start;
    const int k = compat::table_interval(x, c.last, start);
    Lookup<Real> l{x - start, k, Real(0), Real(0)};
    compat::load2_aligned(c.f + 2 * k, l.f0, l.f1);
    return l;
  }

  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Lookup<Real>& l,
                                                        const Coeff<Real>& c) {
    const Real b = l.b, a = Real(1) - b;
    const int k = l.k;
    Real e = a * c.e[k] + b * c.e[k + 1];
    Real f = a * l.f0 + b * l.f1;
    if (c.h2_6 != Real(0)) {
      const Real ca = (a * a * a - a) * c.h2_6, cb = (b * b * b - b) * c.h2_6;
      Real s0, s1;
      compat::load2_aligned(c.f2 + 2 * k, s0, s1);
      e += ca * c.e2[k] + cb * c.e2[k + 1];
      f += ca * s0 + cb * s1;
    }
    return {f, e};
  }

  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c) {
    return compute(lookup(r2, c), c);
  }
};

}  // namespace hayate::md
