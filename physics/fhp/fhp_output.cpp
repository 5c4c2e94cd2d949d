#include "fhp/fhp_fields.hpp"
#include "io/atomic_file.hpp"
#include "io/png.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hayate::fhp {

void write_fields_vtk(const std::string& path, const BlockFields& f, std::int64_t step) {
  const BlockGrid& g = f.grid;
  core::AtomicFile file(path);
  auto& os = file.stream();
  os << "# vtk DataFile Version 3.0\n"
     << fmt::format("hayate fhp coarse-grained fields, step {}, blocks of {}x{} sites\n", step,
                    g.block, g.rows)
     << "ASCII\nDATASET STRUCTURED_POINTS\n"
     << fmt::format("DIMENSIONS {} {} 1\n", g.nbx, g.nby)
     << fmt::format("ORIGIN {} {} 0\n", 0.5 * g.block, 0.5 * g.rows * sqrt3_2)
     << fmt::format("SPACING {} {} 1\n", double(g.block), g.rows * sqrt3_2)
     << fmt::format("POINT_DATA {}\n", g.blocks())
     << "SCALARS density double 1\nLOOKUP_TABLE default\n";
  for (int k = 0; k < g.blocks(); ++k) os << fmt::format("{:.6g}\n", f.density[k]);
  os << "SCALARS solid_fraction double 1\nLOOKUP_TABLE default\n";
  for (int k = 0; k < g.blocks(); ++k) os << fmt::format("{:.4g}\n", f.solid[k]);
  os << "VECTORS velocity double\n";
  for (int k = 0; k < g.blocks(); ++k) os << fmt::format("{:.6g} {:.6g} 0\n", f.ux[k], f.uy[k]);
  file.commit();
}

void write_fields_png(const std::string& path, const BlockFields& f, int pixels, int arrow_every,
                      double speed_max) {
  const BlockGrid& g = f.grid;
  core::Image img(g.nbx * pixels, g.nby * pixels);
  double vmax = speed_max;
  if (!(vmax > 0)) {
    vmax = 0;
    for (int k = 0; k < g.blocks(); ++k)
      if (f.solid[k] < 0.5) vmax = std::max(vmax, std::hypot(f.ux[k], f.uy[k]));
    if (!(vmax > 0)) vmax = 1;
  }
  const core::Rgb grey{128, 128, 128};
  for (int by = 0; by < g.nby; ++by)
    for (int bx = 0; bx < g.nbx; ++bx) {
      const int k = by * g.nbx + bx;
      const core::Rgb c =
          f.solid[k] > 0.1 ? grey : core::colormap(std::hypot(f.ux[k], f.uy[k]) / vmax);
      const int top = (g.nby - 1 - by) * pixels;  // lattice y grows upwards
      img.fill_rect(bx * pixels, top, bx * pixels + pixels - 1, top + pixels - 1, c);
    }
  if (arrow_every > 0) {
    // Arrows from the centre of every n-th block, the longest spanning 0.9 of the spacing.
    const double spacing = double(arrow_every) * pixels, scale = 0.9 * spacing / vmax;
    for (int by = arrow_every / 2; by < g.nby; by += arrow_every)
      for (int bx = arrow_every / 2; bx < g.nbx; bx += arrow_every) {
        const int k = by * g.nbx + bx;
        if (f.solid[k] > 0.1) continue;
        const double cx = (bx + 0.5) * pixels, cy = (g.nby - by - 0.5) * pixels;
        const double dx = f.ux[k] * scale, dy = -f.uy[k] * scale;
        img.arrow(cx - 0.5 * dx, cy - 0.5 * dy, cx + 0.5 * dx, cy + 0.5 * dy, {255, 255, 255},
                  std::max(2.0, 0.3 * spacing));
      }
  }
  core::write_png(path, img);
}

}  // namespace hayate::fhp
