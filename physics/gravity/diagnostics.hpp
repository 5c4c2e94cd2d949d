#pragma once
// Conserved quantities and the virial ratio, reduced on the device.
#include "gravity/state.hpp"

namespace hayate::gravity {

struct Thermo {
  double ke = 0, pe = 0;
  double p[3] = {0, 0, 0};  // linear momentum
  double l[3] = {0, 0, 0};  // angular momentum about the origin
  double etotal() const { return ke + pe; }
  double virial_ratio() const { return pe != 0 ? ke / (pe < 0 ? -pe : pe) : 0.0; }
};

// One pass over the particles: 2K, sum m phi, momentum, angular momentum (8 sums).
template <class Space>
struct ThermoSums {
  using value_type = double[];
  using size_type = int;
  static constexpr int count = 8;
  int value_count = count;
  typename Particles<Space>::Vec x, v;
  typename Particles<Space>::Scalar m, pot;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, value_type s) const {
    const double mi = m(i);
    s[0] += mi * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
    s[1] += mi * pot(i);
    for (int c = 0; c < 3; ++c) {
      const int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      s[2 + c] += mi * v(i, c);
      s[5 + c] += mi * (x(i, c1) * v(i, c2) - x(i, c2) * v(i, c1));
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type s) const {
    for (int k = 0; k < count; ++k) s[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(value_type dst, const value_type src) const {
    for (int k = 0; k < count; ++k) dst[k] += src[k];
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void join(volatile value_type dst, const volatile value_type src) const {
    for (int k = 0; k < count; ++k) dst[k] += src[k];
  }
};

// p.pot must hold the potential (G included) of the current positions.
template <class Space>
Thermo measure_thermo(const Space& space, const Particles<Space>& p) {
  ThermoSums<Space> f;
  f.x = p.x;
  f.v = p.v;
  f.m = p.m;
  f.pot = p.pot;
  double s[ThermoSums<Space>::count];
  Kokkos::parallel_reduce("hayate::gravity::thermo", Kokkos::RangePolicy<Space>(space, 0, p.n), f,
                          s);
  Thermo t;
  t.ke = 0.5 * s[0];
  t.pe = 0.5 * s[1];
  for (int c = 0; c < 3; ++c) {
    t.p[c] = s[2 + c];
    t.l[c] = s[5 + c];
  }
  return t;
}

}  // namespace hayate::gravity
