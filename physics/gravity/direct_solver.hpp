#pragma once
// The direct solver as the problem uses it: packs double-precision state into the kernel's
// precision (padded to whole tiles), resolves the launch shape and dispatches the precision
// once, at the top.
#include "gravity/direct.hpp"
#include "gravity/state.hpp"

#include <Kokkos_Core.hpp>

namespace hayate::gravity {

// Which particles receive forces: all of them, or those listed in `index` (outputs compact).
// `row`, when given with `index`, is its inverse for every particle (the output row of
// particle i, or -1): a solver that needs that map reads it instead of building one.
template <class Space>
struct Targets {
  Kokkos::View<const int*, typename Space::memory_space> index;  // empty = all particles
  int count = 0;
  Kokkos::View<const int*, typename Space::memory_space> row;  // optional
  // The target count the launch shape is chosen for (0: count). A part of a larger set of
  // targets (one rank's share) launches with the whole set's j-splits, so its sums are the
  // whole set's bit for bit.
  int shape_count = 0;
};

template <class Space>
class DirectSolver {
 public:
  using Mem = typename Space::memory_space;
  using Vec = typename Particles<Space>::Vec;
  using Scalar = typename Particles<Space>::Scalar;

  // Launches on `space`. requested: team_size / tile / splits / i_per_thread, 0 = the space's
  // default (splits: automatic).
  DirectSolver(const Space& space, Precision precision, DirectShape requested, double G, double eps)
      : space_(space), precision_(precision), requested_(requested), G_(G), eps_(eps) {
    if (requested_.team_size <= 0) requested_.team_size = DirectDefaults<Space>::team_size;
    if (requested_.tile <= 0) requested_.tile = DirectDefaults<Space>::tile;
  }

  Precision precision() const { return precision_; }
  const Space& space() const { return space_; }

  // The shape a call with these sizes launches (the Hermite kernel: `hermite`).
  DirectShape shape(std::int64_t n_targets, std::int64_t n_sources, bool hermite = false) const {
    DirectShape s = requested_;
    if (hermite)
      s.i_per_thread = DirectDefaults<Space>::i_per_thread;
    else if (s.i_per_thread <= 0)
      s.i_per_thread = DirectDefaults<Space>::auto_i_per_thread(n_targets);
    const std::int64_t padded = (n_sources + s.tile - 1) / s.tile * s.tile;
    s.splits = choose_splits(n_targets, padded, s.tile, s.i_per_thread, space_.concurrency(),
                             requested_.splits);
    return s;
  }

  // Accelerations (and the potential) of the targets from all n particles.
  void compute(const Vec& x, const Scalar& m, int n, const Targets<Space>& targets,
               bool with_potential, const ForceOutput<Space>& out);

  // Accelerations, jerks (and the potential) of the targets, for the Hermite integrator.
  void compute_hermite(const Vec& x, const Vec& v, const Scalar& m, int n,
                       const Targets<Space>& targets, bool with_potential,
                       const ForceOutput<Space>& out);

  // Packs particle `index(k)` (or k) into entry k; entries past `count` are zero-mass padding.
  // Public only because nvcc forbids device lambdas in private member functions.
  template <class Policy>
  static void pack(const Space& space, const Kokkos::View<typename Policy::Source*, Mem>& dst,
                   const Vec& x, const Vec& v, const Scalar& m,
                   const Kokkos::View<const int*, Mem>& index, int count) {
    using Source = typename Policy::Source;
    const bool indexed = index.extent(0) > 0;
    Kokkos::parallel_for(
        "hayate::gravity::pack", Kokkos::RangePolicy<Space>(space, 0, dst.extent(0)),
        KOKKOS_LAMBDA(const int k) {
          Source s{};
          if (k < count) s = Policy::load(x, v, m, indexed ? index(k) : k);
          dst(k) = s;
        });
  }

 private:
  template <class Policy>
  struct Buffers {
    Kokkos::View<typename Policy::Source*, Mem> sources, targets;
    SplitPartial<typename Policy::Acc, Mem> partial;
  };

  template <class Policy>
  Buffers<Policy>& buffers() {
    using T = typename Policy::Real;
    using A = typename Policy::Acc;
    constexpr bool hermite = Policy::components == 7;
    if constexpr (hermite) {
      if constexpr (std::is_same<T, double>::value)
        return hermite_d_;
      else if constexpr (std::is_same<A, double>::value)
        return hermite_m_;
      else
        return hermite_f_;
    } else {
      if constexpr (std::is_same<T, double>::value)
        return mono_d_;
      else if constexpr (std::is_same<A, double>::value)
        return mono_m_;
      else
        return mono_f_;
    }
  }

