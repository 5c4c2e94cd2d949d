#pragma once
// What every pair style shares. A style (lj_cut.hpp, morse.hpp) is a small struct: its LAMMPS
// name and pair_coeff parameters, a mixing rule if it has one, the derived coefficients of a type
// pair, and compute(r^2, coeff) -> (|F| / r, E) for one pair inside the cutoff. The force driver
// (force.hpp) owns the loops, the cutoff test and the energy shift, for every style alike.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace hayate::md {

// Most atom types an input may declare.
inline constexpr int max_types = 64;

enum class Mixing { Geometric, Arithmetic };

// fpair = |F| / r, so the force on i from j is (x_i - x_j) * fpair.
template <class Real>
struct PairForce {
  Real fpair;
  Real energy;
};

// Whether a style takes point charges (compute(r2, coeff, q_i q_j)), and whether it tests its own
// cutoffs (a short-range part and a Coulomb part) instead of the driver's one per pair.
template <class Style, class = void>
struct is_charged : std::false_type {};
template <class Style>
struct is_charged<Style, std::void_t<decltype(Style::charged)>>
    : std::bool_constant<Style::charged> {};
template <class Style, class = void>
struct has_own_cutoffs : std::false_type {};
template <class Style>
struct has_own_cutoffs<Style, std::void_t<decltype(Style::own_cutoffs)>>
    : std::bool_constant<Style::own_cutoffs> {};

// Styles with tables (pair style table) keep their values in one device View; styles that can
// be asked for a distance outside what they describe say so (below_range).
template <class Style, class = void>
struct has_tables : std::false_type {};
template <class Style>
struct has_tables<Style, std::void_t<decltype(Style::has_tables)>>
    : std::bool_constant<Style::has_tables> {};

// Styles whose force of a pair starts with loads that depend on r^2 (a table's interval) split
// compute in two: lookup(r^2, coeff) does the loads, compute(lookup, coeff) the arithmetic. The
// force driver then issues the loads of several pairs before the arithmetic of the first: a
// table read is a gather whose latency a single pair would leave exposed.
template <class Style, class Real, class = void>
struct has_lookup : std::false_type {};
template <class Style, class Real>
struct has_lookup<Style, Real, std::void_t<typename Style::template Lookup<Real>>>
    : std::true_type {};

// What all type pairs of a style share, held once by the kernels (a charged style's Coulomb
// table); nothing for most styles.
struct NoSharedCoeffs {};
template <class Style, class Real, class = void>
struct shared_coeffs {
  using type = NoSharedCoeffs;
};
template <class Style, class Real>
struct shared_coeffs<Style, Real, std::void_t<typename Style::template Shared<Real>>> {
  using type = typename Style::template Shared<Real>;
};

// One type pair's table for pair style table, host side: n points equally spaced in r^2.
struct TableData {
  int n = 0;                         // points
  double innersq = 0;                // r^2 of the first point
  double delta = 0;                  // spacing in r^2
  bool spline = false;               // cubic splines in r^2 (else linear)
  std::vector<double> e, f, e2, f2;  // energy, |F|/r and their second derivatives in r^2
};

// How coul/long's erfc(g r) / r is evaluated: from a table in r^2 (potentials/coulomb.hpp), as
// MDGRAPE and LAMMPS (pair_modify table) do, or from the expression (LAMMPS: pair_modify table 0).
enum class CoulLongEval { Table, Analytic };

// Parameters every type pair of a charged style shares.
struct CoulombSettings {
  double qqr2e = 1.0;    // Coulomb's constant of the unit style
  double cutoff = 0.0;   // global Coulomb cutoff
  double g_ewald = 0.0;  // Ewald splitting parameter (coul/long)
  CoulLongEval eval = CoulLongEval::Table;
};

// Host-side types and pair parameters in double: for each type pair (a, b) the style's
// parameters in pair_coeff order and the cutoff.
struct TypeSet {
  std::vector<std::string> names;
  std::vector<double> mass;
  std::string style = "lj/cut";
  int nparams = 2;
  std::vector<double> params;     // ((a * n + b) * nparams + k)
  std::vector<double> cutoff;     // (a * n + b)
  std::vector<double> charge;     // per type: the charge atoms of the type get unless a file says
  double coul_cutoff = 0;         // charged styles: the global Coulomb cutoff
  std::vector<TableData> tables;  // pair style table: one per pair (its parameter is the index)
  bool shift = false;             // energy shifted to zero at the cutoff (pair_modify shift yes)

  int size() const { return static_cast<int>(names.size()); }
  // data() + offset, not &params[offset]: styles without parameters (coul/cut) have none, and
  // indexing an empty vector is undefined even when nothing is read.
  const double* pair(int a, int b) const {
    return params.data() + std::size_t(a * size() + b) * nparams;
  }
  double* pair(int a, int b) { return params.data() + std::size_t(a * size() + b) * nparams; }
  double cut(int a, int b) const { return cutoff[a * size() + b]; }
  // The farthest any pair interacts: the largest pair cutoff or the Coulomb cutoff.
  double max_cutoff() const {
    const double c = cutoff.empty() ? 0 : *std::max_element(cutoff.begin(), cutoff.end());
    return c > coul_cutoff ? c : coul_cutoff;
  }

