// Integrators, thermostats, thermo output against LAMMPS' in.lj, restarts and input errors.
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "io/xyz.hpp"
#include "md_test_util.hpp"
#include "run/checkpoint.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace hayate::md::test {
namespace {

template <class Space>
class MdDynamics : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(MdDynamics);

double total_energy(const Thermo& t) {
  return t.etotal;
}

TYPED_TEST(MdDynamics, NveEnergyDriftIsSmall) {
  using Space = TypeParam;
  // 256 atoms melting from fcc at T = 1.44; shifted potential so energy is continuous.
  InitialState init = rattled_lattice(4, 0.8442, 0.0, false, 1.44);
  init.types.shift = true;
  MdParams params;
  params.dt = 0.005;
  params.every = 10;
  params.check = true;
  MdSystem<Space, double, LjCut> sys(init, params);
  sys.initialize();
  const double e0 = total_energy(sys.thermo());
  double worst = 0, sum_late = 0;
  int late = 0;
  for (int s = 1; s <= 1000; ++s) {
    sys.advance(s % 10 == 0);
    if (s % 10 == 0) {
      const double e = total_energy(sys.thermo());
      worst = std::max(worst, std::fabs(e - e0));
      if (s > 900) {
        sum_late += e;
        ++late;
      }
    }
  }
  // Velocity Verlet at dt = 0.005 keeps E to about 1e-3 per atom here; a wrong force sign,
  // a missed half kick or a stale neighbor list gives errors of order 0.1 or more.
  EXPECT_LT(worst, 5e-3);
  EXPECT_LT(std::fabs(sum_late / late - e0), 2e-3);
  EXPECT_GT(sys.rebuilds(), 10);
  // The temperature fell as the lattice melted: the dynamics actually moved.
  EXPECT_LT(sys.thermo().temp, 1.2);
}

// LAMMPS bench/in.lj (32,000 atoms) prints at step 0: T 1.44, E_pair -6.7733681, Press -5.0196;
// at step 100: T ~0.759, E_pair ~ -5.67 .. -5.76. At 2,048 atoms the lattice energy is identical
// and the step-100 values agree within the fluctuations of the smaller system.
TYPED_TEST(MdDynamics, InLjThermoMatchesLammps) {
  using Space = TypeParam;
  InitialState init = fcc_lattice(0.8442, 8, 8, 8, {0});
  init.types = TypeSet::single(2.5);
  create_velocities(init, 1.44, 87287);
  MdParams params;
  params.dt = 0.005;
  params.skin = 0.3;
  params.every = 20;
  params.check = false;
  MdSystem<Space, double, LjCut> sys(init, params);
  sys.initialize();
  const Thermo t0 = sys.thermo();
  EXPECT_NEAR(t0.temp, 1.44, 1e-12);
  EXPECT_NEAR(t0.pe, -6.7733681, 1e-7);
  EXPECT_NEAR(t0.press, -5.0196, 1.5e-3);
  EXPECT_NEAR(t0.ke, 1.5 * 1.44 * (1.0 - 1.0 / sys.size()), 1e-12);
  for (int s = 1; s <= 100; ++s) sys.advance(s == 100);
  const Thermo t = sys.thermo();
  EXPECT_EQ(t.step, 100);
  EXPECT_NEAR(t.temp, 0.759, 0.06);
  EXPECT_NEAR(t.pe, -5.72, 0.08);
  EXPECT_NEAR(t.etotal, t0.etotal, 0.02);
}

TYPED_TEST(MdDynamics, LangevinReachesTargetAndIsReproducible) {
  using Space = TypeParam;
  InitialState init = rattled_lattice(4, 0.8442, 0.0, false, 0.3);
  MdParams params;
  params.thermostat = Thermostat::Langevin;
  params.t_target = 1.5;
  params.damp = 0.1;
  params.seed = 7;
  params.force = {ListKind::Full, Scatter::Atomic, Parallel::Thread};
  auto run = [&](std::vector<double>& x) {
    MdSystem<Space, double, LjCut> sys(init, params);
    sys.initialize();
    double mean = 0;
    for (int s = 1; s <= 600; ++s) {
      sys.advance(false);
      if (s > 300) mean += sys.temperature() / 300.0;
    }
    std::vector<int> type;
    download(sys, x, type);
    return mean;
  };
  std::vector<double> x1, x2;
  const double mean = run(x1);
  EXPECT_NEAR(mean, 1.5, 0.12);
  run(x2);
  EXPECT_EQ(x1, x2);  // bitwise
}

TYPED_TEST(MdDynamics, BerendsenReachesTarget) {
  using Space = TypeParam;
  InitialState init = rattled_lattice(4, 0.8442, 0.0, false, 1.44);
  MdParams params;
  params.thermostat = Thermostat::Berendsen;
  params.t_target = 0.7;
  params.tau = 0.05;
  MdSystem<Space, double, LjCut> sys(init, params);
  sys.initialize();
  for (int s = 1; s <= 300; ++s) sys.advance(false);
  EXPECT_NEAR(sys.temperature(), 0.7, 0.03);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* restart_yaml = R"(problem: md
system:
  lattice: {density: 0.8442, cells: [4, 4, 4], types: [A, B]}
  types:
    - {name: A}
    - {name: B, mass: 2.0, sigma: 1.1, cutoff: 2.2}
neighbor: {skin: 0.3, every: 7, check: true}
run: {steps: 40, ensemble: langevin}
thermostat: {temperature: 1.2, damp: 0.5}
output: {thermo_every: 5, dump_every: 20}
)";

// A molten charged salt with the Ewald sum: the k-space forces must restart bitwise too.
const char* const charged_restart_yaml = R"(problem: md
system:
  lattice: {style: rocksalt, constant: 2.3, cells: [3, 3, 3], types: [Na, Cl]}
  temperature: 1.5
  types:
    - {name: Na, charge: 1, epsilon: 0.5}
    - {name: Cl, charge: -1, epsilon: 0.5, mass: 1.5}
pair: {style: lj/cut/coul/long, cutoff: 2.5, coul_cutoff: 2.8}
kspace: {style: ewald, accuracy: 1e-5}
neighbor: {skin: 0.3, every: 7, check: true}
run: {steps: 40, dt: 0.002, ensemble: langevin}
thermostat: {temperature: 1.5, damp: 0.5}
output: {thermo_every: 5, dump_every: 20}
)";

