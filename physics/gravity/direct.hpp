#pragma once
// Direct O(N^2) summation. One team kernel (GPU Gems 3 ch. 31): each thread owns IPT target
// particles in registers, the team stages tiles of source particles through scratch memory, and
// the inner loop over the tile calls the pair function. For small N the source range is split
// across teams (j-split) so the device has enough threads; the partial sums are then added in a
// fixed order by a second kernel, which keeps results deterministic (bitwise restarts).
// Variants (what is accumulated, the precision, the potential) are template policies that all
// call gravity_pair(); there is one loop.
#include "exec/exec_traits.hpp"
#include "exec/unroll.hpp"
#include "gravity/pair.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace hayate::gravity {

enum class Precision { Float, Double, Mixed };

inline Precision parse_precision(const std::string& name) {
  if (name == "float") return Precision::Float;
  if (name == "double") return Precision::Double;
  if (name == "mixed") return Precision::Mixed;
  throw std::invalid_argument("unknown precision '" + name + "'");
}

inline const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Float:
      return "float";
    case Precision::Double:
      return "double";
    case Precision::Mixed:
      return "mixed";
  }
  return "?";
}

// Outputs in double precision, indexed by target (compact for a subset of targets).
template <class Space>
struct ForceOutput {
  using Mem = typename Space::memory_space;
  Kokkos::View<double* [3], Mem> acc;
  Kokkos::View<double*, Mem> pot;       // only written when the potential is requested
  Kokkos::View<double* [3], Mem> jerk;  // only written by the Hermite policy
};

// Acceleration and potential: the collisionless (leapfrog, block step) force.
// T: precision of the pair terms; Acc: precision of the sums (mixed = float terms, double sums).
template <class T, class AccT>
struct MonopolePolicy {
  using Real = T;
  using Acc = AccT;
  using Source = Body<T>;
  static constexpr int components = 4;  // ax, ay, az, phi

  // Particle i of double-precision state as a source (velocities unused).
  template <class X, class V, class M>
  KOKKOS_INLINE_FUNCTION static Source load(const X& x, const V&, const M& m, const int i) {
    return Source{T(x(i, 0)), T(x(i, 1)), T(x(i, 2)), T(m(i))};
  }

  template <bool WithPotential>
  KOKKOS_FORCEINLINE_FUNCTION static void interact(const Source& ti, const Source& sj, const T eps2,
                                                   Acc* v) {
    const PairTerms<T> p = gravity_pair(ti.x, ti.y, ti.z, sj.x, sj.y, sj.z, sj.m, eps2);
    v[0] += Acc(p.m_inv_r3 * p.dx);
    v[1] += Acc(p.m_inv_r3 * p.dy);
    v[2] += Acc(p.m_inv_r3 * p.dz);
    if (WithPotential) v[3] += Acc(pair_potential(p, eps2));
  }

  // A tree node: its monopole and quadrupole (node_terms). With a float accumulator each
  // component takes two fused multiply-adds; a wider one gets the component in one add.
  template <bool WithPotential>
  KOKKOS_FORCEINLINE_FUNCTION static void interact_node(const Source& ti, const Source& node,
                                                        const Quadrupole<T>& q, const T eps2,
                                                        Acc* v) {
    const PairTerms<T> p = gravity_pair(ti.x, ti.y, ti.z, node.x, node.y, node.z, node.m, eps2);
    const NodeTerms<T> n = node_terms(p, node.m, q);
    if (std::is_same<Acc, T>::value) {
      v[0] += Acc(n.c * p.dx);
      v[1] += Acc(n.c * p.dy);
      v[2] += Acc(n.c * p.dz);
      v[0] -= Acc(n.inv_r5 * n.qx);
      v[1] -= Acc(n.inv_r5 * n.qy);
      v[2] -= Acc(n.inv_r5 * n.qz);
    } else {
      v[0] += Acc(n.c * p.dx - n.inv_r5 * n.qx);
      v[1] += Acc(n.c * p.dy - n.inv_r5 * n.qy);
      v[2] += Acc(n.c * p.dz - n.inv_r5 * n.qz);
    }
    if (WithPotential) v[3] += Acc(pair_potential(p, eps2) - T(0.5) * n.dqd * n.inv_r5);
  }
};

