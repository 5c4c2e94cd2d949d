// Hydrodynamics of the lattice gas: the shear viscosity measured from the decay of a shear
// wave agrees with the Boltzmann theory of the FHP models, and forced channel flow between
// no-slip walls is a parabola (Poiseuille). Sizes are kept small enough for a 2-core machine.
#include "fhp/fhp_fields.hpp"
#include "fhp/fhp_init.hpp"
#include "fhp/fhp_obstacles.hpp"
#include "serial_space.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace hayate::fhp {
namespace {

using Space = hayate::test::SerialSpace;

// Boltzmann-approximation kinematic shear viscosities (Frisch et al. 1987), d = rho / b.
double viscosity_fhp1(double d) {
  return 1.0 / (12.0 * d * std::pow(1 - d, 3)) - 0.125;
}
double viscosity_fhp3(double d) {
  return 1.0 / (28.0 * d * (1 - d) * (1 - 8.0 * d * (1 - d) / 7.0)) - 0.125;
}

// Amplitude of the x-momentum mode sin(2 pi y / ny), per site.
double shear_amplitude(const RowSums& r, int ny) {
  double num = 0, den = 0;
  for (int y = 0; y < ny; ++y) {
    const double s = std::sin(2 * M_PI * y / ny);
    num += 0.5 * r.px2[y] * s;
    den += r.fluid[y] * s * s;
  }
  return num / den;
}

// Decay rate nu k^2 of a shear wave, from a least-squares fit of log(amplitude) against time,
// averaged over an ensemble of independent lattices.
double measured_viscosity(Model model, double rho, int nx, int ny, int steps, int every,
                          int ensemble, double amplitude0 = 0.15) {
  const LatticeShape shape{nx, ny};
  const int samples = steps / every + 1;
  std::vector<double> amplitude(samples, 0.0);
  SiteBytes<Space> sites("sites", shape.sites()), none("none", 0);
  for (int e = 0; e < ensemble; ++e) {
    auto engine = make_engine(Space(), Kernel::bits, model, shape, StepParams{100u + e, 0});
    InitialFlow flow;
    flow.density = rho;
    flow.shear = amplitude0;
    flow.seed = 100u + e;
    initialize_sites(Space(), sites, shape, model, flow, none);
    engine->load(sites);
    for (int s = 0, k = 0; s <= steps; ++s) {
      if (s % every == 0) {
        engine->store(sites);
        amplitude[k++] += shear_amplitude(row_sums(Space(), sites, shape), ny) / ensemble;
      }
      if (s < steps) engine->advance(s);
    }
  }
  double st = 0, sl = 0, stt = 0, stl = 0;
  for (int k = 0; k < samples; ++k) {
    const double t = double(k) * every, l = std::log(amplitude[k]);
    st += t;
    sl += l;
    stt += t * t;
    stl += t * l;
  }
  const double slope = (samples * stl - st * sl) / (samples * stt - st * st);
  const double kwave = 2 * M_PI / (ny * sqrt3_2);
  return -slope / (kwave * kwave);
}

// Shear-wave decay at short wavelength, where the Boltzmann theory holds; at longer wavelengths
// the measured viscosity grows (two-dimensional long-time tails), see docs/user/fhp.md.
TEST(FhpPhysics, ShearViscosityFhp3) {
  const double rho = 2.8, d = rho / 7;
  const double nu = measured_viscosity(Model::fhp3, rho, 1024, 64, 400, 10, 6, 0.08);
  std::printf("FHP-III d = %.2f: measured nu = %.4f, theory %.4f\n", d, nu, viscosity_fhp3(d));
  EXPECT_NEAR(nu / viscosity_fhp3(d), 1.0, 0.05);
}

TEST(FhpPhysics, ShearViscosityFhp1) {
  const double rho = 1.2, d = rho / 6;
  const double nu = measured_viscosity(Model::fhp1, rho, 1024, 128, 300, 10, 4, 0.08);
  std::printf("FHP-I d = %.2f: measured nu = %.4f, theory %.4f\n", d, nu, viscosity_fhp1(d));
  EXPECT_NEAR(nu / viscosity_fhp1(d), 1.0, 0.05);
}

// Forced flow between no-slip walls (bounce-back rows 0 and ny-1) relaxes to a parabola whose
// zeros lie half a row inside the wall rows; its centre speed matches g H^2 / (8 nu).
TEST(FhpPhysics, PoiseuilleProfileIsParabolic) {
  const LatticeShape shape{512, 34};
  const double rho = 2.1, d = rho / 7;
  const double p = 4e-4;
  const std::uint32_t q = std::uint32_t(std::lround(p * forcing_one));
  auto engine = make_engine(Space(), Kernel::bits, Model::fhp3, shape, StepParams{7, q});
  SiteBytes<Space> sites("sites", shape.sites()), solid("solid", shape.sites());
  {
    const auto s = solid_sites(shape, false, true, {});
    auto h = Kokkos::create_mirror_view(solid);
    for (std::size_t i = 0; i < s.size(); ++i) h(i) = s[i];
    Kokkos::deep_copy(solid, h);
  }
  InitialFlow flow;
  flow.density = rho;
  initialize_sites(Space(), sites, shape, Model::fhp3, flow, solid);
  engine->load(sites);
  const int steps = 9000, average_from = 5000;
  std::vector<double> u(shape.ny, 0.0);
  int samples = 0;
  for (int s = 0; s < steps; ++s) {
    engine->advance(s);
    if (s >= average_from && s % 10 == 0) {
      engine->store(sites);
      const RowSums r = row_sums(Space(), sites, shape);
      for (int y = 1; y < shape.ny - 1; ++y) u[y] += r.ux(y);
      ++samples;
    }
  }
  // Least-squares parabola u = c0 + c1 Y + c2 Y^2 over the fluid rows (Y = row index).
  double m[3][4] = {};
  for (int y = 1; y < shape.ny - 1; ++y) {
    u[y] /= samples;
    const double b[3] = {1.0, double(y), double(y) * y};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += b[i] * b[j];
      m[i][3] += b[i] * u[y];
    }
  }
  for (int i = 0; i < 3; ++i)
    for (int k = i + 1; k < 3; ++k) {
      const double f = m[k][i] / m[i][i];
      for (int j = i; j < 4; ++j) m[k][j] -= f * m[i][j];
    }
  double c[3];
  for (int i = 2; i >= 0; --i) {
    c[i] = m[i][3];
    for (int j = i + 1; j < 3; ++j) c[i] -= m[i][j] * c[j];
    c[i] /= m[i][i];
  }
  double residual = 0, umax = 0;
  for (int y = 1; y < shape.ny - 1; ++y) {
    const double fit = c[0] + c[1] * y + c[2] * y * y;
    residual += (u[y] - fit) * (u[y] - fit);
    umax = std::max(umax, fit);
  }
  residual = std::sqrt(residual / (shape.ny - 2));
  const double disc = std::sqrt(c[1] * c[1] - 4 * c[2] * c[0]);
  const double z0 = (-c[1] + disc) / (2 * c[2]), z1 = (-c[1] - disc) / (2 * c[2]);
  std::printf("Poiseuille: u_max %.4f, rms residual %.4f, zeros at rows %.2f and %.2f\n", umax,
              residual, std::min(z0, z1), std::max(z0, z1));
  EXPECT_LT(c[2], 0.0);
  EXPECT_LT(residual, 0.05 * umax);
  EXPECT_NEAR(std::min(z0, z1), 0.5, 1.0);
  EXPECT_NEAR(std::max(z0, z1), shape.ny - 1.5, 1.0);
  // Centre speed from the body force. A move needs its source occupied and its target free;
  // in a flow at velocity u the linearized equilibrium f_i = d (1 + (7/3) c_i.u) makes that
  // rarer, so the force is evaluated at the mean velocity (2/3 of the centre speed). Moves
  // 3->0 add 2 to the x momentum, 2->1 and 4->5 add 1.
  const double ubar = 2.0 / 3.0 * umax;
  const auto f = [&](double cx) { return d * (1 + 7.0 / 3.0 * cx * ubar); };
  const double moves = 2 * f(-1) * (1 - f(1)) + 2 * f(-0.5) * (1 - f(0.5));
  const double g = (q / double(forcing_one)) * moves / rho;
  const double width = std::fabs(z1 - z0) * sqrt3_2;
  const double predicted = g * width * width / (8 * viscosity_fhp3(d));
  std::printf("Poiseuille: predicted u_max %.4f\n", predicted);
  EXPECT_NEAR(umax / predicted, 1.0, 0.2);
}

}  // namespace
}  // namespace hayate::fhp