void expect_bitwise_restart(const std::string& backend, const std::string& list,
                            const std::string& scatter, const std::string& precision,
                            const std::string& positions = "split",
                            const char* yaml = restart_yaml) {
  auto& registry = core::Registry::instance();
  // A fresh folder of this process: a restart keeps what an earlier run left there up to its step.
  const std::string base =
      (hayate::test::fresh_scratch("md_restart", backend + "_" + list + scatter + precision +
                                                     positions +
                                                     (yaml == restart_yaml ? "" : "_charged")) /
       "run")
          .string();
  const std::vector<std::string> common{"tuning.list=" + list, "tuning.scatter=" + scatter,
                                        "precision=" + precision, "tuning.positions=" + positions,
                                        "checkpoint.at_end=true"};
  auto load = [&](std::vector<std::string> extra) {
    std::vector<std::string> o = common;
    o.insert(o.end(), extra.begin(), extra.end());
    return registry.loader().load_string(yaml, "restart.yaml", o);
  };
  core::run_problem(load({}), {backend, base + "_straight", true});
  core::run_problem(load({"run.steps=20"}), {backend, base + "_first", true});
  core::run_problem(load({"checkpoint.restart=" + base + "_first/checkpoint.bin"}),
                    {backend, base + "_second", true});
  const core::CheckpointReader a(base + "_straight/checkpoint.bin");
  const core::CheckpointReader b(base + "_second/checkpoint.bin");
  EXPECT_EQ(a.get<std::int64_t>("step"), 40);
  EXPECT_EQ(b.get<std::int64_t>("step"), 40);
  for (const char* name : {"x", "v", "f", "x_build", "id", "type", "q", "energy", "virial"})
    EXPECT_EQ(a.bytes(name), b.bytes(name)) << name;
  // The restarted run's thermo rows equal the straight run's from step 20 on.
  const std::string straight = read_text(base + "_straight/thermo.csv");
  const std::string second = read_text(base + "_second/thermo.csv");
  const auto tail = second.substr(second.find('\n') + 1);
  EXPECT_NE(straight.find(tail), std::string::npos) << second;
  EXPECT_NE(read_text(base + "_straight/dump.xyz").find("Lattice="), std::string::npos);
}

