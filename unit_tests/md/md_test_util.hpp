#pragma once
// Small systems and O(N^2) double-precision references for the MD tests.
#include "md/md_setup.hpp"
#include "md/md_system.hpp"
#include "util/random.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hayate::md::test {

// Two types with different sizes and cutoffs, so the per-pair tables are exercised.
inline TypeSet two_types(double skin_unused = 0) {
  (void)skin_unused;
  TypeSet t;
  t.names = {"A", "B"};
  t.mass = {1.0, 2.0};
  const double eps[2] = {1.0, 0.5}, sig[2] = {1.0, 1.1}, cut[2] = {2.5, 2.2};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      t.epsilon[a][b] = std::sqrt(eps[a] * eps[b]);
      t.sigma[a][b] = 0.5 * (sig[a] + sig[b]);
      t.cutoff[a][b] = 0.5 * (cut[a] + cut[b]);
    }
  return t;
}

// fcc lattice with every atom displaced by up to `rattle` per direction (deterministic).
inline InitialState rattled_lattice(int cells, double density, double rattle, bool two,
                                    double temperature = 1.0) {
  InitialState s =
      fcc_lattice(density, cells, cells, cells, two ? std::vector<int>{0, 1} : std::vector<int>{0});
  s.types = two ? two_types() : TypeSet::single();
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

// Every pair once, in double, from the textbook LJ expressions (not from lj_pair).
inline Reference reference_forces(const std::vector<double>& x, const std::vector<int>& type,
                                  const TypeSet& t, const double box[3]) {
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
      const double rc = t.cutoff[a][b];
      if (r2 >= rc * rc) continue;
      const double s2 = t.sigma[a][b] * t.sigma[a][b] / r2;
      const double s6 = s2 * s2 * s2;
      const double e = t.epsilon[a][b];
      double energy = 4.0 * e * (s6 * s6 - s6);
      if (t.shift) {
        const double c2 = t.sigma[a][b] * t.sigma[a][b] / (rc * rc);
        const double c6 = c2 * c2 * c2;
        energy -= 4.0 * e * (c6 * c6 - c6);
      }
      const double f_over_r = 24.0 * e * (2.0 * s6 * s6 - s6) / r2;
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
            if (ForceCompute<Space, double>::supports(o)) out.push_back({o, layout});
          }
    }
  return out;
}

}  // namespace hayate::md::test
