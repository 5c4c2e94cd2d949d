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

template <class Space, class F>
double particle_sum(const int n, const F& f) {
  double s = 0;
  Kokkos::parallel_reduce(
      "hayate::gravity::diagnostics", Kokkos::RangePolicy<Space>(0, n),
      KOKKOS_LAMBDA(const int i, double& acc) { acc += f(i); }, s);
  return s;
}

// p.pot must hold the potential (G included) of the current positions.
template <class Space>
Thermo measure_thermo(const Particles<Space>& p) {
  const auto x = p.x, v = p.v;
  const auto m = p.m, pot = p.pot;
  Thermo t;
  t.ke = 0.5 * particle_sum<Space>(
                   p.n, KOKKOS_LAMBDA(const int i) {
                     return m(i) * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
                   });
  t.pe = 0.5 * particle_sum<Space>(
                   p.n, KOKKOS_LAMBDA(const int i) { return m(i) * pot(i); });
  for (int c = 0; c < 3; ++c) {
    const int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
    t.p[c] = particle_sum<Space>(
        p.n, KOKKOS_LAMBDA(const int i) { return m(i) * v(i, c); });
    t.l[c] = particle_sum<Space>(
        p.n,
        KOKKOS_LAMBDA(const int i) { return m(i) * (x(i, c1) * v(i, c2) - x(i, c2) * v(i, c1)); });
  }
  return t;
}

}  // namespace hayate::gravity
