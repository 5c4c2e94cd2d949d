// Validation of the lattice gas against the literature on bluff-body wakes (ctest -L validation;
// docs/user/fhp.md, "Validation", cites each source): flow past a circular cylinder between
// no-slip walls, as in inputs/fhp/cylinder.yaml at reduced size, stays steady below the onset of
// vortex shedding and sheds above it, at a Strouhal number between those of unbounded and of
// more confined Navier-Stokes flow; behind a plate normal to the flow, as in
// inputs/fhp/plate.yaml, started impulsively, a symmetric bubble grows as published. Serial: a
// loaded 2-core machine runs it faster than threads that wait for each other.
#include "exec/exec_traits.hpp"
#include "fhp/fhp_init.hpp"
#include "fhp/fhp_kernels.hpp"
#include "fhp/fhp_obstacles.hpp"
#include "serial_space.hpp"
#include "validation_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

namespace hayate::fhp {
namespace {

using Space = hayate::test::SerialSpace;

// FHP-III at d = 0.3 (rho = 2.1), the shipped inputs' gas: the Galilean factor
// g = (7/12)(1 - 2d)/(1 - d) scales the advection term, and the viscosity measured from shear
// waves at long wavelengths (docs/user/fhp.md, Accuracy) is 0.107-0.113, above the Boltzmann
// value 0.0988. Re = g U D / nu.
constexpr double rho = 2.1, d = rho / 7;
constexpr double nu = 0.11;
const double galilean = 7.0 / 12.0 * (1 - 2 * d) / (1 - d);

struct Wake {
  double U = 0, Re = 0, St = 0, rms_uy = 0;
  int crossings = 0;
  std::vector<double> t, uy;  // u_y behind the cylinder
};

// Sums of particles and momentum over the sites of a window (solid sites hold none).
struct Window {
  int x0, x1, y0, y1;
  double ux(const std::vector<std::uint8_t>& s, int nx) const { return velocity(s, nx).first; }
  double uy(const std::vector<std::uint8_t>& s, int nx) const { return velocity(s, nx).second; }
  std::pair<double, double> velocity(const std::vector<std::uint8_t>& s, int nx) const {
    double m = 0, px2 = 0, py = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        const unsigned v = s[std::size_t(y) * nx + x];
        if (v & 0x80u) continue;
        for (int i = 0; i < 7; ++i)
          if ((v >> i) & 1u) {
            m += 1;
            if (i < 6) {
              px2 += dir_cx2(i);
              py += dir_cy(i);
            }
          }
      }
    return {m > 0 ? 0.5 * px2 / m : 0.0, m > 0 ? sqrt3_2 * py / m : 0.0};
  }
};

// A cylinder of diameter D a little off the channel's centre line (so the wake needs no
// round-off to pick a side), driven by the body force between walls, periodic in x. After
// `transient` steps, every `every` steps: u_y averaged over a window on the centre line 1.5-2.5
// D behind the cylinder, and U, u_x over the rows of the cylinder 2-3 D ahead of it: the
// velocity that approaches it (the domain is periodic: its own far wake, 13 D on).
Wake run_cylinder(int nx, int ny, double D, double u0, double force, int transient, int steps,
                  int every) {
  const LatticeShape shape{nx, ny};
  const double xc = 3.0 * D, yc = 0.5 * ny + 4;
  Obstacle circle;
  circle.type = Obstacle::Type::circle;
  circle.x = xc;
  circle.y = yc;
  circle.radius = 0.5 * D;
  const auto solid_host = solid_sites(shape, false, true, {circle});
  SiteBytes<Space> solid("solid", shape.sites()), sites("sites", shape.sites());
  {
    auto h = Kokkos::create_mirror_view(solid);
    for (std::size_t i = 0; i < solid_host.size(); ++i) h(i) = solid_host[i];
    Kokkos::deep_copy(solid, h);
  }
  InitialFlow flow;
  flow.density = rho;
  flow.ux = u0;
  flow.seed = 11;
  initialize_sites(Space(), sites, shape, Model::fhp3, flow, solid);
  const auto q = std::uint32_t(std::lround(force * forcing_one));
  auto engine = make_engine(Space(), auto_kernel<core::ExecTraits<Space>>(Model::fhp3, nx),
                            Model::fhp3, shape, StepParams{11, q});
  engine->load(sites);
  const int rows = int(std::lround(D / sqrt3_2));  // rows spanning one diameter
  const int row_c = int(std::lround(yc));
  const Window wake{int(xc + 1.5 * D), int(xc + 2.5 * D), row_c - rows / 4, row_c + rows / 4};
  const Window ahead{int(xc - 3.0 * D), int(xc - 2.0 * D), row_c - rows / 2, row_c + rows / 2};
  std::vector<std::uint8_t> host(shape.sites());
  Wake w;
  double sum_u = 0;
  for (int s = 0; s < transient + steps; ++s) {
    engine->advance(s);
    if (s + 1 > transient && (s + 1) % every == 0) {
      engine->store(sites);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sites);
      std::copy(h.data(), h.data() + host.size(), host.begin());
      sum_u += ahead.ux(host, nx);
      w.t.push_back(s + 1);
      w.uy.push_back(wake.uy(host, nx));
    }
  }
  const std::size_t n = w.uy.size();
  w.U = sum_u / double(n);
  w.Re = galilean * w.U * D / nu;
  // A running mean over five samples takes out most of the gas's noise; the shedding period is
  // the mean interval between upward zero crossings of what is left of u_y.
  double mean = 0;
  for (double v : w.uy) mean += v / double(n);
  std::vector<double> smooth(n, 0.0);
  for (std::size_t j = 2; j + 2 < n; ++j)
    for (int k = -2; k <= 2; ++k) smooth[j] += (w.uy[j + k] - mean) / 5;
  for (std::size_t j = 2; j + 2 < n; ++j) w.rms_uy += smooth[j] * smooth[j] / double(n - 4);
  w.rms_uy = std::sqrt(w.rms_uy);
  std::vector<double> up;
  for (std::size_t j = 3; j + 2 < n; ++j)
    if (smooth[j - 1] < 0 && smooth[j] >= 0)
      up.push_back(w.t[j - 1] + every * -smooth[j - 1] / (smooth[j] - smooth[j - 1]));
  // The lattice gas advects momentum at g u: its flow is the Navier-Stokes flow at viscosity
  // nu / g seen in time g t (Frisch et al. 1987), so its frequencies are g times those of the
  // flow at the same Re.
  if (up.size() >= 3)
    w.St = D / ((up.back() - up.front()) / double(up.size() - 1)) / (galilean * w.U);
  w.crossings = int(up.size());
  return w;
}

