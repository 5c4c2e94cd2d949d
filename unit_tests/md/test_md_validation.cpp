// Validation of the MD engine against published results (ctest -L validation; docs/user/md.md,
// "Validation", cites each source): the Lennard-Jones fcc crystal's cohesive energy against
// Lennard-Jones and Ingham's lattice sums, and the period of a Morse oscillator against its
// closed form, at every amplitude up to near dissociation. Serial backend, double precision.
#include "md_test_util.hpp"
#include "serial_space.hpp"
#include "validation_output.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace hayate::md::test {
namespace {

using Space = hayate::test::SerialSpace;

constexpr double pi = 3.14159265358979323846;

// Lattice sums of the fcc lattice for a nearest-neighbour distance of 1, sum over j != 0 of
// r_j^-12 and r_j^-6 (Lennard-Jones and Ingham, Proc. R. Soc. A 107:636 (1925), as tabulated by
// Kittel, Introduction to Solid State Physics, ch. 3).
constexpr double a12 = 12.13188, a6 = 14.45392;

// Potential energy per atom of a perfect fcc crystal with nearest-neighbour distance r (sigma
// = epsilon = 1), pair cutoff rc, plus the continuum tail beyond rc (Allen and Tildesley).
double lattice_energy(double r, double rc) {
  const double side = r * std::sqrt(2.0);
  const int cells = static_cast<int>(std::ceil(2.0 * (rc + 0.3) / side)) + 1;
  InitialState init = fcc_lattice_with_side(side, cells, cells, cells, {0});
  init.types = TypeSet::single(rc);
  init.v.assign(init.x.size(), 0.0);
  MdParams params;
  MdSystem<Space, double, LjCut> sys(init, params);
  sys.initialize();
  const double rho = 4.0 / (side * side * side);
  const double tail = 8.0 / 3.0 * pi * rho * (std::pow(rc, -9.0) / 3.0 - std::pow(rc, -3.0));
  return sys.thermo().pe + tail;
}

TEST(MdValidation, LennardJonesCrystalCohesiveEnergy) {
  // u(r) = 2 (A12 r^-12 - A6 r^-6): minimum -A6^2 / (2 A12) = -8.6102 at r0 = (2 A12/A6)^(1/6)
  // = 1.09017 (Kittel: U = -2.15 (4 N epsilon)). The cutoff of 6 sigma with the continuum tail
  // leaves 0.003 of the published curve (the tail's shells are discrete), 0.04 %.
  const double r0 = std::pow(2.0 * a12 / a6, 1.0 / 6.0);
  std::vector<std::vector<double>> rows;
  double u_min = 0, r_min = 0;
  for (double r = 1.00; r <= 1.3001; r += 0.025) {
    const double u = lattice_energy(r, 6.0);
    const double published = 2.0 * (a12 * std::pow(r, -12.0) - a6 * std::pow(r, -6.0));
    EXPECT_NEAR(u, published, 5e-3) << "nearest-neighbour distance " << r;
    rows.push_back({r, u, published});
    if (u < u_min) u_min = u, r_min = r;
  }
  const double u0 = lattice_energy(r0, 6.0);
  EXPECT_NEAR(u0, -a6 * a6 / (2.0 * a12), 5e-3);
  EXPECT_NEAR(-a6 * a6 / (2.0 * a12), -8.6102, 1e-4);
  EXPECT_NEAR(r_min, r0, 0.0126);  // the sampled minimum lies next to r0
  rows.push_back({r0, u0, -a6 * a6 / (2.0 * a12)});
  hayate::test::write_validation_csv("md_lj_crystal", {"r", "energy", "published"}, rows);
}

// Two atoms of mass 1 bound by a Morse pair released at rest from separation r0 + delta; returns
// the mean time between the outer turning points over three periods.
double morse_period(double d0, double alpha, double r0, double delta, double dt) {
  TypeSet t = TypeSet::empty("morse", 3, 1);
  t.params = {d0, alpha, r0};
  t.cutoff = {6.0};
  InitialState init;
  for (double& b : init.box) b = 20.0;
  init.x = {5.0, 5.0, 5.0, 5.0 + r0 + delta, 5.0, 5.0};
  init.v.assign(6, 0.0);
  init.type = {0, 0};
  init.id = {1, 2};
  init.types = t;
  MdParams params;
  params.dt = dt;
  params.every = 0;
  MdSystem<Space, double, Morse> sys(init, params);
  sys.initialize();
  auto separation = [&] {
    auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.positions());
    double s2 = 0;
    for (int d = 0; d < 3; ++d) {
      const double c = image(x(1, d) - x(0, d), 20.0);
      s2 += c * c;
    }
    return std::sqrt(s2);
  };
  // Outer turning points: local maxima of the separation, refined by a parabola through three
  // samples. Released at rest there, the first is t = 0.
  std::vector<double> maxima = {0.0};
  double s_prev2 = separation(), s_prev = s_prev2;
  sys.advance(false);
  s_prev = separation();
  for (long step = 2; maxima.size() < 4 && step < 2000000; ++step) {
    sys.advance(false);
    const double s = separation();
    if (s_prev > s_prev2 && s_prev >= s) {
      const double shift = 0.5 * (s_prev2 - s) / (s_prev2 - 2.0 * s_prev + s);
      maxima.push_back((double(step - 1) + shift) * dt);
    }
    s_prev2 = s_prev;
    s_prev = s;
  }
  if (maxima.size() < 4) return 0.0;
  return (maxima[3] - maxima[0]) / 3.0;
}

TEST(MdValidation, MorseOscillatorPeriodAgainstItsClosedForm) {
  // The Morse pair V = D (e^(-2a(r-r0)) - 2 e^(-a(r-r0))) (Morse, Phys. Rev. 34:57 (1929)) holds
  // a classical motion of energy E < 0 with period T = (pi / a) sqrt(2 mu / -E) at every
  // amplitude (Landau and Lifshitz, Mechanics, sec. 12, problem 2): with mu = 1/2, D = 1, a = 2,
  // T = (pi / 2) / sqrt(-E), from 1.571 for small oscillations to 5.0 at 90 % of the dissociation
  // energy. Velocity Verlet at dt = 0.001 errs by (omega dt)^2 / 24 = 7e-7 at small amplitude.
  const double d0 = 1.0, alpha = 2.0, r0 = 1.2, dt = 0.001;
  std::vector<std::vector<double>> rows;
  for (double excitation : {0.05, 0.2, 0.4, 0.6, 0.75, 0.9}) {
    // Released at rest where V = -D (1 - excitation): e^(-a delta) = 1 - sqrt(excitation).
    const double delta = -std::log(1.0 - std::sqrt(excitation)) / alpha;
    const double energy = -d0 * (1.0 - excitation);
    const double published = pi / alpha * std::sqrt(2.0 * 0.5 / -energy);
    const double measured = morse_period(d0, alpha, r0, delta, dt);
    EXPECT_NEAR(measured / published, 1.0, 5e-6) << "excitation " << excitation;
    rows.push_back({excitation, measured, published});
  }
  hayate::test::write_validation_csv("md_morse_period", {"excitation", "period", "published"},
                                     rows);
}

}  // namespace
}  // namespace hayate::md::test