  template <class Policy>
  void run(const Vec& x, const Vec& v, const Scalar& m, int n, const Targets<Space>& targets,
           bool with_potential, const ForceOutput<Space>& out) {
    using T = typename Policy::Real;
    auto& buf = buffers<Policy>();
    constexpr bool hermite = Policy::components == 7;
    const DirectShape s =
        shape(targets.shape_count > 0 ? targets.shape_count : targets.count, n, hermite);
    const int padded = (n + s.tile - 1) / s.tile * s.tile;
    ensure_size(buf.sources, padded, "hayate::gravity::sources");
    const auto sources = Kokkos::subview(buf.sources, std::make_pair(0, padded));
    pack<Policy>(space_, sources, x, v, m, {}, n);
    Kokkos::View<const typename Policy::Source*, Mem> tgt = sources;
    if (targets.index.extent(0) > 0) {
      ensure_size(buf.targets, targets.count, "hayate::gravity::targets");
      const auto t = Kokkos::subview(buf.targets, std::make_pair(0, targets.count));
      pack<Policy>(space_, t, x, v, m, targets.index, targets.count);
      tgt = t;
    }
    const T eps2 = T(eps_) * T(eps_);
    if constexpr (hermite) {
      launch<Policy, DirectDefaults<Space>::i_per_thread>(tgt, targets.count, sources, eps2, s,
                                                          with_potential, out, buf.partial);
    } else {
      switch (s.i_per_thread) {
        case 1:
          launch<Policy, 1>(tgt, targets.count, sources, eps2, s, with_potential, out, buf.partial);
          break;
        case 2:
          launch<Policy, 2>(tgt, targets.count, sources, eps2, s, with_potential, out, buf.partial);
          break;
        case 4:
          launch<Policy, 4>(tgt, targets.count, sources, eps2, s, with_potential, out, buf.partial);
          break;
        default:
          launch<Policy, 8>(tgt, targets.count, sources, eps2, s, with_potential, out, buf.partial);
          break;
      }
    }
  }

  template <class Policy, int IPT>
  void launch(const Kokkos::View<const typename Policy::Source*, Mem>& tgt, int count,
              const Kokkos::View<const typename Policy::Source*, Mem>& sources,
              typename Policy::Real eps2, const DirectShape& s, bool with_potential,
              const ForceOutput<Space>& out, SplitPartial<typename Policy::Acc, Mem>& partial) {
    if (with_potential)
      launch_direct<Space, Policy, true, IPT>(space_, tgt, count, sources, eps2, G_, s, out,
                                              partial);
    else
      launch_direct<Space, Policy, false, IPT>(space_, tgt, count, sources, eps2, G_, s, out,
                                               partial);
  }

  Space space_;
  Precision precision_;
  DirectShape requested_;
  double G_, eps_;
  Buffers<MonopolePolicy<float, float>> mono_f_;
  Buffers<MonopolePolicy<double, double>> mono_d_;
  Buffers<MonopolePolicy<float, double>> mono_m_;
  Buffers<HermitePolicy<float, float>> hermite_f_;
  Buffers<HermitePolicy<double, double>> hermite_d_;
  Buffers<HermitePolicy<float, double>> hermite_m_;
};

template <class Space>
void DirectSolver<Space>::compute(const Vec& x, const Scalar& m, int n,
                                  const Targets<Space>& targets, bool with_potential,
                                  const ForceOutput<Space>& out) {
  switch (precision_) {
    case Precision::Float:
      run<MonopolePolicy<float, float>>(x, Vec(), m, n, targets, with_potential, out);
      break;
    case Precision::Double:
      run<MonopolePolicy<double, double>>(x, Vec(), m, n, targets, with_potential, out);
      break;
    case Precision::Mixed:
      run<MonopolePolicy<float, double>>(x, Vec(), m, n, targets, with_potential, out);
      break;
  }
}

template <class Space>
void DirectSolver<Space>::compute_hermite(const Vec& x, const Vec& v, const Scalar& m, int n,
                                          const Targets<Space>& targets, bool with_potential,
                                          const ForceOutput<Space>& out) {
  switch (precision_) {
    case Precision::Float:
      run<HermitePolicy<float, float>>(x, v, m, n, targets, with_potential, out);
      break;
    case Precision::Double:
      run<HermitePolicy<double, double>>(x, v, m, n, targets, with_potential, out);
      break;
    case Precision::Mixed:
      run<HermitePolicy<float, double>>(x, v, m, n, targets, with_potential, out);
      break;
  }
}

// Compiled once, in gravity_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_DIRECT_KERNELS(EXTERN, S) EXTERN template class DirectSolver<S>;
#ifndef HAYATE_GRAVITY_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_DIRECT_KERNELS, extern)
#endif

}  // namespace hayate::gravity
