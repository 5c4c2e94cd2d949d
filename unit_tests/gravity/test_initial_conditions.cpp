// Initial conditions against their analytic properties, with an independent serial double
// energy sum.
#include "gravity/initial_conditions.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace hayate::gravity;

struct Energies {
  double ke = 0, pe = 0, lz = 0, com = 0, mass = 0;
};

Energies energies(const HostParticles& p, double G, double eps) {
  Energies e;
  double cx[3] = {0, 0, 0};
  for (int i = 0; i < p.size(); ++i) {
    e.mass += p.m[i];
    for (int c = 0; c < 3; ++c) {
      e.ke += 0.5 * p.m[i] * p.v[3 * i + c] * p.v[3 * i + c];
      cx[c] += p.m[i] * p.x[3 * i + c];
    }
    e.lz += p.m[i] * (p.x[3 * i] * p.v[3 * i + 1] - p.x[3 * i + 1] * p.v[3 * i]);
    for (int j = 0; j < i; ++j) {
      double r2 = eps * eps;
      for (int c = 0; c < 3; ++c) r2 += std::pow(p.x[3 * i + c] - p.x[3 * j + c], 2);
      e.pe -= G * p.m[i] * p.m[j] / std::sqrt(r2);
    }
  }
  e.com = std::sqrt(cx[0] * cx[0] + cx[1] * cx[1] + cx[2] * cx[2]) / e.mass;
  return e;
}

TEST(GravityInitialConditions, PlummerIsInNBodyUnitsAndVirialised) {
  const HostParticles p = plummer(4000, 1.0, 1.0, 1.0, 17);
  const Energies e = energies(p, 1.0, 0.0);
  EXPECT_NEAR(e.mass, 1.0, 1e-12);
  EXPECT_LT(e.com, 1e-12);
  EXPECT_NEAR(e.ke + e.pe, -0.25, 0.015);
  EXPECT_NEAR(e.ke / -e.pe, 0.5, 0.03);
  // Virial radius -G M^2 / (2 PE) is 1 in N-body units.
  EXPECT_NEAR(-1.0 / (2 * e.pe), 1.0, 0.05);
}

TEST(GravityInitialConditions, PlummerScalesWithMassRadiusAndG) {
  const HostParticles p = plummer(2000, 3.0, 2.0, 0.5, 17);
  const Energies e = energies(p, 0.5, 0.0);
  EXPECT_NEAR(e.ke / -e.pe, 0.5, 0.04);
  EXPECT_NEAR(-0.5 * 9.0 / (2 * e.pe), 2.0, 0.12);  // virial radius
}

TEST(GravityInitialConditions, SameSeedSameParticlesOtherSeedOthers) {
  const HostParticles a = plummer(100, 1, 1, 1, 5), b = plummer(100, 1, 1, 1, 5),
                      c = plummer(100, 1, 1, 1, 6);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.v, b.v);
  EXPECT_NE(a.x, c.x);
}

TEST(GravityInitialConditions, HernquistJeansVelocitiesAreNearVirial) {
  const HostParticles p = hernquist(3000, 1.0, 1.0, 50.0, 1.0, 3);
  const Energies e = energies(p, 1.0, 0.0);
  EXPECT_NEAR(e.ke / -e.pe, 0.5, 0.05);
  // Half-mass radius: x^2 / (1 + x)^2 = M(r) / M = 1/2 of the truncated mass (x = r / a).
  std::vector<double> r;
  for (int i = 0; i < p.size(); ++i)
    r.push_back(std::sqrt(p.x[3 * i] * p.x[3 * i] + p.x[3 * i + 1] * p.x[3 * i + 1] +
                          p.x[3 * i + 2] * p.x[3 * i + 2]));
  std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
  const double s = std::sqrt(0.5) * 50.0 / 51.0, expected = s / (1 - s);
  EXPECT_NEAR(r[r.size() / 2], expected, 0.08 * expected);
}

TEST(GravityInitialConditions, ColdSphereIsAtRestAndUniform) {
  const HostParticles p = cold_sphere(5000, 2.0, 1.5, 8);
  const Energies e = energies(p, 1.0, 0.0);
  EXPECT_EQ(e.ke, 0.0);
  EXPECT_NEAR(e.pe, -0.6 * 4.0 / 1.5, 0.05 * 0.6 * 4.0 / 1.5);  // -3/5 G M^2 / R
}

TEST(GravityInitialConditions, KeplerHasTheOrbitalEnergyAndAngularMomentum) {
  const double a = 2.0, e = 0.3, q = 0.25, M = 1.5, G = 0.7;
  const HostParticles p = kepler(M, q, a, e, G);
  const Energies en = energies(p, G, 0.0);
  const double m1 = M / (1 + q), m2 = M - m1;
  EXPECT_NEAR(en.ke + en.pe, -G * m1 * m2 / (2 * a), 1e-14);
  const double mu = m1 * m2 / M;
  EXPECT_NEAR(en.lz, mu * std::sqrt(G * M * a * (1 - e * e)), 1e-14);
  EXPECT_LT(en.com, 1e-15);
}

TEST(GravityInitialConditions, GalaxyHasARotatingDiskAndVirialisedSpheroids) {
  GalaxyParams g{0.05, 0.2, 0.1, 1.0, 0.1, 1.5, 1.0, 3.0, 10.0, false};
  for (const bool nfw : {false, true}) {
    g.halo_nfw = nfw;
    const HostParticles p = galaxy(3000, g, 1.0, 12);
    const Energies e = energies(p, 1.0, 0.0);
    EXPECT_NEAR(e.mass, 1.15, 1e-12);
    EXPECT_NEAR(e.ke / -e.pe, 0.5, 0.08) << (nfw ? "nfw" : "hernquist");
    // Disk particles: 0.1 / 1.15 of them, thin and rotating in +phi.
    const int nb = int(std::llround(3000 * 0.05 / 1.15)), nd = int(std::llround(3000 * 0.1 / 1.15));
    double zrms = 0, lz = 0;
    for (int i = nb; i < nb + nd; ++i) {
      zrms += p.x[3 * i + 2] * p.x[3 * i + 2];
      lz += p.x[3 * i] * p.v[3 * i + 1] - p.x[3 * i + 1] * p.v[3 * i];
    }
    EXPECT_LT(std::sqrt(zrms / nd), 0.3);
    EXPECT_GT(lz / nd, 0.2);
  }
}

}  // namespace