// Acceleration, potential and jerk for the 4th-order Hermite integrator.
template <class T, class AccT>
struct HermitePolicy {
  using Real = T;
  using Acc = AccT;
  struct Source {
    Body<T> p;
    Velocity<T> v;
  };
  static constexpr int components = 7;  // ax, ay, az, phi, jx, jy, jz

  template <class X, class V, class M>
  KOKKOS_INLINE_FUNCTION static Source load(const X& x, const V& v, const M& m, const int i) {
    Source s;
    s.p = Body<T>{T(x(i, 0)), T(x(i, 1)), T(x(i, 2)), T(m(i))};
    s.v = Velocity<T>{T(v(i, 0)), T(v(i, 1)), T(v(i, 2)), T(0)};
    return s;
  }

  template <bool WithPotential>
  KOKKOS_FORCEINLINE_FUNCTION static void interact(const Source& ti, const Source& sj, const T eps2,
                                                   Acc* v) {
    const PairTerms<T> p =
        gravity_pair(ti.p.x, ti.p.y, ti.p.z, sj.p.x, sj.p.y, sj.p.z, sj.p.m, eps2);
    v[0] += Acc(p.m_inv_r3 * p.dx);
    v[1] += Acc(p.m_inv_r3 * p.dy);
    v[2] += Acc(p.m_inv_r3 * p.dz);
    if (WithPotential) v[3] += Acc(pair_potential(p, eps2));
    T jx, jy, jz;
    pair_jerk(p, sj.v.x - ti.v.x, sj.v.y - ti.v.y, sj.v.z - ti.v.z, jx, jy, jz);
    v[4] += Acc(jx);
    v[5] += Acc(jy);
    v[6] += Acc(jz);
  }
};

// Writes one target's sums (times G) into the outputs.
template <class Space, int C, bool WithPotential, class Acc>
KOKKOS_INLINE_FUNCTION void store_sums(const ForceOutput<Space>& out, const int i, const Acc* v,
                                       const double G) {
  out.acc(i, 0) = G * double(v[0]);
  out.acc(i, 1) = G * double(v[1]);
  out.acc(i, 2) = G * double(v[2]);
  if (WithPotential) out.pot(i) = G * double(v[3]);
  if (C == 7) {
    out.jerk(i, 0) = G * double(v[4]);
    out.jerk(i, 1) = G * double(v[5]);
    out.jerk(i, 2) = G * double(v[6]);
  }
}

// Resolved launch shape of the tile kernel.
// A launch shape. What a caller asks DirectSolver for: 0 in a field = the space's choice
// (DirectDefaults; splits: choose_splits), which is also what a default-constructed shape asks.
struct DirectShape {
  int team_size = 0;     // threads per team
  int tile = 0;          // sources per scratch tile
  int splits = 0;        // teams sharing one block of targets (j-split)
  int i_per_thread = 0;  // targets per thread (1, 2, 4, 8)
};

// Per-space defaults, from the space's traits: on GPUs a team of ExecTraits::team_size threads
// with one target each (four from 65,536 targets on, where the device is full anyway and each
// staged source is reused four times); on CPUs a team is one thread holding 8 targets, which
// vectorises over the targets and reuses each tile 8 times. `i_per_thread` is the Hermite
// kernel's (compiled once); the monopole kernel takes auto_i_per_thread(targets) unless
// tuning.i_per_thread says otherwise.
template <class Space>
struct DirectDefaults {
  static constexpr bool gpu = core::ExecTraits<Space>::is_gpu;
  static constexpr int team_size = core::ExecTraits<Space>::team_size;
  static constexpr int tile = 256;
  static constexpr int i_per_thread = gpu ? 1 : 8;
  // tuning.i_per_thread: auto.
  static int auto_i_per_thread(std::int64_t n_targets) {
    if (!gpu) return i_per_thread;
    return n_targets >= (std::int64_t(1) << 16) ? 4 : 1;
  }
};