// Below Re ~ 47 the wake of a cylinder is steady and symmetric (Taneda 1956; the onset of
// shedding: Provansal, Mathis & Boyer 1987, Jackson 1987); above it vortices shed, in unbounded
// flow at the Strouhal number St = f D / U = 0.212 - 4.5 / Re (Roshko 1954, 50 < Re < 150). The
// lattice gas shows the same wake (d'Humieres, Pomeau & Lallemand 1985, behind a plate). The
// channel here is 7 diameters wide (blockage D / H = 0.14), and confinement raises St: Schafer &
// Turek's (1996) benchmark, D / H = 0.24 at Re = 100, sheds at St = 0.295-0.305 where the
// unbounded flow has 0.167. So St must lie between Roshko's value at the measured Re and 0.30.
// Re = 18 (D = 32) must stay steady: its u_y behind the cylinder is the gas's noise, a small
// fraction of the swing at Re = 65 (D = 80).
TEST(FhpValidation, CylinderWakeShedsAboveTheOnsetAtAStrouhalNumberOfConfinedFlow) {
  const Wake low = run_cylinder(512, 256, 32, 0.3, 1e-5, 6000, 8000, 50);
  const Wake high = run_cylinder(1280, 640, 80, 0.3, 1e-5, 8000, 24000, 50);
  const double roshko = 0.212 - 4.5 / high.Re;
  std::printf("cylinder D = 32: U %.3f, Re %.1f, rms u_y behind it %.4f\n", low.U, low.Re,
              low.rms_uy);
  std::printf(
      "cylinder D = 80: U %.3f, Re %.1f, rms u_y %.4f, St %.3f from %d periods (Roshko "
      "1954, unbounded: %.3f)\n",
      high.U, high.Re, high.rms_uy, high.St, high.crossings - 1, roshko);
  EXPECT_LT(low.Re, 30.0);
  EXPECT_GT(high.Re, 55.0);
  EXPECT_LT(low.rms_uy, 0.25 * high.rms_uy);
  EXPECT_GE(high.crossings, 4);
  EXPECT_GT(high.St, roshko);
  EXPECT_LT(high.St, 0.30);
  std::vector<std::vector<double>> series;
  for (std::size_t k = 0; k < high.t.size(); ++k) series.push_back({high.t[k], high.uy[k]});
  test::write_validation_csv("fhp_cylinder_wake", {"step", "uy"}, series);
  test::write_validation_csv("fhp_cylinder_strouhal", {"Re", "St", "rms_uy"},
                             {{low.Re, 0.0, low.rms_uy}, {high.Re, high.St, high.rms_uy}});
}

