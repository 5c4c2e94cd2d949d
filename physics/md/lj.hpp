#pragma once
// The Lennard-Jones pair interaction in reduced units, written once: every force kernel variant
// (full or half list, any scatter, thread or warp per atom, float or double) calls lj_pair.
#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace hayate::md {

inline constexpr int max_types = 4;

// Per type pair: lj1 = 48 eps s^12, lj2 = 24 eps s^6 (force); lj3 = 4 eps s^12, lj4 = 4 eps s^6
// (energy), as LAMMPS' pair lj/cut stores them; cutsq is the squared interaction cutoff.
template <class Real>
struct PairCoeff {
  Real lj1 = 0, lj2 = 0, lj3 = 0, lj4 = 0, cutsq = 0;
  Real offset = 0;  // energy at the cutoff, subtracted when the potential is shifted
};

// fpair = |F| / r, so the force on i from j is (x_i - x_j) * fpair.
template <class Real>
struct PairForce {
  Real fpair;
  Real energy;
};

// Computed for every list entry and multiplied by 0 or 1, not branched on: about a quarter of
// the entries lie in the skin, and a CPU mispredicts that branch (gcc turns a select back into
// it); a GPU warp runs both ways anyway. Exact: x * 1 = x, and x * 0 adds nothing. r2 > 0 for
// every entry (an atom is never its own neighbor), so nothing is infinite.
template <class Real>
KOKKOS_INLINE_FUNCTION PairForce<Real> lj_pair(Real r2, const PairCoeff<Real>& c) {
  const Real in = r2 < c.cutsq ? Real(1) : Real(0);
  const Real r2inv = Real(1) / r2;
  const Real r6inv = r2inv * r2inv * r2inv;
  const Real fpair = r6inv * (c.lj1 * r6inv - c.lj2) * r2inv;
  const Real energy = r6inv * (c.lj3 * r6inv - c.lj4) - c.offset;
  return {in * fpair, in * energy};
}

// Small fixed-size table passed by value into kernels (a few hundred bytes of kernel arguments,
// read through the constant cache on GPUs).
template <class Real>
struct PairTable {
  int ntypes = 1;
  PairCoeff<Real> coeff[max_types][max_types];
  Real cutneighsq[max_types][max_types] = {};  // (cutoff + skin)^2
};

// Host-side description of the types and their pair parameters, in double.
struct TypeSet {
  std::vector<std::string> names;
  std::vector<double> mass;
  double epsilon[max_types][max_types] = {};
  double sigma[max_types][max_types] = {};
  double cutoff[max_types][max_types] = {};
  bool shift = false;  // energy shifted to zero at the cutoff (LAMMPS pair_modify shift yes)

  // One type "A" in reduced units (mass, epsilon, sigma 1), the in.lj set-up.
  static TypeSet single(double cutoff = 2.5) {
    TypeSet t;
    t.names = {"A"};
    t.mass = {1.0};
    t.epsilon[0][0] = 1.0;
    t.sigma[0][0] = 1.0;
    t.cutoff[0][0] = cutoff;
    return t;
  }

  int size() const { return static_cast<int>(names.size()); }
  double max_cutoff() const {
    double m = 0;
    for (int a = 0; a < size(); ++a)
      for (int b = 0; b < size(); ++b) m = cutoff[a][b] > m ? cutoff[a][b] : m;
    return m;
  }
  template <class Real>
  PairTable<Real> table(double skin) const {
    PairTable<Real> t;
    t.ntypes = size();
    for (int a = 0; a < size(); ++a)
      for (int b = 0; b < size(); ++b) {
        const double s6 =
            sigma[a][b] * sigma[a][b] * sigma[a][b] * sigma[a][b] * sigma[a][b] * sigma[a][b];
        const double e = epsilon[a][b];
        auto& c = t.coeff[a][b];
        c.lj1 = Real(48.0 * e * s6 * s6);
        c.lj2 = Real(24.0 * e * s6);
        c.lj3 = Real(4.0 * e * s6 * s6);
        c.lj4 = Real(4.0 * e * s6);
        c.cutsq = Real(cutoff[a][b] * cutoff[a][b]);
        if (shift) {
          const double sr6 = s6 / (cutoff[a][b] * cutoff[a][b] * cutoff[a][b] * cutoff[a][b] *
                                   cutoff[a][b] * cutoff[a][b]);
          c.offset = Real(4.0 * e * sr6 * (sr6 - 1.0));
        }
        const double cn = cutoff[a][b] + skin;
        t.cutneighsq[a][b] = Real(cn * cn);
      }
    return t;
  }
};

}  // namespace hayate::md