// Chooses the j-split so that targets x splits threads reach the space's concurrency, with at
// least one full tile of sources per team. `requested` > 0 forces a split count.
inline int choose_splits(std::int64_t n_targets, std::int64_t n_sources_padded, int tile,
                         int i_per_thread, std::int64_t concurrency, int requested) {
  const std::int64_t max_splits = std::max<std::int64_t>(1, n_sources_padded / tile);
  if (requested > 0) return int(std::min<std::int64_t>(requested, max_splits));
  const std::int64_t threads =
      std::max<std::int64_t>(1, (n_targets + i_per_thread - 1) / i_per_thread);
  const std::int64_t want = (concurrency + threads - 1) / threads;
  return int(std::max<std::int64_t>(1, std::min(want, max_splits)));
}

// j-split partial sums (splits, components, targets), targets fastest on every backend so a
// warp's stores and loads of one component are contiguous (the device default, LayoutLeft, put
// a target's splits side by side and scattered a warp's accesses over 32 lines).
template <class Acc, class Mem>
using SplitPartial = Kokkos::View<Acc***, Kokkos::LayoutRight, Mem>;

template <class Space, class Policy, bool WithPotential, int IPT>
struct DirectTileKernel {
  using T = typename Policy::Real;
  using Acc = typename Policy::Acc;
  using Source = typename Policy::Source;
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = Kokkos::View<Source*, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int C = Policy::components;

  Kokkos::View<const Source*, Mem> targets;  // n_targets used
  Kokkos::View<const Source*, Mem> sources;  // padded to a multiple of tile with zero masses
  SplitPartial<Acc, Mem> partial;            // (splits, C, n_targets) when splits > 1
  ForceOutput<Space> out;
  int n_targets = 0;
  int tile = 0;
  int splits = 1;
  int split_len = 0;  // sources per split, a multiple of tile
  T eps2 = 0;
  double G = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int split = team.league_rank() % splits;
    const int block = team.league_rank() / splits;
    const int ts = team.team_size();
    const int rank = team.team_rank();
    const int base = block * ts * IPT;

    Source ti[IPT];
    Acc v[IPT][C];
    for (int k = 0; k < IPT; ++k) {
      const int i = base + k * ts + rank;  // strided so loads of a team are contiguous
      ti[k] = targets(i < n_targets ? i : n_targets - 1);
      for (int c = 0; c < C; ++c) v[k][c] = Acc(0);
    }

    const int j_begin = split * split_len;
    const int j_end =
        j_begin + split_len < int(sources.extent(0)) ? j_begin + split_len : int(sources.extent(0));
    Scratch staged(team.team_scratch(0), tile);
    const T e2 = eps2;
    for (int j0 = j_begin; j0 < j_end; j0 += tile) {
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile),
                           [&](const int t) { staged(t) = sources(j0 + t); });
      team.team_barrier();
      HAYATE_DEVICE_UNROLL(8)
      for (int t = 0; t < tile; ++t) {
        const Source sj = staged(t);
        for (int k = 0; k < IPT; ++k) Policy::template interact<WithPotential>(ti[k], sj, e2, v[k]);
      }
    }

    for (int k = 0; k < IPT; ++k) {
      const int i = base + k * ts + rank;
      if (i >= n_targets) continue;
      if (splits == 1) {
        store_sums<Space, C, WithPotential>(out, i, v[k], G);
      } else {
        for (int c = 0; c < C; ++c)
          if (WithPotential || c != 3) partial(split, c, i) = v[k][c];
      }
    }
  }
};