// A plate started impulsively: at step 0 the gas moves at u0 everywhere and the plate, normal to
// the flow, stops it. Measured in windows of time that grow geometrically (each holds enough
// samples), summed over independent runs: the recirculating bubble's length, where the mean u_x
// on the plate's axis (rows within L/8 of it, bins of 4 columns) turns forward again behind its
// most backward bin, and the wake's asymmetry, the mean u_y on the axis over one L behind the
// plate (zero for symmetric twin vortices).
struct Bubble {
  double U = 0;                         // mean u_x 2-3 L ahead of the plate over the run
  std::vector<double> t, length, asym;  // window (steps, geometric centre), length / L, |u_y| / U
};

Bubble run_plate(int nx, int ny, double L, double u0, int steps, int every, int runs) {
  const LatticeShape shape{nx, ny};
  const double xc = 0.25 * nx, row_c = 0.5 * ny;
  Obstacle plate;
  plate.type = Obstacle::Type::plate;
  plate.x = xc;
  plate.y = row_c;
  plate.length = L;
  plate.thickness = 2;
  const auto solid_host = solid_sites(shape, false, false, {plate});
  SiteBytes<Space> solid("solid", shape.sites()), sites("sites", shape.sites());
  {
    auto h = Kokkos::create_mirror_view(solid);
    for (std::size_t i = 0; i < solid_host.size(); ++i) h(i) = solid_host[i];
    Kokkos::deep_copy(solid, h);
  }
  const int bin = 4, nbins = int(3 * L) / bin, x_back = int(xc + 2);
  const int band = int(std::lround(L / 8 / sqrt3_2)), rc = int(std::lround(row_c));
  // The first window starts once the sound wave of the start has crossed the plate (c = 0.71).
  std::vector<double> edges{100};
  while (edges.back() * 1.2 < steps) edges.push_back(edges.back() * 1.2);
  const std::size_t nw = edges.size() - 1;
  std::vector<std::vector<double>> axis_ux(nw, std::vector<double>(nbins, 0.0));
  std::vector<double> samples(nw, 0), axis_uy(nw, 0), ahead(nw, 0);
  std::vector<std::uint8_t> host(shape.sites());
  for (int run = 0; run < runs; ++run) {
    InitialFlow flow;
    flow.density = rho;
    flow.ux = u0;
    flow.seed = 101 + run;
    initialize_sites(Space(), sites, shape, Model::fhp3, flow, solid);
    auto engine = make_engine(Space(), auto_kernel<core::ExecTraits<Space>>(Model::fhp3, nx),
                              Model::fhp3, shape, StepParams{std::uint64_t(201 + run), 0});
    engine->load(sites);
    std::size_t w = 0;
    for (int s = 1; s <= steps; ++s) {
      engine->advance(s - 1);
      if (s % every != 0 || s < edges[0]) continue;
      while (w < nw && s >= edges[w + 1]) ++w;
      if (w == nw) break;
      engine->store(sites);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sites);
      std::copy(h.data(), h.data() + host.size(), host.begin());
      for (int b = 0; b < nbins; ++b)
        axis_ux[w][b] +=
            Window{x_back + b * bin, x_back + (b + 1) * bin, rc - band, rc + band + 1}.ux(host, nx);
      axis_uy[w] += Window{x_back, x_back + int(L), rc - band, rc + band + 1}.uy(host, nx);
      ahead[w] +=
          Window{int(xc - 3 * L), int(xc - 2 * L), rc - 4 * band, rc + 4 * band}.ux(host, nx);
      samples[w] += 1;
    }
  }
  Bubble out;
  double sum_u = 0, n = 0;
  for (std::size_t w = 0; w < nw; ++w) {
    sum_u += ahead[w];
    n += samples[w];
  }
  out.U = sum_u / n;
  for (std::size_t w = 0; w < nw; ++w) {
    const auto& u = axis_ux[w];
    // The first forward bin after the most backward one: the zero in between (a bin at the
    // plate, where the flow is slow, may show either sign).
    int b = int(std::min_element(u.begin(), u.end()) - u.begin());
    while (b < nbins && u[b] < 0) ++b;
    const double len = b > 0 && b < nbins ? (b - 0.5 + u[b - 1] / (u[b - 1] - u[b])) * bin : 0;
    out.t.push_back(std::sqrt(edges[w] * edges[w + 1]));
    out.length.push_back(len / L);
    out.asym.push_back(std::fabs(axis_uy[w]) / samples[w] / out.U);
  }
  return out;
}

