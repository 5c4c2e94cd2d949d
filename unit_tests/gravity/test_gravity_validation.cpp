// Validation of the gravity solver against published results (ctest -L validation;
// docs/user/gravity.md, "Validation", cites each source): mixed precision against float sums on
// a field with a closed form, block time steps against the smallest shared step, the Plummer
// sphere's mass profile, and the galaxy's disk over several rotations. Serial backend: a loaded
// 2-core machine runs it faster than threads that wait for each other.
#include "cli_runner.hpp"
#include "gravity/direct_solver.hpp"
#include "gravity_test_util.hpp"
#include "run/checkpoint.hpp"
#include "serial_space.hpp"
#include "validation_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace hayate::gravity;
using hayate::test::read_csv_columns;
using hayate::test::run_input;

using Space = hayate::test::SerialSpace;

const std::string backend = hayate::core::space_name<Space>();
std::string out_dir(const std::string& name) {
  return "gravity_validation_out/" + name;
}

// ---------------------------------------------------------------------------------------------
// Mixed precision. n equal masses M/n on a ring of radius R pull a test particle on the ring's
// axis at height z with a_z = -G M z / (z^2 + R^2 + eps^2)^(3/2) (every mass is at the same
// distance): n equal terms, the worst case of recursive summation, whose error in float grows
// up to (n - 1) u with u = 2^-24 (Higham 2002, sec. 4.2). Float pair terms added into double sums
// keep the error at the pair terms' rounding whatever n is.
TEST(GravityValidation, MixedPrecisionKeepsTheDigitsThatFloatSumsLose) {
  const double G = 1.0, M = 1.0, R = 1.0, eps = 1e-3;
  const int targets = 16;
  std::vector<std::vector<double>> table;
  double float_small = 0, float_large = 0;
  for (const int log_n : {10, 14, 17, 20}) {
    const int n = 1 << log_n, total = n + targets;
    Particles<Space> p(Space(), total);
    auto x = Kokkos::create_mirror_view(p.x);
    auto m = Kokkos::create_mirror_view(p.m);
    for (int k = 0; k < n; ++k) {
      const double phi = 2.0 * M_PI * k / n;
      x(k, 0) = R * std::cos(phi);
      x(k, 1) = R * std::sin(phi);
      x(k, 2) = 0.0;
      m(k) = M / n;
    }
    Kokkos::View<int*, Kokkos::HostSpace> index_h("index", targets);
    std::vector<double> z(targets);
    for (int j = 0; j < targets; ++j) {  // test particles: massless, heights exact in binary
      z[j] = 0.125 * (j + 1);
      x(n + j, 0) = x(n + j, 1) = 0.0;
      x(n + j, 2) = z[j];
      m(n + j) = 0.0;
      index_h(j) = n + j;
    }
    Kokkos::deep_copy(p.x, x);
    Kokkos::deep_copy(p.m, m);
    Kokkos::View<int*, Space::memory_space> index("index", targets);
    Kokkos::deep_copy(index, index_h);
    double error[3] = {0, 0, 0};
    const Precision precisions[3] = {Precision::Double, Precision::Mixed, Precision::Float};
    for (int k = 0; k < 3; ++k) {
      // One split: every target's sum runs over all n sources in one accumulator.
      DirectSolver<Space> solver(Space(), precisions[k], DirectShape{0, 0, 1, 0}, G, eps);
      ForceOutput<Space> out{
          Kokkos::View<double* [3], Space::memory_space>("acc", targets), {}, {}};
      solver.compute(p.x, p.m, total, {index, targets}, false, out);
      auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.acc);
      for (int j = 0; j < targets; ++j) {
        const double exact = -G * M * z[j] / std::pow(z[j] * z[j] + R * R + eps * eps, 1.5);
        const double dx = a(j, 0), dy = a(j, 1), dz = a(j, 2) - exact;
        error[k] = std::max(error[k], std::sqrt(dx * dx + dy * dy + dz * dz) / std::fabs(exact));
      }
    }
    std::printf(
        "ring of 2^%d masses: max relative error double %.2e, mixed %.2e, float %.2e "
        "(bound (n-1)u = %.2e)\n",
        log_n, error[0], error[1], error[2], (n - 1) * std::ldexp(1.0, -24));
    table.push_back({double(n), error[0], error[1], error[2]});
    EXPECT_LT(error[0], 1e-10) << "n = 2^" << log_n;
    EXPECT_LT(error[1], 1e-6) << "n = 2^" << log_n;
    EXPECT_LT(error[2], (n - 1) * std::ldexp(1.0, -24)) << "n = 2^" << log_n;
    if (log_n == 10) float_small = error[2];
    if (log_n == 20) float_large = error[2];
    if (log_n == 20) EXPECT_GT(error[2], 100 * error[1]);  // float sums measurably lose
  }
  EXPECT_GT(float_large, 30 * float_small);  // and lose more as n grows
  hayate::test::write_validation_csv("gravity_precision", {"n", "double", "mixed", "float"}, table);
}