  // n types of one style, parameters zero.
  static TypeSet empty(const std::string& style, int nparams, int n) {
    TypeSet t;
    t.style = style;
    t.nparams = nparams;
    for (int a = 0; a < n; ++a) {
      t.names.push_back(std::string(1, char('A' + a)));
      t.mass.push_back(1.0);
    }
    t.params.assign(std::size_t(n) * n * nparams, 0.0);
    t.cutoff.assign(std::size_t(n) * n, 0.0);
    t.charge.assign(std::size_t(n), 0.0);
    return t;
  }

  // One type "A" in reduced units (mass, epsilon, sigma 1), the in.lj set-up.
  static TypeSet single(double cutoff = 2.5) {
    TypeSet t = empty("lj/cut", 2, 1);
    t.params = {1.0, 1.0};
    t.cutoff = {cutoff};
    return t;
  }
};

// The device table of a style's coefficients per type pair, with the squared cutoff and the
// energy at the cutoff (subtracted when the potential is shifted). One type keeps its entry by
// value so kernels hold it in registers.
template <class Style, class Real, class Mem>
struct PairCoeffs {
  struct Entry {
    typename Style::template Coeff<Real> c;
    Real cutsq = 0;
    Real offset = 0;
  };
  using EntryTable = Kokkos::View<const Entry**, Kokkos::LayoutRight, Mem,
                                  Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
  using Shared = typename shared_coeffs<Style, Real>::type;
  int ntypes = 1;
  Entry one;
  EntryTable table;
  Shared shared;
  // Styles with tables (and coul/long's): their values, which entries point into.
  Kokkos::View<Real*, Mem> data;

  // What the kernels take: the entries, not the View that owns the tables' values (which the
  // entries point into). Kokkos 3.4 launches a kernel whose arguments pass 512 bytes from
  // constant memory, after waiting for the previous such launch.
  struct Device {
    int ntypes = 1;
    Entry one;
    EntryTable table;
    Shared shared;
  };
  Device device() const { return Device{ntypes, one, table, shared}; }

  static PairCoeffs make(const TypeSet& t, const CoulombSettings& coulomb = {}) {
    PairCoeffs out;
    out.ntypes = t.size();
    std::vector<Real> values;
    if constexpr (is_charged<Style>::value)
      values = Style::template flatten<Real>(t, coulomb);
    else if constexpr (has_tables<Style>::value)
      values = Style::template flatten<Real>(t);
    if (!values.empty()) {
      out.data = Kokkos::View<Real*, Mem>("hayate::md::pair_tables", values.size());
      const Kokkos::View<const Real*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          host(values.data(), values.size());
      Kokkos::deep_copy(out.data, host);
    }
    if constexpr (is_charged<Style>::value)
      out.shared = Style::template shared<Real>(out.data.data(), t, coulomb);
    Kokkos::View<Entry**, Kokkos::LayoutRight, Mem> table("hayate::md::pair_coeffs", t.size(),
                                                          t.size());
    auto h = Kokkos::create_mirror_view(table);
    for (int a = 0; a < t.size(); ++a)
      for (int b = 0; b < t.size(); ++b) {
        Entry& e = h(a, b);
        const double rc = t.cut(a, b);
        if constexpr (has_own_cutoffs<Style>::value) {
          // The style shifts its short-range part itself (the Coulomb part is never shifted).
          e.c = Style::template coeff<Real>(t.pair(a, b), rc, coulomb, t.shift, out.data.data(), t);
          if constexpr (is_charged<Style>::value)
            e.c.qq_types =
                Real(coulomb.qqr2e * t.charge[std::size_t(a)] * t.charge[std::size_t(b)]);
          const double reach = Style::driver_cutoff(rc, coulomb);
          e.cutsq = Real(reach * reach);
        } else if constexpr (has_tables<Style>::value) {
          e.c = Style::template coeff<Real>(t.pair(a, b), out.data.data(), t);
          e.cutsq = Real(rc * rc);
          if (t.shift) e.offset = Real(t.tables[std::size_t(t.pair(a, b)[0])].e.back());
        } else {
          e.c = Style::template coeff<Real>(t.pair(a, b));
          e.cutsq = Real(rc * rc);
          if (t.shift)
            e.offset =
                Real(Style::compute(rc * rc, Style::template coeff<double>(t.pair(a, b))).energy);
        }
      }
    Kokkos::deep_copy(table, h);
    out.one = h(0, 0);
    out.table = table;
    return out;
  }
};

}  // namespace hayate::md