// The final half kick is deferred into the next step's first, and the drift writes the
// packed records the force call then reads. A run that settles the kick after every step
// (reading the velocities) and recomputes the forces from freshly packed records must follow
// the same trajectory to the bit, on every list and position variant.
TYPED_TEST(MdDynamics, FusedKickAndDriftPackingMatchTheStepwiseSequence) {
  using Space = TypeParam;
  // Half-list sums are reproducible with duplicated scatter on CPUs only (atomics add in
  // arrival order); on a GPU the full list stands for both.
  const bool gpu = core::ExecTraits<Space>::is_gpu;
  for (const Positions positions : {Positions::Packed, Positions::Split})
    for (const ListKind list : {ListKind::Full, ListKind::Half})
      for (const bool two : {false, true}) {
        if (gpu && list == ListKind::Half) continue;
        MdParams params;
        params.every = 15;
        params.check = true;
        params.layout = Layout::Transposed;
        params.force.positions = positions;
        params.force.list = list;
        if (list == ListKind::Half) params.force.scatter = Scatter::Duplicated;
        // 6 cells: the box holds the whole search stencil (the exact-image search path).
        const InitialState init = rattled_lattice(6, 0.8442, 0.05, two, 1.44);
        MdSystem<Space, double, LjCut> fused(init, params), stepwise(init, params);
        fused.initialize();
        stepwise.initialize();
        for (int s = 1; s <= 40; ++s) {
          fused.advance(s % 20 == 0);
          stepwise.advance(s % 20 == 0);
          stepwise.velocities();  // settles the pending kick now
          stepwise.compute_forces(false);
        }
        const std::string what = variant_name(params.force) + (two ? " two types" : " one type");
        auto host = [](const auto& v) {
          return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
        };
        const auto xa = host(fused.positions()), xb = host(stepwise.positions());
        const auto va = host(fused.velocities()), vb = host(stepwise.velocities());
        const auto fa = host(fused.forces()), fb = host(stepwise.forces());
        int differ = 0;
        for (int i = 0; i < fused.size(); ++i)
          for (int d = 0; d < 3; ++d)
            differ += xa(i, d) != xb(i, d) || va(i, d) != vb(i, d) || fa(i, d) != fb(i, d);
        EXPECT_EQ(differ, 0) << what;
        EXPECT_GT(fused.rebuilds(), 2) << what;
        EXPECT_EQ(fused.thermo().etotal, stepwise.thermo().etotal) << what;
      }
}

TYPED_TEST(MdDynamics, RestartIsBitwise) {
  const std::string backend = core::space_name<TypeParam>();
  expect_bitwise_restart(backend, "full", "atomic", "double");
  expect_bitwise_restart(backend, "full", "atomic", "float");
  expect_bitwise_restart(backend, "full", "atomic", "double", "packed");
  if (!core::ExecTraits<TypeParam>::is_gpu) {
    expect_bitwise_restart(backend, "half", "duplicated", "double");
    expect_bitwise_restart(backend, "half", "duplicated", "float", "packed");
  }
}

TYPED_TEST(MdDynamics, RestartWithEwaldIsBitwise) {
  HAYATE_REQUIRE_MD_STYLE("lj/cut/coul/long");
  const std::string backend = core::space_name<TypeParam>();
  expect_bitwise_restart(backend, "full", "atomic", "double", "packed", charged_restart_yaml);
  if (!core::ExecTraits<TypeParam>::is_gpu)
    expect_bitwise_restart(backend, "half", "duplicated", "double", "split", charged_restart_yaml);
}

