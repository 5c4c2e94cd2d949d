#pragma once
// The physics of gravity, written once: the softened pair interaction every force variant (direct
// tiles, j-split, Hermite, tree nodes, the serial reference in the tests) evaluates.
#include "compat/kokkos_compat.hpp"
#include "exec/fast_math.hpp"

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
//   d = x_j - x_i, r2 = |d|^2 + eps^2, inv_r = r2^(-1/2), m_inv_r3 = m_j inv_r^3,
// so the acceleration is m_inv_r3 * d and the potential -m_j inv_r (times G, applied once per
// target). r2 is accumulated as dx^2 + (dy^2 + (dz^2 + eps^2)) so it contracts to three fused
// multiply-adds: with the differences, rsqrt, three products and the three accumulating FMAs
// that is 12 FP32-pipe instructions per interaction. The self pair has d = 0 and contributes
// no force.
template <class T>
struct PairTerms {
  T dx, dy, dz, r2, inv_r, m_inv_r, m_inv_r3;
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION PairTerms<T> gravity_pair(const T xi, const T yi, const T zi,
                                                      const T xj, const T yj, const T zj,
                                                      const T mj, const T eps2) {
  PairTerms<T> p;
  p.dx = xj - xi;
  p.dy = yj - yi;
  p.dz = zj - zi;
  p.r2 = p.dx * p.dx + (p.dy * p.dy + (p.dz * p.dz + eps2));
  p.inv_r = core::rsqrt(p.r2);
  p.m_inv_r = mj * p.inv_r;
  p.m_inv_r3 = p.m_inv_r * p.inv_r * p.inv_r;
  return p;
}

// Pair potential term with the self pair (r2 == eps2) excluded, so a run with tiny softening
// keeps a finite, correct energy. Pairs closer than ~1e-3 eps in float may round to r2 == eps2
// and are skipped as well; their potential is bounded by m/eps and they exert no force anyway.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T pair_potential(const PairTerms<T>& p, const T eps2) {
  return p.r2 > eps2 ? -p.m_inv_r : T(0);
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
// Aligned to two components so its six load as three 8-byte (float) or 16-byte (double) words.
template <class T>
struct alignas(2 * sizeof(T)) Quadrupole {
  T xx, yy, zz, xy, xz, yz;
};

// A node's monopole and quadrupole at the target, from the pair geometry p (d = com - x_i,
// softened r):
//   a = (m/r^3 + 5/2 (d.Q.d)/r^7) d - (Q d)/r^5,   phi = -m/r - 1/2 (d.Q.d)/r^5   (times G).
// Both terms share one coefficient of d, so a node costs ~32 FP32-pipe instructions instead of
// ~40 for the monopole and the quadrupole correction evaluated apart.
template <class T>
struct NodeTerms {
  T c;       // coefficient of d
  T inv_r5;  // coefficient of -(Q d)
  T qx, qy, qz;
  T dqd;  // d.Q.d
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION NodeTerms<T> node_terms(const PairTerms<T>& p, const T m,
                                                    const Quadrupole<T>& q) {
  NodeTerms<T> n;
  n.qx = q.xx * p.dx + q.xy * p.dy + q.xz * p.dz;
  n.qy = q.xy * p.dx + q.yy * p.dy + q.yz * p.dz;
  n.qz = q.xz * p.dx + q.yz * p.dy + q.zz * p.dz;
  n.dqd = p.dx * n.qx + p.dy * n.qy + p.dz * n.qz;
  const T inv_r2 = p.inv_r * p.inv_r;
  const T inv_r3 = inv_r2 * p.inv_r;
  n.inv_r5 = inv_r3 * inv_r2;
  n.c = T(2.5) * (n.dqd * n.inv_r5) * inv_r2 + m * inv_r3;
  return n;
}

// Floating-point operations counted per interaction by the usual conventions (for % of peak).
inline constexpr double flops_per_interaction_20 = 20.0;
inline constexpr double flops_per_interaction_38 = 38.0;

}  // namespace hayate::gravity
