#pragma once
// pair_style table: a central force of any shape from a table in r^2, as MDGRAPE evaluates it
// and LAMMPS' pair_style table reads it. Each type pair has its table: N points equally spaced
// in r^2 from the inner radius to the cutoff holding the energy and |F|/r, interpolated linearly
// or by cubic splines in r^2 (kept on the device as each interval's polynomial). The tables come
// from LAMMPS table files (pair_table.hpp reads and resamples them) or from a built-in expression.
// A pair closer than the inner radius is a run-time error, not an extrapolation.
#include "pair_style.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
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

  // Each interval of a table is one record: the force's polynomial in the fraction b of the
  // interval, then the energy's (2 coefficients each when linear, 4 for splines). A pair's force
  // is then one aligned vector load and one (or three) multiply-adds; the energy's half is read
  // only when energies are asked for.
  template <class Real>
  struct Coeff {
    const Real* records = nullptr;  // device memory
    Real innersq = 0, invdelta = 0;
    int last = 0;   // n - 2: the last interval
    int cubic = 0;  // splines (records of 8) or linear (records of 4)
  };

  static int record_size(const TableData& tab) { return tab.spline ? 8 : 4; }

  // Every table's records, flattened in the order of TypeSet::tables.
  template <class Real>
  static std::vector<Real> flatten(const TypeSet& t) {
    std::vector<Real> out;
    for (const auto& tab : t.tables) {
      const double h2_6 = tab.delta * tab.delta / 6.0;
      for (int k = 0; k + 1 < tab.n; ++k)
        for (const auto* v : {&tab.f, &tab.e}) {
          const double y0 = (*v)[std::size_t(k)], y1 = (*v)[std::size_t(k) + 1];
          if (!tab.spline) {
            out.insert(out.end(), {Real(y0), Real(y1 - y0)});
            continue;
          }
          // a y0 + b y1 + ((a^3 - a) s0 + (b^3 - b) s1) delta^2 / 6 with a = 1 - b, in powers of b.
          const auto& s2 = v == &tab.f ? tab.f2 : tab.e2;
          const double s0 = s2[std::size_t(k)], s1 = s2[std::size_t(k) + 1];
          out.insert(out.end(), {Real(y0), Real(y1 - y0 - h2_6 * (2 * s0 + s1)),
                                 Real(3 * h2_6 * s0), Real(h2_6 * (s1 - s0))});
        }
    }
    return out;
  }

  template <class Real>
  static Coeff<Real> coeff(const double* p, const Real* data, const TypeSet& t) {
    const std::size_t k = std::size_t(p[0]);
    std::size_t offset = 0;
    for (std::size_t j = 0; j < k; ++j)
      offset += std::size_t(record_size(t.tables[j])) * std::size_t(t.tables[j].n - 1);
    const TableData& tab = t.tables[k];
    Coeff<Real> c;
    c.records = data + offset;
    c.innersq = Real(tab.innersq);
    c.invdelta = Real(1.0 / tab.delta);
    c.last = tab.n - 2;
    c.cubic = tab.spline ? 1 : 0;
    return c;
  }

  static void mix(const double*, const double*, Mixing, double*) {}

  // Closer than the table's first point: the driver reports it after the force call.
  template <class Real>
  KOKKOS_INLINE_FUNCTION static bool below_range(const Real r2, const Coeff<Real>& c) {
    return r2 < c.innersq;
  }

  // Two coefficients, read with one vector load on a GPU (records are aligned to them).
  template <class Real>
  struct alignas(2 * sizeof(Real)) Two {
    Real c0, c1;
  };

  template <class Real>
  KOKKOS_INLINE_FUNCTION static PairForce<Real> compute(const Real r2, const Coeff<Real>& c) {
    const Real x = (r2 - c.innersq) * c.invdelta;
    // Clamped before the conversion: beyond the table (a pair outside the cutoff, whose result
    // the driver multiplies by 0) the index stays in bounds.
    const int k = int(x < Real(0) ? Real(0) : (x > Real(c.last) ? Real(c.last) : x));
    const Real b = x - Real(k);
    const auto* r =
        reinterpret_cast<const Two<Real>*>(c.records) + (std::size_t(k) << (1 + c.cubic));
    if (!c.cubic) {
      const Two<Real> f = r[0], e = r[1];
      return {f.c0 + b * f.c1, e.c0 + b * e.c1};
    }
    const Two<Real> f0 = r[0], f1 = r[1], e0 = r[2], e1 = r[3];
    return {f0.c0 + b * (f0.c1 + b * (f1.c0 + b * f1.c1)),
            e0.c0 + b * (e0.c1 + b * (e1.c0 + b * e1.c1))};
  }
};

}  // namespace hayate::md