// ---------------------------------------------------------------------------------------------
// Block time steps (Makino 1991; Aarseth 2003, ch. 2) against the smallest shared step: the
// same Plummer sphere with power-of-two individual steps dt/2^k, k <= 4, and with every particle
// on dt/16. Particles on coarse levels take longer steps, so the runs differ by the integration
// error of those steps, not more.
TEST(GravityValidation, BlockStepsMatchTheSmallestSharedStep) {
  const char* yaml = R"(
problem: gravity
precision: double
system: {n: 512, softening: 0.02, seed: 11}
initial: {type: plummer}
time: {integrator: block, dt: 0.03125, eta: 0.03, max_level: 4}
run: {steps: 32}
output: {every: 1}
checkpoint: {at_end: true}
)";
  const std::string block = out_dir("block"), shared = out_dir("shared");
  run_input(yaml, block, backend);
  run_input(
      yaml, shared, backend,
      {"time.integrator=leapfrog", "time.dt=0.001953125", "run.steps=512", "output.every=16"});
  auto tb = read_csv_columns(block + "/thermo.csv");
  auto ts = read_csv_columns(shared + "/thermo.csv");
  ASSERT_EQ(tb["time"].size(), ts["time"].size());
  double worst_e = 0, worst_e_shared = 0;
  std::vector<std::vector<double>> history;
  for (std::size_t k = 0; k < tb["time"].size(); ++k) {
    ASSERT_NEAR(tb["time"][k], ts["time"][k], 1e-12);
    const double diff = std::fabs(tb["etotal"][k] - ts["etotal"][k]) / std::fabs(ts["etotal"][0]);
    worst_e = std::max(worst_e, diff);
    worst_e_shared = std::max(worst_e_shared, std::fabs(ts["energy_error"][k]));
    history.push_back({tb["time"][k], tb["energy_error"][k], ts["energy_error"][k]});
  }
  const hayate::core::CheckpointReader cb(block + "/checkpoint.bin");
  const hayate::core::CheckpointReader cs(shared + "/checkpoint.bin");
  const auto doubles = [](const hayate::core::CheckpointReader& c, const char* name) {
    const auto& b = c.bytes(name);
    std::vector<double> v(b.size() / sizeof(double));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  };
  const std::vector<double> xb = doubles(cb, "x"), xs = doubles(cs, "x");
  ASSERT_EQ(xb.size(), xs.size());
  double worst_x = 0, sum_x = 0;
  for (std::size_t i = 0; i < xb.size(); i += 3) {
    const double d = std::hypot(xb[i] - xs[i], xb[i + 1] - xs[i + 1], xb[i + 2] - xs[i + 2]);
    worst_x = std::max(worst_x, d);
    sum_x += d * d;
  }
  const double rms_x = std::sqrt(sum_x / double(xb.size() / 3));
  const auto& lb = cb.bytes("level");
  std::vector<int> level(lb.size() / sizeof(int));
  std::memcpy(level.data(), lb.data(), lb.size());
  const int finest = *std::max_element(level.begin(), level.end());
  const double evaluations = tb["force_evaluations"].back(), shared_evaluations = 512.0 * 512;
  std::printf(
      "block vs shared dt/16: |dE|/|E0| <= %.2e (shared's own error %.2e), positions "
      "max %.2e rms %.2e after t = 1, finest level %d, forces %.0f vs %.0f\n",
      worst_e, worst_e_shared, worst_x, rms_x, finest, evaluations, shared_evaluations);
  EXPECT_EQ(finest, 4);  // the shared run's step is the block run's smallest
  EXPECT_LT(worst_e, 1e-5);
  EXPECT_LT(worst_x, 1e-3);
  EXPECT_LT(rms_x, 1e-4);
  EXPECT_LT(evaluations, 0.7 * shared_evaluations);
  hayate::test::write_validation_csv(
      "gravity_block_steps", {"time", "energy_error_block", "energy_error_shared"}, history);
}

