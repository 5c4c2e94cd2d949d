#pragma once
// The physics of gravity, written once: the softened pair interaction every force variant (direct
// tiles, j-split, Hermite, tree nodes, the serial reference in the tests) evaluates.
#include "compat/kokkos_compat.hpp"

namespace hayate::gravity {

// A source or target: position and mass packed so one 16-byte (float) or 32-byte (double) load
// fetches a whole particle into team scratch.
template <class T>
struct alignas(4 * sizeof(T)) Body {
  T x, y, z, m;
};

// Velocity, padded to the same shape as Body for the Hermite kernels.
template <class T>
struct alignas(4 * sizeof(T)) Velocity {
  T x, y, z, pad;
};

// Geometry of one pair i <- j with Plummer softening eps:
//   d = x_j - x_i, inv_r = (|d|^2 + eps^2)^(-1/2), m_inv_r3 = m_j inv_r^3,
// so the acceleration is m_inv_r3 * d and the potential -m_j inv_r (times G, applied once per
// target). The self pair gives d = 0 and contributes no force; callers that need the potential
// skip it through d2 == 0.
template <class T>
struct PairTerms {
  T dx, dy, dz, d2, inv_r, m_inv_r, m_inv_r3;
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION PairTerms<T> gravity_pair(const T xi, const T yi, const T zi,
                                                      const T xj, const T yj, const T zj,
                                                      const T mj, const T eps2) {
  PairTerms<T> p;
  p.dx = xj - xi;
  p.dy = yj - yi;
  p.dz = zj - zi;
  p.d2 = p.dx * p.dx + p.dy * p.dy + p.dz * p.dz;
  p.inv_r = compat::rsqrt(p.d2 + eps2);
  p.m_inv_r = mj * p.inv_r;
  p.m_inv_r3 = p.m_inv_r * p.inv_r * p.inv_r;
  return p;
}

// Pair potential term with the self pair excluded (so a run with tiny softening keeps a finite,
// correct energy).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T pair_potential(const PairTerms<T>& p) {
  return p.d2 > T(0) ? -p.m_inv_r : T(0);
}

// Jerk term of the pair (time derivative of the acceleration) for the Hermite integrator:
//   j = m_j/r^3 [ dv - 3 (d.dv) d / r^2 ].
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void pair_jerk(const PairTerms<T>& p, const T dvx, const T dvy,
                                           const T dvz, T& jx, T& jy, T& jz) {
  const T rv = T(3) * (p.dx * dvx + p.dy * dvy + p.dz * dvz) * p.inv_r * p.inv_r;
  jx = p.m_inv_r3 * (dvx - rv * p.dx);
  jy = p.m_inv_r3 * (dvy - rv * p.dy);
  jz = p.m_inv_r3 * (dvz - rv * p.dz);
}

// Traceless quadrupole moment of a tree node about its centre of mass:
//   Q = sum_k m_k (3 s_k s_k^T - |s_k|^2 I), s_k = x_k - com.
template <class T>
struct Quadrupole {
  T xx, yy, zz, xy, xz, yz;
};

// Quadrupole correction to a node's monopole field at the target, from the same pair terms
// (d = com - x_i, softened 1/r):
//   a += -Q d / r^5 + 5/2 (d.Q.d) d / r^7,   phi += -1/2 (d.Q.d) / r^5   (times G).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void quadrupole_terms(const PairTerms<T>& p, const Quadrupole<T>& q,
                                                  T& ax, T& ay, T& az, T& phi) {
  const T qx = q.xx * p.dx + q.xy * p.dy + q.xz * p.dz;
  const T qy = q.xy * p.dx + q.yy * p.dy + q.yz * p.dz;
  const T qz = q.xz * p.dx + q.yz * p.dy + q.zz * p.dz;
  const T dqd = p.dx * qx + p.dy * qy + p.dz * qz;
  const T inv_r2 = p.inv_r * p.inv_r;
  const T inv_r5 = inv_r2 * inv_r2 * p.inv_r;
  const T f = T(2.5) * dqd * inv_r5 * inv_r2;
  ax = f * p.dx - qx * inv_r5;
  ay = f * p.dy - qy * inv_r5;
  az = f * p.dz - qz * inv_r5;
  phi = -T(0.5) * dqd * inv_r5;
}

// Floating-point operations counted per interaction by the usual conventions (for % of peak).
inline constexpr double flops_per_interaction_20 = 20.0;
inline constexpr double flops_per_interaction_38 = 38.0;

}  // namespace hayate::gravity
