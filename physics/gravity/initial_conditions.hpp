#pragma once
// Initial conditions, generated on the host in double precision from the counter-based RNG
// (particle i draws from stream i), so a seed gives the same particles on every backend.
#include "config/config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hayate::gravity {

struct HostParticles {
  std::vector<double> x, v, m;  // x, v: 3 per particle
  int size() const { return int(m.size()); }
  void resize(int n) {
    x.assign(3 * std::size_t(n), 0.0);
    v.assign(3 * std::size_t(n), 0.0);
    m.assign(std::size_t(n), 0.0);
  }
};

// Plummer sphere by the Aarseth-Henon-Wielen (1974) recipe, scaled to virial radius `radius`
// (N-body units for mass = G = radius = 1: E = -1/4), radii beyond 10 scale lengths redrawn.
HostParticles plummer(int n, double mass, double radius, double G, std::uint64_t seed);

// Hernquist (1990) sphere of scale length a, truncated at truncation * a; isotropic Gaussian
// velocities with the Jeans dispersion (approximate equilibrium).
HostParticles hernquist(int n, double mass, double a, double truncation, double G,
                        std::uint64_t seed);

// Uniform sphere at rest: the cold collapse test.
HostParticles cold_sphere(int n, double mass, double radius, std::uint64_t seed);

// Two bodies (m1 = mass / (1 + q), m2 = q m1) on a Kepler orbit of semi-major axis a and
// eccentricity e, starting at apocentre in the orbital (x, y) plane, centre-of-mass frame.
HostParticles kepler(double mass, double mass_ratio, double a, double e, double G);

struct GalaxyParams {
  double bulge_mass, bulge_scale;
  double disk_mass, disk_scale, disk_height, disk_sigma_ratio;
  double halo_mass, halo_scale, halo_truncation;
  bool halo_nfw;
};

// Hernquist bulge + exponential disk (sech^2 vertical) + Hernquist or NFW halo, equal-mass
// particles shared by mass. Spheroids: isotropic Jeans dispersions in the total (spherically
// averaged) potential; disk: sigma_z^2 = pi G Sigma z0, sigma_R = ratio * sigma_z, mean rotation
// from the circular speed with the asymmetric-drift correction. Approximate equilibrium.
HostParticles galaxy(int n, const GalaxyParams& g, double G, std::uint64_t seed);

// Particles from an extended XYZ file (columns pos, velo or vel, mass or masses) or a CSV file
// with a header naming x,y,z,vx,vy,vz,m (any order). Errors name the file, line and column.
HostParticles read_particles(const std::string& path, const std::string& format);

// Moves to the centre-of-mass frame (position and velocity).
void centre(HostParticles& p);

// What the input asks for (initial.type and its keys).
HostParticles make_initial_conditions(const core::Config& config);

}  // namespace hayate::gravity
