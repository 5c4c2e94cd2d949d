#pragma once
// Initial states: each channel occupied at random with the linearized equilibrium probability
// f_i = d (1 + (2 b / 6) c_i . u), d = rho / b (b channels), which gives mean velocity u.
// Draws are counter-based per site, so every backend builds the same lattice.
#include "compat/kokkos_compat.hpp"
#include "fhp/fhp_kernels.hpp"
#include "util/random.hpp"

namespace hayate::fhp {

struct InitialFlow {
  double density = 2.1;   // particles per site
  double ux = 0, uy = 0;  // mean velocity
  double shear = 0;       // adds ux = shear sin(2 pi y / ny)
  std::uint64_t seed = 1;
};

// solid: one flag per site (may be empty = no solid sites).
template <class Space>
void initialize_sites(const Space& space, const SiteBytes<Space>& sites, LatticeShape shape,
                      Model model, const InitialFlow& flow, const SiteBytes<Space>& solid) {
  const int b = channels(model);
  const double d = flow.density / b, ux = flow.ux, uy = flow.uy, shear = flow.shear;
  const std::uint64_t seed = flow.seed;
  const int nx = shape.nx, ny = shape.ny;
  const bool has_solid = solid.extent(0) > 0;
  Kokkos::parallel_for(
      "hayate::fhp::initialize", Kokkos::RangePolicy<Space>(space, 0, shape.sites()),
      KOKKOS_LAMBDA(const std::int64_t s) {
        if (has_solid && solid(s)) {
          sites(s) = 0x80u;
          return;
        }
        const int y = int(s / nx);
        const double u = ux + shear * compat::sin(6.283185307179586 * y / ny);
        unsigned state = 0;
        for (int i = 0; i < b; ++i) {
          const double cu = i < 6 ? 0.5 * dir_cx2(i) * u + sqrt3_2 * dir_cy(i) * uy : 0.0;
          const double f = d * (1.0 + (2.0 * b / 6.0) * cu);
          // Stream 2^62 + site keeps initial draws apart from the per-word step draws.
          if (util::uniform01(seed, (std::uint64_t(1) << 62) + std::uint64_t(s), i) < f)
            state |= 1u << i;
        }
        sites(s) = std::uint8_t(state);
      });
}

// Compiled once, in fhp_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_FHP_INIT_KERNELS(EXTERN, S)                                                     \
  EXTERN template void initialize_sites<S>(const S&, const SiteBytes<S>&, LatticeShape, Model, \
                                           const InitialFlow&, const SiteBytes<S>&);
#ifndef HAYATE_FHP_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_INIT_KERNELS, extern)
#endif

}  // namespace hayate::fhp
