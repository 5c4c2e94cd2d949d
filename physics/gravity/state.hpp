#pragma once
// Particle state: flat structure-of-arrays Views in double precision (the force kernels pack
// their own float or double copies). A rank-local block of particles, so it could later be one
// MPI rank's share.
#include "exec/instantiate.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace hayate::gravity {

// v(i) = i (a free function: nvcc allows no device lambda in a constructor).
template <class Space>
void fill_identity(const Space& space, const Kokkos::View<int*, typename Space::memory_space>& v) {
  Kokkos::parallel_for(
      "hayate::gravity::identity", Kokkos::RangePolicy<Space>(space, 0, v.extent(0)),
      KOKKOS_LAMBDA(const int i) { v(i) = i; });
}

// `view` readable on the host once the work queued on `space` is done: a host copy, or the view
// itself where it lives in host memory (so not to be written).
template <class Space, class View>
auto on_host(const Space& space, const View& view) {
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
  Kokkos::deep_copy(space, host, view);
  space.fence();
  return host;
}

template <class Space>
struct Particles {
  using Mem = typename Space::memory_space;
  using Vec = Kokkos::View<double* [3], Mem>;
  using Scalar = Kokkos::View<double*, Mem>;

  int n = 0;
  Vec x, v, acc, jerk;
  Scalar m, pot;
  Kokkos::View<int*, Mem> level;  // block time-step level (step = dt_max / 2^level)
  // Which particle of the initial conditions each row is: the tree solver keeps the rows in
  // its own order (permute_particles), and snapshots and samples go by id.
  Kokkos::View<int*, Mem> id;

  Particles() = default;
  // `space` numbers the ids.
  Particles(const Space& space, int count)
      : n(count),
        x("hayate::gravity::x", count),
        v("hayate::gravity::v", count),
        acc("hayate::gravity::acc", count),
        jerk("hayate::gravity::jerk", count),
        m("hayate::gravity::m", count),
        pot("hayate::gravity::pot", count),
        level("hayate::gravity::level", count),
        id("hayate::gravity::id", count) {
    fill_identity(space, id);
  }
};

// The rows of a fixed sample, particles k n / count (k < count) of the initial conditions,
// wherever a reordering has put them: j = k n / count holds for k = ceil(j count / n) only.
template <class Space>
void sample_rows(const Space& space, const Particles<Space>& p, const int count,
                 const Kokkos::View<int*, typename Space::memory_space>& index) {
  const auto id = p.id;
  const std::int64_t n = p.n, c = count;
  Kokkos::parallel_for(
      "hayate::gravity::sample_rows", Kokkos::RangePolicy<Space>(space, 0, p.n),
      KOKKOS_LAMBDA(const int i) {
        const std::int64_t j = id(i), k = (j * c + n - 1) / n;
        if (k < c && k * n / c == j) index(k) = i;
      });
}

// Row k of the arrays a step carries (x, v, acc, m, level, id) becomes old row order(k) (order a
// permutation of 0..n-1). `spare` holds arrays of the same size (allocated here when it does
// not); the permuted rows are written there and the two swap those handles, so no array is
// allocated per call. jerk and pot stay where they are: only the tree solver permutes, jerk
// belongs to the Hermite integrator (direct solver only) and pot is recomputed before every
// use (27% fewer bytes per rebuild).
template <class Space>
void permute_particles(const Space& space, Particles<Space>& p, Particles<Space>& spare,
                       const Kokkos::View<const int*, typename Space::memory_space>& order) {
  if (spare.n != p.n) {
    using Mem = typename Space::memory_space;
    auto alloc = [](const char* name) {
      return Kokkos::view_alloc(std::string(name), Kokkos::WithoutInitializing);
    };
    spare.n = p.n;
    spare.x = typename Particles<Space>::Vec(alloc("hayate::gravity::x"), p.n);
    spare.v = typename Particles<Space>::Vec(alloc("hayate::gravity::v"), p.n);
    spare.acc = typename Particles<Space>::Vec(alloc("hayate::gravity::acc"), p.n);
    spare.m = typename Particles<Space>::Scalar(alloc("hayate::gravity::m"), p.n);
    spare.level = Kokkos::View<int*, Mem>(alloc("hayate::gravity::level"), p.n);
    spare.id = Kokkos::View<int*, Mem>(alloc("hayate::gravity::id"), p.n);
  }
  const Particles<Space> a = p, b = spare;
  Kokkos::parallel_for(
      "hayate::gravity::permute_particles", Kokkos::RangePolicy<Space>(space, 0, p.n),
      KOKKOS_LAMBDA(const int k) {
        const int i = order(k);
        for (int c = 0; c < 3; ++c) {
          b.x(k, c) = a.x(i, c);
          b.v(k, c) = a.v(i, c);
          b.acc(k, c) = a.acc(i, c);
        }
        b.m(k) = a.m(i);
        b.level(k) = a.level(i);
        b.id(k) = a.id(i);
      });
  std::swap(p.x, spare.x);
  std::swap(p.v, spare.v);
  std::swap(p.acc, spare.acc);
  std::swap(p.m, spare.m);
  std::swap(p.level, spare.level);
  std::swap(p.id, spare.id);
}

// Grows `view` (without keeping contents) so it holds at least n entries.
template <class View>
void ensure_size(View& view, std::int64_t n, const char* label) {
  if (std::int64_t(view.extent(0)) >= n) return;
  view = View(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), n);
}

// ensure_size with room to spare, for arrays sized by something that changes a little from
// call to call (tree nodes, target groups), so they are not reallocated each time.
template <class View>
void ensure_capacity(View& view, std::int64_t n, const char* label) {
  if (std::int64_t(view.extent(0)) >= n) return;
  view = View(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), n + n / 8);
}

// The kernels above are compiled once, in gravity_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_STATE_KERNELS(EXTERN, S)                                                \
  EXTERN template void fill_identity<S>(const S&, const Kokkos::View<int*, S::memory_space>&); \
  EXTERN template void sample_rows<S>(const S&, const Particles<S>&, int,                      \
                                      const Kokkos::View<int*, S::memory_space>&);             \
  EXTERN template void permute_particles<S>(const S&, Particles<S>&, Particles<S>&,            \
                                            const Kokkos::View<const int*, S::memory_space>&);
#ifndef HAYATE_GRAVITY_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_STATE_KERNELS, extern)
#endif

}  // namespace hayate::gravity
