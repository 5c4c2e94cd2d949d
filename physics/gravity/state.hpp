#pragma once
// Particle state: flat structure-of-arrays Views in double precision (the force kernels pack
// their own float or double copies). A rank-local block of particles, so it could later be one
// MPI rank's share.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace hayate::gravity {

template <class Space>
struct Particles {
  using Mem = typename Space::memory_space;
  using Vec = Kokkos::View<double* [3], Mem>;
  using Scalar = Kokkos::View<double*, Mem>;

  int n = 0;
  Vec x, v, acc, jerk;
  Scalar m, pot;
  Kokkos::View<int*, Mem> level;  // block time-step level (step = dt_max / 2^level)

  Particles() = default;
  explicit Particles(int count)
      : n(count),
        x("hayate::gravity::x", count),
        v("hayate::gravity::v", count),
        acc("hayate::gravity::acc", count),
        jerk("hayate::gravity::jerk", count),
        m("hayate::gravity::m", count),
        pot("hayate::gravity::pot", count),
        level("hayate::gravity::level", count) {}
};

// Grows `view` (without keeping contents) so it holds at least n entries.
template <class View>
void ensure_size(View& view, std::int64_t n, const char* label) {
  if (std::int64_t(view.extent(0)) >= n) return;
  view = View(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), n);
}

}  // namespace hayate::gravity