TEST(MdInput, ThermoHeaderAndInputsValidate) {
  const auto r = hayate::test::run_cli(
      "run " + hayate::test::source_path("inputs/md/lj_melt.yaml") +
      " --backend serial --quiet --output md_cli_out --set system.lattice.cells=[4,4,4] "
      "--set run.steps=10 --set output.thermo_every=5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_text("md_cli_out/thermo.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "step,temp,pe,ke,etotal,press");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);  // header + steps 0, 5, 10
  for (const char* input :
       {"lj_melt.yaml", "bench_rho1.yaml", "bench_rho05.yaml", "nvt_langevin.yaml",
        "morse_melt.yaml", "nacl_crystal.yaml", "nacl_melt.yaml"}) {
    const auto c = hayate::test::run_cli(
        "check " + hayate::test::source_path(std::string("inputs/md/") + input));
    EXPECT_EQ(c.exit_code, 0) << input << ": " << c.output;
  }
  // The molten salt in real units runs: the step guard's speed is in the input's units (it
  // once took 1300 K as 1300 in Lennard-Jones units and stopped the run at step 0).
  const auto melt = hayate::test::run_cli(
      "run " + hayate::test::source_path("inputs/md/nacl_melt.yaml") +
      " --backend serial --quiet --output md_melt_out --set system.lattice.cells=[4,4,4] "
      "--set run.steps=5 --set output.thermo_every=5");
  if (hayate::md::style_is_built("lj/cut/coul/long")) {
    EXPECT_EQ(melt.exit_code, 0) << melt.output;
  } else {  // a build with a subset of the styles (HAYATE_MD_STYLES) refuses it as an input error
    EXPECT_EQ(melt.exit_code, 2) << melt.output;
    EXPECT_NE(melt.output.find("is not compiled into this build"), std::string::npos)
        << melt.output;
  }
}

#ifdef KOKKOS_ENABLE_OPENMP
TEST(MdInput, FullListTrajectoryIsTheSameOnAnyThreadCount) {
  // Each thread writes only its own atoms' forces: positions and velocities do not depend on
  // how the atoms are shared out (md.md); through two neighbor-list rebuilds.
  std::string dumps[2];
  for (const int threads : {1, 2}) {
    const std::string out = "md_threads_" + std::to_string(threads);
    const auto r = hayate::test::run_cli(
        "run " + hayate::test::source_path("inputs/md/lj_melt.yaml") +
        " --backend openmp --threads " + std::to_string(threads) + " --quiet --output " + out +
        " --set system.lattice.cells=[5,5,5] --set tuning.list=full --set run.steps=45"
        " --set output.thermo_every=45 --set output.dump_every=45");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    dumps[threads - 1] = read_text(out + "/dump.xyz");
  }
  ASSERT_FALSE(dumps[0].empty());
  EXPECT_TRUE(dumps[0] == dumps[1]);
}
#endif