// Behind a plate started impulsively, symmetric twin vortices form whatever the Reynolds number,
// and while nu t / L^2 is small the bubble they enclose grows nearly as (U t / L)^(2/3) (Taneda &
// Honji 1971, towing tank; the exponent of the self-similar roll-up of the vortex sheets shed at
// the edges). The lattice gas's flow runs in time g t (see above), which leaves the exponent as it
// is. Plate L = 64 across a periodic lattice of 16 x 8 L, four runs: Re = g U L / nu = 53, and the
// fit spans g U t / L = 0.5-3.5 (the bubble 0.6-2.3 L) with nu t / L^2 below 0.07; earlier the
// bubble spans a few bins and the start's sound wave still rings in the periodic lattice. The
// wake counts as symmetric while u_y on the axis stays below 5% of U (shedding swings it by
// about 30%). Measured: exponent 0.70 (other seeds and plates of 48 and 96: 0.69-0.71), u_y on
// the axis at most 0.025 U. The band 2/3 +- 0.065 excludes the neighbouring laws: a bubble
// growing by diffusion would give 1/2, one carried at a fixed speed 1.
TEST(FhpValidation, PlateStartedImpulsivelyGrowsASymmetricBubbleAsTToTheTwoThirds) {
  constexpr int L = 64;
  const Bubble b = run_plate(16 * L, 592, L, 0.3, 3000, 10, 4);
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0, worst_asym = 0, last = 0;
  std::vector<std::vector<double>> rows;
  for (std::size_t k = 0; k < b.t.size(); ++k) {
    const double T = galilean * b.U * b.t[k] / L;
    rows.push_back({b.t[k], T, b.length[k], b.asym[k]});
    if (T < 0.5) continue;
    ASSERT_GT(b.length[k], 0) << "no bubble at step " << b.t[k];
    const double x = std::log(T), y = std::log(b.length[k]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    n += 1;
    worst_asym = std::max(worst_asym, b.asym[k]);
    last = b.length[k];
  }
  const double exponent = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  std::printf(
      "plate L = %d: U %.3f, Re %.0f, bubble %.2f L at g U t / L = %.2f, growth exponent %.3f "
      "over %.0f windows (Taneda & Honji 1971: 2/3), asymmetry at most %.3f U\n",
      L, b.U, galilean * b.U * L / nu, last, rows.back()[1], exponent, n, worst_asym);
  EXPECT_GE(n, 8);
  EXPECT_GT(last, 2.0);
  EXPECT_NEAR(exponent, 2.0 / 3.0, 0.065);
  EXPECT_LT(worst_asym, 0.05);
  test::write_validation_csv("fhp_plate_bubble", {"step", "gUt_L", "length_L", "asymmetry"}, rows);
  test::write_validation_csv("fhp_plate_exponent", {"exponent", "Re"},
                             {{exponent, galilean * b.U * L / nu}});
}

}  // namespace
}  // namespace hayate::fhp