// Adds the j-split partial sums in split order and stores them: one thread per (component,
// target), its loads issued in batches. A thread per target looping over splits and components
// waited on one round trip per split. The sum runs left to right over the splits either way.
template <class Space, class Policy, bool WithPotential>
struct DirectSplitReduce {
  using Acc = typename Policy::Acc;
  static constexpr int C = Policy::components;
  // Components written: the potential (3) only when requested.
  static constexpr int used = WithPotential ? C : C - 1;
  SplitPartial<Acc, typename Space::memory_space> partial;
  ForceOutput<Space> out;
  int n = 0;
  int splits = 1;
  double G = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const int slot = t / n;  // consecutive threads take consecutive targets
    const int i = t - slot * n;
    const int c = !WithPotential && slot >= 3 ? slot + 1 : slot;
    constexpr int batch = 8;
    Acc sum = partial(0, c, i);
    int s = 1;
    for (; s + batch <= splits; s += batch) {
      Acc b[batch];
      for (int k = 0; k < batch; ++k) b[k] = partial(s + k, c, i);
      for (int k = 0; k < batch; ++k) sum += b[k];
    }
    for (; s < splits; ++s) sum += partial(s, c, i);
    const double value = G * double(sum);
    if (c < 3)
      out.acc(i, c) = value;
    else if (c == 3)
      out.pot(i) = value;
    else
      out.jerk(i, c - 4) = value;
  }
};

// Launches the tile kernel (and the split reduction). `sources.extent(0)` must be a multiple of
// shape.tile; `partial` is resized when the split needs it.
template <class Space, class Policy, bool WithPotential, int IPT>
void launch_direct(
    const Space& space,
    const Kokkos::View<const typename Policy::Source*, typename Space::memory_space>& targets,
    const int n_targets,
    const Kokkos::View<const typename Policy::Source*, typename Space::memory_space>& sources,
    const typename Policy::Real eps2, const double G, const DirectShape& shape,
    const ForceOutput<Space>& out,
    SplitPartial<typename Policy::Acc, typename Space::memory_space>& partial) {
  if (n_targets == 0) return;
  using Kernel = DirectTileKernel<Space, Policy, WithPotential, IPT>;
  const int n_src = int(sources.extent(0));
  if (shape.tile <= 0 || n_src % shape.tile != 0)
    throw std::logic_error("direct: sources are not padded to the tile size");
  Kernel k;
  k.targets = targets;
  k.sources = sources;
  k.out = out;
  k.n_targets = n_targets;
  k.tile = shape.tile;
  k.splits = std::max(1, shape.splits);
  const int tiles = n_src / shape.tile;
  k.split_len = ((tiles + k.splits - 1) / k.splits) * shape.tile;
  k.eps2 = eps2;
  k.G = G;
  if (k.splits > 1) {
    if (int(partial.extent(0)) < k.splits || int(partial.extent(2)) < n_targets)
      partial = SplitPartial<typename Policy::Acc, typename Space::memory_space>(
          Kokkos::view_alloc(std::string("hayate::gravity::direct_partial"),
                             Kokkos::WithoutInitializing),
          k.splits, Policy::components, n_targets);
    k.partial = partial;
  }
  const int per_team = shape.team_size * IPT;
  const int blocks = (n_targets + per_team - 1) / per_team;
  Kokkos::TeamPolicy<Space> policy(space, blocks * k.splits, shape.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::Scratch::shmem_size(shape.tile)));
  Kokkos::parallel_for(
      WithPotential ? "hayate::gravity::direct_tiles_potential" : "hayate::gravity::direct_tiles",
      policy, k);
  if (k.splits > 1) {
    using Reduce = DirectSplitReduce<Space, Policy, WithPotential>;
    Reduce r{partial, out, n_targets, k.splits, G};
    Kokkos::parallel_for("hayate::gravity::direct_split_reduce",
                         Kokkos::RangePolicy<Space>(space, 0, Reduce::used * n_targets), r);
  }
}

}  // namespace hayate::gravity
