#pragma once
// Coarse-grained fields: sums over blocks of B columns x round(B / (sqrt(3)/2)) rows (about
// square in physical space) of the particles and
// their momentum, plus the number of solid sites, accumulated over any number of steps.
// Output (VTK image data, PNG pictures) reads the block averages on the host. Kernels and
// copies run on the execution-space instance the accumulator was made with.
#include "fhp/fhp_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace hayate::fhp {

struct BlockGrid {
  int block = 8, rows = 9, nbx = 0, nby = 0;
  BlockGrid() = default;
  BlockGrid(LatticeShape s, int b)
      : block(b), rows(std::max(1, int(b / sqrt3_2 + 0.5))), nbx(s.nx / b), nby(s.ny / rows) {}
  int blocks() const { return nbx * nby; }
};

// Host copy of block averages: density (particles per fluid site), velocity (momentum per
// particle, lattice units), and the solid fraction of each block.
struct BlockFields {
  BlockGrid grid;
  std::vector<double> density, ux, uy, solid;
};

template <class Space>
class FieldAccumulator {
 public:
  // Per block: particles, x momentum (half units), y momentum (units of sqrt(3)/2), fluid sites.
  using Sums = Kokkos::View<double* [4], typename Space::memory_space>;

  FieldAccumulator(const Space& space, LatticeShape shape, int block)
      : space_(space),
        shape_(shape),
        grid_(shape, block),
        sums_("hayate::fhp::block_sums", grid_.blocks()) {}

  const BlockGrid& grid() const { return grid_; }
  int samples() const { return samples_; }
  void set_samples(int n) { samples_ = n; }
  const Sums& sums() const { return sums_; }

  void add(const SiteBytes<Space>& sites);

  void reset() {
    Kokkos::deep_copy(space_, sums_, 0.0);
    samples_ = 0;
  }

  BlockFields averages() const {
    auto h = Kokkos::create_mirror_view(sums_);
    Kokkos::deep_copy(space_, h, sums_);
    space_.fence();
    BlockFields f;
    f.grid = grid_;
    const int n = grid_.blocks();
    f.density.assign(n, 0);
    f.ux.assign(n, 0);
    f.uy.assign(n, 0);
    f.solid.assign(n, 0);
    const double per_block = double(grid_.block) * grid_.rows;
    for (int k = 0; k < n; ++k) {
      const double m = h(k, 0), fluid = h(k, 3);
      f.solid[k] = samples_ > 0 ? 1.0 - fluid / (samples_ * per_block) : 0.0;
      if (fluid > 0) f.density[k] = m / fluid;
      if (m > 0) {
        f.ux[k] = 0.5 * h(k, 1) / m;
        f.uy[k] = sqrt3_2 * h(k, 2) / m;
      }
    }
    return f;
  }

 private:
  Space space_;
  LatticeShape shape_;
  BlockGrid grid_;
  Sums sums_;
  int samples_ = 0;
};

template <class Space>
void FieldAccumulator<Space>::add(const SiteBytes<Space>& sites) {
  const Sums sums = sums_;
  const int nx = shape_.nx, b = grid_.block, rows = grid_.rows, nbx = grid_.nbx;
  Kokkos::parallel_for(
      "hayate::fhp::block_sums", Kokkos::RangePolicy<Space>(space_, 0, grid_.blocks()),
      KOKKOS_LAMBDA(const int k) {
        const int bx = k % nbx, by = k / nbx;
        double m = 0, px = 0, py = 0, fluid = 0;
        for (int y = by * rows; y < (by + 1) * rows; ++y)
          for (int x = bx * b; x < (bx + 1) * b; ++x) {
            const unsigned s = sites(std::int64_t(y) * nx + x);
            if (s & 0x80u) continue;
            fluid += 1;
            for (int d = 0; d < 7; ++d)
              if ((s >> d) & 1u) {
                m += 1;
                if (d < 6) {
                  px += dir_cx2(d);
                  py += dir_cy(d);
                }
              }
          }
        sums(k, 0) += m;
        sums(k, 1) += px;
        sums(k, 2) += py;
        sums(k, 3) += fluid;
      });
  ++samples_;
}

// Per-row sums (particles, x momentum in half units, fluid sites): velocity profiles across a
// channel and shear-wave amplitudes.
struct RowSums {
  std::vector<double> mass, px2, fluid;
  double ux(int y) const { return mass[y] > 0 ? 0.5 * px2[y] / mass[y] : 0.0; }
};

template <class Space>
RowSums row_sums(const Space& space, const SiteBytes<Space>& sites, LatticeShape shape) {
  Kokkos::View<double* [3], typename Space::memory_space> sums(
      Kokkos::view_alloc(std::string("hayate::fhp::row_sums"), Kokkos::WithoutInitializing),
      shape.ny);
  const int nx = shape.nx;
  Kokkos::parallel_for(
      "hayate::fhp::row_sums", Kokkos::RangePolicy<Space>(space, 0, shape.ny),
      KOKKOS_LAMBDA(const int y) {
        double m = 0, px = 0, fluid = 0;
        for (int x = 0; x < nx; ++x) {
          const unsigned s = sites(std::int64_t(y) * nx + x);
          if (s & 0x80u) continue;
          fluid += 1;
          for (int d = 0; d < 7; ++d)
            if ((s >> d) & 1u) {
              m += 1;
              if (d < 6) px += dir_cx2(d);
            }
        }
        sums(y, 0) = m;
        sums(y, 1) = px;
        sums(y, 2) = fluid;
      });
  auto h = Kokkos::create_mirror_view(sums);
  Kokkos::deep_copy(space, h, sums);
  space.fence();
  RowSums r;
  for (int y = 0; y < shape.ny; ++y) {
    r.mass.push_back(h(y, 0));
    r.px2.push_back(h(y, 1));
    r.fluid.push_back(h(y, 2));
  }
  return r;
}

// Legacy VTK structured points: density and velocity at block centres.
void write_fields_vtk(const std::string& path, const BlockFields& f, std::int64_t step);
// Speed colour map (0 .. speed_max; 0 = the largest speed in the picture) with velocity arrows
// every `arrow_every` blocks; solid blocks are grey. pixels: per block.
void write_fields_png(const std::string& path, const BlockFields& f, int pixels, int arrow_every,
                      double speed_max);

// The kernels above are compiled once, in fhp_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_FHP_FIELD_KERNELS(EXTERN, S)  \
  EXTERN template class FieldAccumulator<S>; \
  EXTERN template RowSums row_sums<S>(const S&, const SiteBytes<S>&, LatticeShape);
#ifndef HAYATE_FHP_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_FIELD_KERNELS, extern)
#endif

}  // namespace hayate::fhp
