#pragma once
// Small systems and O(N^2) double-precision references for the MD tests.
#include "md/md_problem.hpp"
#include "md/md_setup.hpp"
#include "md/md_system.hpp"
#include "md/potentials/lj_cut.hpp"
#include "md/potentials/morse.hpp"
#include "util/random.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

// A test that runs a pair style through its problem (YAML, the CLI) skips in a build that left
// the style out (CMake option HAYATE_MD_STYLES, as the CUDA gate's build does).
#define HAYATE_REQUIRE_MD_STYLE(name)      \
  if (!::hayate::md::style_is_built(name)) \
  GTEST_SKIP() << "pair style " << (name) << " is not built here (HAYATE_MD_STYLES)"

namespace hayate::md::test {

// Two lj/cut types with different sizes and cutoffs, so the per-pair tables are exercised.
inline TypeSet two_types() {
  TypeSet t = TypeSet::empty("lj/cut", 2, 2);
  t.mass = {1.0, 2.0};
  const double eps[2] = {1.0, 0.5}, sig[2] = {1.0, 1.1}, cut[2] = {2.5, 2.2};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      t.pair(a, b)[0] = std::sqrt(eps[a] * eps[b]);
      t.pair(a, b)[1] = 0.5 * (sig[a] + sig[b]);
      t.cutoff[a * 2 + b] = 0.5 * (cut[a] + cut[b]);
    }
  return t;
}

// n lj/cut types with different epsilon, sigma and cutoff (deterministic), every pair mixed.
inline TypeSet many_types(int n) {
  TypeSet t = TypeSet::empty("lj/cut", 2, n);
  std::vector<double> eps(n), sig(n), cut(n);
  for (int a = 0; a < n; ++a) {
    t.mass[a] = 1.0 + 0.1 * a;
    eps[a] = 0.5 + util::uniform01(5, a, 0);
    sig[a] = 0.9 + 0.2 * util::uniform01(5, a, 1);
    cut[a] = 2.0 + 0.5 * util::uniform01(5, a, 2);
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      t.pair(a, b)[0] = std::sqrt(eps[a] * eps[b]);
      t.pair(a, b)[1] = 0.5 * (sig[a] + sig[b]);
      t.cutoff[a * n + b] = 0.5 * (cut[a] + cut[b]);
    }
  return t;
}

// Morse types: one (a bond of length ~1.1 in an fcc melt) or two with explicit unlike pairs.
inline TypeSet morse_types(bool two) {
  const int n = two ? 2 : 1;
  TypeSet t = TypeSet::empty("morse", 3, n);
  const double d0[2][2] = {{1.0, 0.7}, {0.7, 0.5}}, alpha[2][2] = {{3.0, 3.5}, {3.5, 4.0}},
               r0[2][2] = {{1.1, 1.15}, {1.15, 1.2}}, cut[2][2] = {{2.5, 2.4}, {2.4, 2.3}};
  for (int a = 0; a < n; ++a) {
    t.mass[a] = 1.0 + a;
    for (int b = 0; b < n; ++b) {
      double* p = t.pair(a, b);
      p[0] = d0[a][b];
      p[1] = alpha[a][b];
      p[2] = r0[a][b];
      t.cutoff[a * n + b] = cut[a][b];
    }
  }
  return t;
}

// fcc lattice with every atom displaced by up to `rattle` per direction (deterministic), of
// the given types (default: lj/cut, one type or two_types()) assigned cyclically.
inline InitialState rattled_lattice(int cells, double density, double rattle, bool two,
                                    double temperature = 1.0, const TypeSet* types = nullptr) {
  const TypeSet t = types ? *types : (two ? two_types() : TypeSet::single());
  std::vector<int> cycle;
  for (int a = 0; a < t.size(); ++a) cycle.push_back(a);
  InitialState s = fcc_lattice(density, cells, cells, cells, cycle);
  // fcc_lattice cycles over the 4 basis atoms; more types cycle over the atoms.
  if (t.size() > 4)
    for (std::size_t i = 0; i < s.type.size(); ++i) s.type[i] = int(i % t.size());
  s.types = t;
  for (std::size_t k = 0; k < s.x.size(); ++k)
    s.x[k] += rattle * (2.0 * util::uniform01(99, k, 0) - 1.0);
  create_velocities(s, temperature, 4242);
  return s;
}

inline double image(double d, double l) {
  while (d > 0.5 * l) d -= l;
  while (d < -0.5 * l) d += l;
  return d;
}

struct Reference {
  std::vector<double> f;  // 3n
  double energy = 0, virial = 0;
};