// Builds the problem from YAML text and returns the input error it raises ("" if none).
std::string problem_error(const std::string& yaml) {
  try {
    const auto config = core::Registry::instance().loader().load_string(yaml, "bad.yaml");
    core::Registry::instance().find("md").create(config, "serial");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MdInput, BadInputsGiveFileLineColumn) {
  // Box 2 x 1.68 = 3.4 < 2 x (2.5 + 0.3).
  std::string e = problem_error("problem: md\nsystem:\n  lattice:\n    cells: [2, 2, 2]\n");
  EXPECT_NE(e.find("bad.yaml:4:12"), std::string::npos) << e;
  EXPECT_NE(e.find("smaller than 2 x (cutoff + skin)"), std::string::npos) << e;

  e = problem_error("problem: md\nsystem:\n  lattice:\n    density: 0\n");
  EXPECT_NE(e.find("bad.yaml:4:14"), std::string::npos) << e;

  e = problem_error("problem: md\nsystem:\n  lattice:\n    density: -1.0\n");
  EXPECT_NE(e.find("bad.yaml:4:14"), std::string::npos) << e;

  e = problem_error("problem: md\nsystem:\n  lattice:\n    types: [A, C]\n");
  EXPECT_NE(e.find("bad.yaml:4:12"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown type 'C'"), std::string::npos) << e;

  e = problem_error(
      "problem: md\nsystem:\n  types:\n    - {name: A}\npair:\n  coeffs:\n"
      "    - {types: [A, X], epsilon: 1, sigma: 1}\n");
  EXPECT_NE(e.find("bad.yaml:7:15"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown type 'X'"), std::string::npos) << e;

  e = problem_error("problem: md\nneighbor:\n  every: 0\n  check: false\n");
  EXPECT_NE(e.find("bad.yaml:3:10"), std::string::npos) << e;

  e = problem_error("problem: md\ntuning:\n  list: halve\n");
  EXPECT_NE(e.find("did you mean 'half'"), std::string::npos) << e;

  // Keys that moved under tuning: say where; a removed one says why.
  e = problem_error("problem: md\nforce:\n  list: half\nneighbor:\n  sort: false\n");
  EXPECT_NE(e.find("bad.yaml:3:3: 'force.list' moved to 'tuning.list'"), std::string::npos) << e;
  EXPECT_NE(e.find("bad.yaml:5:3: 'neighbor.sort' was removed"), std::string::npos) << e;

  // Unknown species in an XYZ file.
  {
    std::ofstream out("md_bad_species.xyz");
    out << "2\nLattice=\"10 0 0 0 10 0 0 0 10\" Properties=species:S:1:pos:R:3\n"
        << "A 1 1 1\nAr 2 2 2\n";
  }
  e = problem_error("problem: md\nsystem:\n  source: xyz\n  xyz:\n    file: md_bad_species.xyz\n");
  EXPECT_NE(e.find("bad.yaml:5:11"), std::string::npos) << e;
  EXPECT_NE(e.find("species 'Ar'"), std::string::npos) << e;

  // The CLI reports the same with exit code 2.
  {
    std::ofstream out("md_bad_box.yaml");
    out << "problem: md\nsystem:\n  lattice:\n    cells: [3, 3, 3]\n";
  }
  const auto r = hayate::test::run_cli("run md_bad_box.yaml --quiet --output md_bad_box_out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("md_bad_box.yaml:4:12"), std::string::npos) << r.output;
}

TEST(MdInput, BadMorseCoefficientsGiveFileLineColumn) {
  HAYATE_REQUIRE_MD_STYLE("morse");
  // A parameter of another pair style, a morse pair without its parameters, and an unlike morse
  // pair nobody gave (morse has no mixing rule).
  std::string e = problem_error(
      "problem: md\npair:\n  style: morse\nsystem:\n  types:\n    - {name: A, epsilon: 1}\n");
  EXPECT_NE(e.find("bad.yaml:6:26"), std::string::npos) << e;
  EXPECT_NE(e.find("'epsilon' is not a parameter of pair style morse"), std::string::npos) << e;
  e = problem_error(
      "problem: md\npair:\n  style: morse\n  coeffs:\n    - {types: [A, A], d0: 1, r0: 1}\n");
  EXPECT_NE(e.find("bad.yaml:5:15"), std::string::npos) << e;
  EXPECT_NE(e.find("needs d0, alpha, r0"), std::string::npos) << e;
  e = problem_error(
      "problem: md\npair:\n  style: morse\n  coeffs:\n"
      "    - {types: [A, A], d0: 1, alpha: 3, r0: 1.1}\n    - {types: [B, B], d0: 1, alpha: 3, "
      "r0: 1.1}\nsystem:\n  lattice: {types: [A, B]}\n  types:\n    - {name: A}\n"
      "    - {name: B}\n");
  EXPECT_NE(e.find("no mixing rule"), std::string::npos) << e;
  EXPECT_NE(e.find("[A, B]"), std::string::npos) << e;
}

TEST(MdInput, XyzRoundTrip) {
  // A dump frame read back as input gives the same thermodynamic state.
  const auto r = hayate::test::run_cli(
      "run " + hayate::test::source_path("inputs/md/lj_melt.yaml") +
      " --backend serial --quiet --output md_xyz_a --set system.lattice.cells=[4,4,4] "
      "--set run.steps=10 --set output.thermo_every=10 --set output.dump_every=10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto frame = core::read_xyz("md_xyz_a/dump.xyz", -1);
  EXPECT_EQ(frame.size(), 256u);
  const auto r2 = hayate::test::run_cli(
      "run " + hayate::test::source_path("inputs/md/lj_melt.yaml") +
      " --backend serial --quiet --output md_xyz_b --set system.source=xyz "
      "--set system.xyz.file=md_xyz_a/dump.xyz --set system.xyz.frame=-1 --set run.steps=0");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  const std::string a = read_text("md_xyz_a/thermo.csv"), b = read_text("md_xyz_b/thermo.csv");
  const std::string last_a = a.substr(a.rfind("\n10,") + 4);
  const std::string first_b = b.substr(b.find("\n0,") + 3);
  // Same temperature and energies to the ~16 digits the XYZ writer keeps.
  double ta, tb, pa, pb;
  std::sscanf(last_a.c_str(), "%lf,%lf", &ta, &pa);
  std::sscanf(first_b.c_str(), "%lf,%lf", &tb, &pb);
  EXPECT_NEAR(ta, tb, 1e-10);
  EXPECT_NEAR(pa, pb, 1e-10);
}

}  // namespace
}  // namespace hayate::md::test