// ---------------------------------------------------------------------------------------------
// Snapshots: every frame of snapshots.xyz as positions (3 per particle) and its time.
struct Frame {
  double time = 0;
  std::vector<double> x, v;
};

std::vector<Frame> read_frames(const std::string& path) {
  std::ifstream in(path);
  std::vector<Frame> frames;
  std::string line;
  while (std::getline(in, line)) {
    const int n = std::stoi(line);
    std::getline(in, line);
    Frame f;
    f.time = std::stod(line.substr(line.find("Time=") + 5));
    f.x.resize(3 * std::size_t(n));
    f.v.resize(3 * std::size_t(n));
    for (int i = 0; i < n; ++i) {
      std::getline(in, line);
      std::istringstream row(line);
      std::string species;
      double mass;
      row >> species >> mass >> f.x[3 * i] >> f.x[3 * i + 1] >> f.x[3 * i + 2] >> f.v[3 * i] >>
          f.v[3 * i + 1] >> f.v[3 * i + 2];
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

// The particles' distances from their centre of mass (equal masses), ascending.
std::vector<double> sorted_radii(const std::vector<double>& x) {
  const std::size_t n = x.size() / 3;
  double c[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) c[d] += x[3 * i + d] / double(n);
  std::vector<double> r(n);
  for (std::size_t i = 0; i < n; ++i)
    r[i] = std::hypot(x[3 * i] - c[0], x[3 * i + 1] - c[1], x[3 * i + 2] - c[2]);
  std::sort(r.begin(), r.end());
  return r;
}

// Radius about the centre of mass holding fraction f of the particles (equal masses).
double lagrangian_radius(const std::vector<double>& x, double f) {
  const std::vector<double> r = sorted_radii(x);
  return r[std::size_t(f * double(r.size()))];
}

// The Plummer (1911) sphere in N-body units (Heggie & Mathieu 1986: virial radius 1, so
// a = 3 pi / 16) holds M(<r)/M = r^3 / (r^2 + a^2)^(3/2); the generator (Aarseth, Henon &
// Wielen 1974) redraws radii beyond 10 a, so its particles sample M(<r) / M(<10 a). In virial
// equilibrium the profile stays as it is: every snapshot's radii (about the centre of mass)
// must pass the Kolmogorov-Smirnov test against that distribution at the 0.1% level, a distance
// below 1.95 / sqrt(N) (Smirnov 1948; 0.1% per snapshot keeps the ten snapshots of the two runs
// from failing by chance). A sphere 10% larger or smaller is at 0.054 from it, 15% at 0.079.
double plummer_mass_fraction(double r) {
  const double a = 3.0 * M_PI / 16.0, inside = 1000.0 / std::pow(101.0, 1.5);
  return std::min(1.0, r * r * r / std::pow(r * r + a * a, 1.5) / inside);
}

double plummer_radius(double f) {
  const double a = 3.0 * M_PI / 16.0, inside = 1000.0 / std::pow(101.0, 1.5);
  return a / std::sqrt(std::pow(f * inside, -2.0 / 3.0) - 1.0);
}

double plummer_ks_distance(const std::vector<double>& x) {
  const std::vector<double> r = sorted_radii(x);
  const std::size_t n = r.size();
  double distance = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double F = plummer_mass_fraction(r[i]);
    distance = std::max(
        {distance, std::fabs(double(i + 1) / double(n) - F), std::fabs(double(i) / double(n) - F)});
  }
  return distance;
}

std::string shipped_input(const std::string& name) {
  std::ifstream in(hayate::test::source_path("inputs/gravity/" + name));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A shipped Plummer input at 2048 bodies over `crossing_times` crossing times (2 sqrt(2) each),
// five snapshots.
void check_plummer_profile(const std::string& name, const std::string& input,
                           std::vector<std::string> overrides, double crossing_times) {
  const double dt = 0.0078125;  // both inputs' step
  const int steps = 4 * int(std::lround(crossing_times * 2 * std::sqrt(2.0) / dt / 4));
  overrides.insert(
      overrides.end(),
      {"system.n=2048", "run.steps=" + std::to_string(steps), "output.every=64",
       "output.snapshot_every=" + std::to_string(steps / 4), "output.force_error_every=0"});
  const std::string dir = out_dir(name);
  run_input(shipped_input(input), dir, backend, overrides);
  const auto frames = read_frames(dir + "/snapshots.xyz");
  ASSERT_EQ(frames.size(), 5u);
  const double critical = 1.95 / std::sqrt(2048.0);
  std::vector<std::vector<double>> table;
  for (const Frame& frame : frames) {
    const double distance = plummer_ks_distance(frame.x);
    const double r10 = lagrangian_radius(frame.x, 0.1), r50 = lagrangian_radius(frame.x, 0.5),
                 r90 = lagrangian_radius(frame.x, 0.9);
    std::printf(
        "%s t = %.2f: KS distance %.4f (0.1%% level %.4f), 10/50/90%% radii %.3f %.3f "
        "%.3f (Plummer %.3f %.3f %.3f)\n",
        name.c_str(), frame.time, distance, critical, r10, r50, r90, plummer_radius(0.1),
        plummer_radius(0.5), plummer_radius(0.9));
    EXPECT_LT(distance, critical) << name << ": t = " << frame.time;
    table.push_back({frame.time, r10, r50, r90, distance});
  }
  hayate::test::write_validation_csv(name, {"time", "r10", "r50", "r90", "ks"}, table);
}

TEST(GravityValidation, PlummerSphereKeepsItsMassProfileDirect) {
  check_plummer_profile("gravity_plummer_direct", "plummer_direct.yaml", {}, 3.0);
}

// A fixed rebuild interval: the automatic one depends on measured times.
TEST(GravityValidation, PlummerSphereKeepsItsMassProfileTree) {
  check_plummer_profile("gravity_plummer_tree", "plummer_tree.yaml", {"tree.rebuild_every=4"}, 1.0);
}

// ---------------------------------------------------------------------------------------------
// The galaxy of inputs/gravity/galaxy_tree.yaml: the disk particles come after the bulge's in
// the initial conditions' order (and in every snapshot).
struct DiskRange {
  int first, count;
};
DiskRange disk_range(int n) {
  const double bulge = 0.05, disk = 0.1, halo = 1.0, total = bulge + disk + halo;
  return {int(std::llround(n * bulge / total)), int(std::llround(n * disk / total))};
}

// The disk of one run of galaxy_tree.yaml at n bodies over two rotation periods at R_d (t = 36;
// v_c(R_d) = 0.35, so a period is 18), a snapshot every t = 3, at twice the shipped step (the
// energy error stays below 2e-4) and with a fixed tree rebuild interval (the automatic one
// depends on measured times). Measured about the disk's own centre (its mean x, y and median
// z: the system's centre of mass is not the disk's, by the sampling noise of the halo):
// - the scale length of Freeman's (1970) exponential disk, Sigma ~ exp(-R/R_d): R/R_d is
//   Gamma(2)-distributed, so R_d = mean(R) / 2 is its maximum-likelihood estimate, with a
//   sampling error of R_d / sqrt(2 n_disk);
// - the thickness, the median |z|, which is 0.549 z0 for the sech^2(z/z0) profile of the
//   initial conditions (z0 = 0.1).
struct DiskHistory {
  int disk = 0;
  std::vector<double> time, scale, thickness;
};

DiskHistory galaxy_disk(int n) {
  const std::string dir = out_dir("galaxy_" + std::to_string(n));
  run_input(
      shipped_input("galaxy_tree.yaml"), dir, backend,
      {"system.n=" + std::to_string(n), "time.dt=0.03125", "run.steps=1152", "output.every=96",
       "output.snapshot_every=96", "output.force_error_every=0", "tree.rebuild_every=8"});
  const auto frames = read_frames(dir + "/snapshots.xyz");
  EXPECT_EQ(frames.size(), 13u);
  const DiskRange range = disk_range(n);
  DiskHistory h;
  h.disk = range.count;
  for (const Frame& frame : frames) {
    double cx = 0, cy = 0;
    std::vector<double> z;
    for (int i = range.first; i < range.first + range.count; ++i) {
      cx += frame.x[3 * i] / range.count;
      cy += frame.x[3 * i + 1] / range.count;
      z.push_back(frame.x[3 * i + 2]);
    }
    std::nth_element(z.begin(), z.begin() + z.size() / 2, z.end());
    const double cz = z[z.size() / 2];
    double mean_r = 0;
    for (int i = range.first; i < range.first + range.count; ++i)
      mean_r += std::hypot(frame.x[3 * i] - cx, frame.x[3 * i + 1] - cy) / range.count;
    for (double& v : z) v = std::fabs(v - cz);
    std::nth_element(z.begin(), z.begin() + z.size() / 2, z.end());
    h.time.push_back(frame.time);
    h.scale.push_back(0.5 * mean_r);
    h.thickness.push_back(z[z.size() / 2]);
  }
  return h;
}

// The shipped galaxy (8192 bodies) keeps its exponential disk: the scale length stays within
// three sampling errors of R_d = 1 at every snapshot, over two rotations. Its disk thickens,
// which is two-body relaxation: encounters with single particles (of the massive halo mostly)
// heat the disk at a rate proportional to the particle mass (Binney & Tremaine 2008, sec. 1.2
// and 7.4; with the softening as the smallest impact parameter the Coulomb logarithm does not
// depend on N). The thickening of a 2048-body galaxy must then be four times that of the
// 8192-body one; a disk out of equilibrium would thicken alike at any N. Thickening: the
// thickness less the initial one, averaged over the snapshots after the first. At the shipped
// size the thickness stays within twice the sech^2 median, 0.11.
TEST(GravityValidation, GalaxyDiskKeepsItsScaleLengthAndThickensByTwoBodyRelaxation) {
  const DiskHistory small = galaxy_disk(2048), shipped = galaxy_disk(8192);
  ASSERT_EQ(small.time.size(), shipped.time.size());
  const double sech2_median = 0.1 * std::atanh(0.5);
  std::vector<std::vector<double>> table;
  for (std::size_t k = 0; k < shipped.time.size(); ++k) {
    std::printf(
        "galaxy t = %4.1f: scale length %.3f (2048 bodies) %.3f (8192), thickness %.4f "
        "%.4f (sech^2: %.4f)\n",
        shipped.time[k], small.scale[k], shipped.scale[k], small.thickness[k], shipped.thickness[k],
        sech2_median);
    for (const DiskHistory* h : {&small, &shipped})
      EXPECT_NEAR(h->scale[k], 1.0, 3.0 / std::sqrt(2.0 * h->disk))
          << h->disk << " disk particles, t = " << h->time[k];
    EXPECT_LT(shipped.thickness[k], 2.0 * sech2_median) << "t = " << shipped.time[k];
    table.push_back({shipped.time[k], small.scale[k], shipped.scale[k], small.thickness[k],
                     shipped.thickness[k]});
  }
  const auto thickening = [](const DiskHistory& h) {
    double sum = 0;
    for (std::size_t k = 1; k < h.thickness.size(); ++k) sum += h.thickness[k] - h.thickness[0];
    return sum / double(h.thickness.size() - 1);
  };
  const double ratio = thickening(small) / thickening(shipped);
  std::printf(
      "galaxy thickening, mean over t = 3-36: %.4f (2048 bodies), %.4f (8192): ratio %.2f "
      "(two-body relaxation: 4)\n",
      thickening(small), thickening(shipped), ratio);
  EXPECT_GT(thickening(shipped), 0.0);
  EXPECT_NEAR(ratio, 4.0, 1.5);
  hayate::test::write_validation_csv(
      "gravity_galaxy_disk",
      {"time", "scale_2048", "scale_8192", "thickness_2048", "thickness_8192"}, table);
}

}  // namespace