// Energy and |F|/r of one pair at distance^2 r2 from the textbook expressions of the style (not
// from the style structs the kernels use).
inline void textbook_pair(const TypeSet& t, int a, int b, double r2, double& energy,
                          double& f_over_r) {
  const double* p = t.pair(a, b);
  if (t.style.rfind("lj/cut", 0) == 0) {
    const double s2 = p[1] * p[1] / r2, s6 = s2 * s2 * s2;
    energy = 4.0 * p[0] * (s6 * s6 - s6);
    f_over_r = 24.0 * p[0] * (2.0 * s6 * s6 - s6) / r2;
  } else {
    const double r = std::sqrt(r2), e = std::exp(-p[1] * (r - p[2]));
    energy = p[0] * (e * e - 2.0 * e);
    f_over_r = 2.0 * p[0] * p[1] * (e * e - e) / r;
  }
}

// The Coulomb part of a charged style for the reference: plain 1/r (g = 0) or Ewald's
// real-space erfc(g r) / r, within `cutoff`.
struct CoulombPart {
  double cutoff = 0, g = 0, qqr2e = 1;
};

inline void textbook_coulomb(const CoulombPart& c, double qq, double r2, double& energy,
                             double& f_over_r) {
  const double r = std::sqrt(r2);
  if (c.g == 0) {
    energy = c.qqr2e * qq / r;
    f_over_r = energy / r2;
    return;
  }
  const double pi = 3.14159265358979323846;
  energy = c.qqr2e * qq * std::erfc(c.g * r) / r;
  f_over_r = c.qqr2e * qq *
             (std::erfc(c.g * r) + 2.0 / std::sqrt(pi) * c.g * r * std::exp(-c.g * c.g * r2)) /
             (r * r2);
}

// Every pair once, in double. With charges: the short-range style (none for pure coul/*)
// within each pair's cutoff plus the Coulomb part within its own.
inline Reference reference_forces(const std::vector<double>& x, const std::vector<int>& type,
                                  const TypeSet& t, const double box[3],
                                  const std::vector<double>* q = nullptr,
                                  const CoulombPart& coulomb = {}) {
  const std::size_t n = type.size();
  Reference r;
  r.f.assign(3 * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double d[3], r2 = 0;
      for (int k = 0; k < 3; ++k) {
        d[k] = image(x[3 * i + k] - x[3 * j + k], box[k]);
        r2 += d[k] * d[k];
      }
      const int a = type[i], b = type[j];
      const double rc = t.cut(a, b);
      double energy = 0, f_over_r = 0;
      const bool short_range = !q || t.style.rfind("lj/cut", 0) == 0;
      if (short_range && r2 < rc * rc) {
        double e_cut, unused;
        textbook_pair(t, a, b, r2, energy, f_over_r);
        if (t.shift) {
          textbook_pair(t, a, b, rc * rc, e_cut, unused);
          energy -= e_cut;
        }
      }
      if (q && r2 < coulomb.cutoff * coulomb.cutoff) {
        double ec, fc;
        textbook_coulomb(coulomb, (*q)[i] * (*q)[j], r2, ec, fc);
        energy += ec;
        f_over_r += fc;
      }
      if (energy == 0 && f_over_r == 0) continue;
      for (int k = 0; k < 3; ++k) {
        r.f[3 * i + k] += f_over_r * d[k];
        r.f[3 * j + k] -= f_over_r * d[k];
      }
      r.energy += energy;
      r.virial += f_over_r * r2;
    }
  return r;
}

// Host copies of a system's positions and types (in its current, cell-sorted order).
template <class Sys>
void download(const Sys& sys, std::vector<double>& x, std::vector<int>& type) {
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.positions());
  auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.types());
  const int n = sys.size();
  x.resize(3 * n);
  type.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) x[3 * i + d] = double(hx(i, d));
    type[i] = ht(i);
  }
}

template <class Sys>
std::vector<double> download_forces(const Sys& sys) {
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.forces());
  std::vector<double> f(3 * sys.size());
  for (int i = 0; i < sys.size(); ++i)
    for (int d = 0; d < 3; ++d) f[3 * i + d] = double(hf(i, d));
  return f;
}

// max |a - b| / max |b|
inline double max_relative(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::fabs(a[k] - b[k]));
    scale = std::max(scale, std::fabs(b[k]));
  }
  return diff / scale;
}

// Every variant this backend supports.
template <class Space>
std::vector<std::pair<ForceOptions, Layout>> all_variants() {
  std::vector<std::pair<ForceOptions, Layout>> out;
  for (const auto list : {ListKind::Full, ListKind::Half})
    for (const auto scatter : {Scatter::Atomic, Scatter::Duplicated}) {
      if (list == ListKind::Full && scatter == Scatter::Duplicated) continue;
      for (const auto parallel : {Parallel::Thread, Parallel::Team})
        for (const auto layout : {Layout::Csr, Layout::Padded, Layout::Transposed})
          for (const auto positions : {Positions::Split, Positions::Packed}) {
            const ForceOptions o{list, scatter, parallel, positions};
            if (ForceCompute<Space, double, LjCut>::supports(o)) out.push_back({o, layout});
          }
    }
  return out;
}

}  // namespace hayate::md::test
