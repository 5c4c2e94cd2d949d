// End-to-end gravity runs per backend: Kepler energy and period, Plummer virial equilibrium,
// bitwise restarts for every integrator, every kernel on the problem's instance, and bad-input
// errors through the real binary.
#include "cli_runner.hpp"
#include "compat/kokkos_compat.hpp"
#include "gravity_test_util.hpp"
#include "launch_log.hpp"
#include "run/checkpoint.hpp"
#include "test_spaces.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

using hayate::test::read_csv_columns;
using hayate::test::run_input;

constexpr double two_pi = 6.283185307179586;

// Every output under this process's scratch folder: test shards that run side by side (and
// sanitizer runs) never share one.
std::string gravity_out(const std::string& name) {
  return (hayate::test::scratch_path("gravity") / name).string();
}

const char* kepler_yaml = R"(
problem: gravity
precision: double
system: {softening: 1.0e-7}
initial: {type: kepler, kepler: {semi_major_axis: 1.0, eccentricity: 0.5}}
time: {integrator: hermite, dt: 0.01}
run: {steps: 760}
output: {every: 4}
)";

// Period from the second apocentre: the potential energy peaks there; a parabola through the
// sampled maximum and its neighbours locates it between samples.
double measured_period(const std::vector<double>& t, const std::vector<double>& pe) {
  std::size_t best = 0;
  for (std::size_t k = 1; k + 1 < t.size(); ++k)
    if (t[k] > 0.5 * two_pi && (best == 0 || pe[k] > pe[best])) best = k;
  const double y0 = pe[best - 1], y1 = pe[best], y2 = pe[best + 1];
  const double h = t[best + 1] - t[best];
  return t[best] + 0.5 * h * (y0 - y2) / (y0 - 2 * y1 + y2);
}

template <class Space>
class GravityRun : public ::testing::Test {
 protected:
  std::string backend() const { return hayate::core::space_name<Space>(); }
  std::string dir(const std::string& name) const { return gravity_out(name + "_" + backend()); }
};
HAYATE_SPACE_TEST_SUITE(GravityRun);

TYPED_TEST(GravityRun, KeplerHermiteConservesEnergyAndKeepsThePeriod) {
  double worst[2] = {0, 0};
  for (int half = 0; half < 2; ++half) {
    const std::string d = this->dir("kepler_hermite" + std::to_string(half));
    run_input(kepler_yaml, d, this->backend(),
              half ? std::vector<std::string>{"time.dt=0.005", "run.steps=1520", "output.every=8"}
                   : std::vector<std::string>{});
    auto th = read_csv_columns(d + "/thermo.csv");
    ASSERT_GT(th["time"].size(), 150u);
    // E = -G m1 m2 / (2a) with m1 = m2 = 1/2.
    EXPECT_NEAR(th["etotal"][0], -0.125, 1e-9);
    for (double e : th["energy_error"]) worst[half] = std::max(worst[half], std::fabs(e));
    EXPECT_NEAR(measured_period(th["time"], th["pe"]), two_pi, 2e-4);
    EXPECT_NEAR(th["lz"].back(), th["lz"][0], 1e-8);
    EXPECT_EQ(th["px"].back(), 0.0);
  }
  EXPECT_LT(worst[0], 1e-6);
  // Fourth order: half the step, 1/16 of the error (1/8 allowed).
  EXPECT_LT(worst[1], worst[0] / 8) << worst[0] << " -> " << worst[1];
}

TYPED_TEST(GravityRun, KeplerLeapfrogEnergyErrorIsBoundedNotSecular) {
  run_input(kepler_yaml, this->dir("kepler_leapfrog"), this->backend(),
            {"time.integrator=leapfrog", "time.dt=0.01", "run.steps=1300", "output.every=10"});
  auto th = read_csv_columns(this->dir("kepler_leapfrog") + "/thermo.csv");
  const auto& t = th["time"];
  const auto& e = th["energy_error"];
  double first = 0, second = 0;  // largest error in the first and in the second period
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] < two_pi)
      first = std::max(first, std::fabs(e[k]));
    else if (t[k] < 2 * two_pi)
      second = std::max(second, std::fabs(e[k]));
  }
  EXPECT_GT(first, 1e-7);  // second order: a visible but bounded error
  EXPECT_LT(first, 1e-3);
  EXPECT_LT(second, 1.1 * first);
  EXPECT_NEAR(measured_period(t, th["pe"]), two_pi, 0.05);
}

TYPED_TEST(GravityRun, PlummerStaysInVirialEquilibrium) {
  // Three crossing times (2 sqrt 2 each) of a 512-body Plummer sphere.
  const char* yaml = R"(
problem: gravity
precision: mixed
system: {n: 512, softening: 0.02, seed: 5}
initial: {type: plummer}
time: {integrator: leapfrog, dt: 0.03125}
run: {steps: 272}
output: {every: 8}
)";
  run_input(yaml, this->dir("plummer"), this->backend());
  auto th = read_csv_columns(this->dir("plummer") + "/thermo.csv");
  EXPECT_NEAR(th["virial_ratio"][0], 0.5, 0.05);
  EXPECT_NEAR(th["etotal"][0], -0.25, 0.02);  // N-body units, slightly softened
  for (std::size_t k = 0; k < th["time"].size(); ++k) {
    EXPECT_NEAR(th["virial_ratio"][k], 0.5, 0.1) << "t = " << th["time"][k];
    EXPECT_LT(std::fabs(th["energy_error"][k]), 8e-3) << "t = " << th["time"][k];
  }
}

TYPED_TEST(GravityRun, BlockStepsConserveEnergyWithFewerForceEvaluations) {
  // A concentrated Hernquist sphere: accelerations span decades, so the block steps spread over
  // levels. Energy is conserved while far fewer forces are evaluated than with the finest step.
  // (GravityValidation.BlockStepsMatchTheSmallestSharedStep compares the trajectories.)
  const char* yaml = R"(
problem: gravity
precision: double
system: {n: 200, softening: 0.05, seed: 3}
initial: {type: hernquist, radius: 0.3, truncation: 20}
time: {integrator: block, dt: 0.0625, eta: 0.05, max_level: 8}
run: {steps: 16}
output: {every: 1}
)";
  run_input(yaml, this->dir("block"), this->backend());
  auto th = read_csv_columns(this->dir("block") + "/thermo.csv");
  double worst = 0;
  for (double e : th["energy_error"]) worst = std::max(worst, std::fabs(e));
  EXPECT_LT(worst, 2e-3);
  // Fewer force evaluations than every particle at the finest level used.
  EXPECT_GT(th["force_evaluations"].back(), 0);
  EXPECT_LT(th["force_evaluations"].back(), 16.0 * 200 * 256);
  EXPECT_NEAR(th["time"].back(), 1.0, 1e-12);
}

TYPED_TEST(GravityRun, TreeRunConservesEnergyAndReportsForceErrors) {
  const char* yaml = R"(
problem: gravity
solver: tree
precision: mixed
system: {n: 1500, softening: 0.02, seed: 8}
initial: {type: plummer}
tree: {dacc: 0.001953125, rebuild_every: 4, leaf_size: 8}
time: {dt: 0.015625}
run: {steps: 12}
output: {every: 4, force_error_every: 6, force_error_sample: 300}
)";
  run_input(yaml, this->dir("tree"), this->backend());
  auto th = read_csv_columns(this->dir("tree") + "/thermo.csv");
  for (double e : th["energy_error"]) EXPECT_LT(std::fabs(e), 1e-3);
  auto fe = read_csv_columns(this->dir("tree") + "/force_error.csv");
  ASSERT_EQ(fe["step"].size(), 3u);  // steps 0, 6, 12
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(fe["samples"][k], 300);
    EXPECT_LE(fe["p99"][k], 1e-3);
    EXPECT_LE(fe["p50"][k], fe["p90"][k]);
    EXPECT_LE(fe["p99"][k], fe["max"][k]);
    EXPECT_GT(fe["p50"][k], 0);  // an approximation, not the reference
  }
  std::ifstream t(this->dir("tree") + "/timers.csv");
  const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  for (const char* phase :
       {"tree_keys", "tree_sort", "tree_build", "tree_moments", "tree_walk", "integrate"})
    EXPECT_NE(text.find(phase), std::string::npos) << phase;
  // The set-up evaluation's phases are kept apart from the steps'.
  EXPECT_NE(text.find("\nsetup_tree_build,"), std::string::npos);
  EXPECT_NE(text.find("\ntree_build,"), std::string::npos);
}

TYPED_TEST(GravityRun, DirectForceErrorIsThePrecisionError) {
  const char* yaml = R"(
problem: gravity
precision: float
system: {n: 300, softening: 0.02}
run: {steps: 1}
output: {force_error_every: 1, force_error_sample: 300}
)";
  run_input(yaml, this->dir("direct_error"), this->backend());
  auto fe = read_csv_columns(this->dir("direct_error") + "/force_error.csv");
  ASSERT_EQ(fe["step"].size(), 2u);
  EXPECT_LT(fe["max"][0], 1e-5);
  EXPECT_GT(fe["max"][0], 1e-9);
}

TYPED_TEST(GravityRun, RestartIsBitwiseForEveryIntegrator) {
  const char* yaml = R"(
problem: gravity
precision: mixed
system: {n: 96, softening: 0.05, seed: 9}
initial: {type: plummer}
time: {dt: 0.01, max_level: 5}
run: {steps: 12}
output: {every: 3}
checkpoint: {at_end: true}
)";
  for (const char* integrator : {"leapfrog", "block", "hermite"}) {
    const std::string tag = std::string("restart_") + integrator;
    const std::string straight = this->dir(tag + "_straight"), first = this->dir(tag + "_a"),
                      second = this->dir(tag + "_b");
    const std::string it = std::string("time.integrator=") + integrator;
    run_input(yaml, straight, this->backend(), {it});
    run_input(yaml, first, this->backend(), {it, "run.steps=5"});
    run_input(yaml, second, this->backend(),
              {it, "checkpoint.restart=" + first + "/checkpoint.bin"});
    const hayate::core::CheckpointReader a(straight + "/checkpoint.bin");
    const hayate::core::CheckpointReader b(second + "/checkpoint.bin");
    for (const char* entry : {"step", "time", "x", "v", "acc", "jerk", "m", "level", "e0"})
      EXPECT_EQ(a.bytes(entry), b.bytes(entry)) << integrator << ": " << entry;
    EXPECT_EQ(a.get<std::int64_t>("step"), 12);
  }
  // The tree with a fixed rebuild interval: the tree itself is part of the state.
  for (const char* integrator : {"leapfrog", "block"}) {
    const std::string tag = std::string("restart_tree_") + integrator;
    const std::string straight = this->dir(tag + "_straight"), first = this->dir(tag + "_a"),
                      second = this->dir(tag + "_b");
    const std::vector<std::string> base{std::string("time.integrator=") + integrator, "solver=tree",
                                        "tree.rebuild_every=3", "system.n=300"};
    auto with = [&](std::vector<std::string> extra) {
      extra.insert(extra.begin(), base.begin(), base.end());
      return extra;
    };
    run_input(yaml, straight, this->backend(), with({}));
    run_input(yaml, first, this->backend(), with({"run.steps=5"}));
    run_input(yaml, second, this->backend(),
              with({"checkpoint.restart=" + first + "/checkpoint.bin"}));
    const hayate::core::CheckpointReader a(straight + "/checkpoint.bin");
    const hayate::core::CheckpointReader b(second + "/checkpoint.bin");
    for (const char* entry :
         {"x", "v", "acc", "level", "id", "tree_order", "tree_codes", "tree_nodes"})
      EXPECT_EQ(a.bytes(entry), b.bytes(entry)) << integrator << ": " << entry;
  }
}

// The shipped tree inputs rebuild automatically (tree.rebuild_every: 0). The rule's one timed
// quantity, a rebuild's cost in list entries, is measured at the first step and kept in the
// checkpoint; every later decision follows from the trajectory. So a run restarted from a
// checkpoint rebuilds at the same steps as the run that wrote it and continues it bit for bit
// (as after a kill -9: the run that wrote the checkpoint is the reference).
TYPED_TEST(GravityRun, AutomaticTreeRebuildsRestartBitwise) {
  using Space = TypeParam;
  std::ifstream in(hayate::test::source_path("inputs/gravity/plummer_tree.yaml"));
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The rule rebuilds at least every 64 walks whatever it measured, so a rebuild after the
  // restart point is certain: leapfrog walks once a step (to step 17 + 64 + 1), block steps
  // with 3 levels up to 8 times.
  for (const auto& [integrator, steps] :
       {std::pair<const char*, int>{"leapfrog", 82}, std::pair<const char*, int>{"block", 40}}) {
    const std::vector<std::string> sets{std::string("time.integrator=") + integrator,
                                        "system.n=512",
                                        "run.steps=" + std::to_string(steps),
                                        "time.dt=0.03",
                                        "time.max_level=3",
                                        "output.force_error_every=0",
                                        "output.every=10"};
    const hayate::core::Config config =
        hayate::core::Registry::instance().loader().load_string(yaml, "plummer_tree.yaml", sets);
    ASSERT_EQ(config.integer("tree.rebuild_every"), 0);
    const std::string dir = this->dir(std::string("auto_rebuild_") + integrator);
    std::filesystem::create_directories(dir);
    const auto run_to = [](auto& problem, hayate::core::RunContext& ctx, std::int64_t step) {
      while (problem.current_step() < step) {
        problem.advance(ctx);
        problem.output(ctx, problem.current_step() >= problem.total_steps());
      }
    };
    const auto save = [](const auto& problem, const std::string& path) {
      hayate::core::CheckpointWriter w("gravity");
      problem.save(w);
      w.write(path);
    };
    hayate::core::RunContext ctx_a{config, this->backend(), dir, {}, true};
    hayate::gravity::GravityProblem<Space> a(config, Space());
    a.initialize(ctx_a);
    a.output(ctx_a, false);
    run_to(a, ctx_a, 17);
    save(a, dir + "/at17.bin");
    run_to(a, ctx_a, steps);
    save(a, dir + "/straight.bin");

    const std::string dir_b = dir + "_restarted";
    std::filesystem::create_directories(dir_b);
    hayate::core::RunContext ctx_b{config, this->backend(), dir_b, {}, true};
    hayate::gravity::GravityProblem<Space> b(config, Space());
    b.restore(hayate::core::CheckpointReader(dir + "/at17.bin"), ctx_b);
    b.output(ctx_b, false);
    run_to(b, ctx_b, steps);
    save(b, dir_b + "/restarted.bin");

    const hayate::core::CheckpointReader ra(dir + "/straight.bin"), rb(dir_b + "/restarted.bin");
    for (const auto& entry : ra.names())
      EXPECT_EQ(ra.bytes(entry), rb.bytes(entry)) << integrator << ": " << entry;
    // The rule did rebuild after the restart point (another tree at the end), and the
    // checkpoint carried its calibration.
    const hayate::core::CheckpointReader r17(dir + "/at17.bin");
    EXPECT_TRUE(r17.get<bool>("tree_clock_calibrated"));
    EXPECT_NE(r17.bytes("tree_codes"), ra.bytes("tree_codes")) << integrator;
  }
}

// The tree keeps the particles in its order (TreeParams::reorder; without it, the reference
// here, they stay in the initial conditions' order). The forces are those of the same tree (its
// sort is stable and the keys are distinct here), so the trajectory is the same bit for bit, and
// snapshots and force-error samples, which go by the initial conditions' order, must not see
// the permutation.
TYPED_TEST(GravityRun, TreeReorderKeepsTrajectorySnapshotsAndSamples) {
  const char* yaml = R"(
problem: gravity
solver: tree
precision: float
system: {n: 400, softening: 0.05, seed: 6}
initial: {type: galaxy}
tree: {rebuild_every: 3, leaf_size: 8}
time: {integrator: block, dt: 0.01, max_level: 4}
run: {steps: 5}
output: {every: 5, snapshot_every: 2, force_error_every: 5, force_error_sample: 64}
)";
  auto read_all = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string on = this->dir("reorder_on"), off = this->dir("reorder_off");
  hayate::gravity::ProblemOptions without;
  without.tree_reorder = false;
  hayate::test::run_gravity(yaml, on, TypeParam());
  hayate::test::run_gravity(yaml, off, TypeParam(), without);
  const std::string snap_on = read_all(on + "/snapshots.xyz");
  EXPECT_FALSE(snap_on.empty());
  EXPECT_EQ(snap_on, read_all(off + "/snapshots.xyz"));
  auto fe_on = read_csv_columns(on + "/force_error.csv");
  auto fe_off = read_csv_columns(off + "/force_error.csv");
  ASSERT_EQ(fe_on["p99"].size(), 2u);
  ASSERT_EQ(fe_off["p99"].size(), 2u);
  for (std::size_t k = 0; k < 2; ++k)  // the references sum in a different order
    for (const char* c : {"p50", "p99", "max"})
      EXPECT_NEAR(fe_on[c][k], fe_off[c][k], 1e-9 * fe_off[c][k]) << c;
  // The permutation did happen (and is a permutation); without reordering it did not.
  auto ids = [](const std::string& dir) {
    const hayate::core::CheckpointReader cp(dir + "/checkpoint.bin");
    const auto& b = cp.bytes("id");
    std::vector<int> v(b.size() / sizeof(int));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  };
  std::vector<int> id_on = ids(on), id_off = ids(off);
  ASSERT_EQ(id_on.size(), 400u);
  std::vector<int> identity(400);
  for (int i = 0; i < 400; ++i) identity[i] = i;
  EXPECT_EQ(id_off, identity);
  EXPECT_NE(id_on, identity);
  std::sort(id_on.begin(), id_on.end());
  EXPECT_EQ(id_on, identity);
}

// A problem made on an instance apart from the default one launches every kernel there: the
// initial conditions' upload, the direct solver (leapfrog and Hermite), the tree (rebuilds,
// reordering, group walks, block steps), diagnostics, snapshots and force-error samples.
TYPED_TEST(GravityRun, RunsOnTheGivenInstance) {
  using Space = TypeParam;
  const char* yaml = R"(
problem: gravity
precision: mixed
system: {n: 600, softening: 0.05, seed: 12}
initial: {type: plummer}
time: {dt: 0.01, max_level: 3}
run: {steps: 2}
output: {every: 1, snapshot_every: 1, force_error_every: 1, force_error_sample: 50}
)";
  hayate::compat::IndependentInstance<Space> inst;
  std::vector<std::pair<std::string, std::uint32_t>> kernels;
  std::vector<std::string> elsewhere;
  {
    hayate::test::KernelLaunchLog log;
    const std::vector<std::vector<std::string>> runs{
        {"time.integrator=leapfrog"},
        {"time.integrator=hermite"},
        {"solver=tree", "time.integrator=leapfrog"},
        {"solver=tree", "time.integrator=block", "tree.rebuild_every=1"},
        {"solver=tree", "tree.first_step=direct", "tree.quadrupole=false"}};
    for (std::size_t k = 0; k < runs.size(); ++k)
      hayate::test::run_gravity(yaml, this->dir("instance_" + std::to_string(k)), inst.space(), {},
                                runs[k]);
    kernels = log.hayate_kernels();
    elsewhere = log.elsewhere(hayate::compat::tools_device_id(inst.space()));
  }
  ASSERT_FALSE(kernels.empty());
  auto ran = [&](const std::string& name) {
    return std::any_of(kernels.begin(), kernels.end(),
                       [&](const auto& k) { return k.first == name; });
  };
  for (const char* name :
       {"hayate::gravity::identity", "hayate::gravity::pack", "hayate::gravity::direct_tiles",
        "hayate::gravity::kick", "hayate::gravity::hermite_correct", "hayate::gravity::thermo",
        "hayate::gravity::sample_rows", "hayate::gravity::tree_keys",
        "hayate::gravity::permute_particles", "hayate::gravity::tree_moments",
        "hayate::gravity::tree_group_boxes", "hayate::gravity::tree_walk",
        "hayate::gravity::block_active", "hayate::gravity::block_kick"})
    EXPECT_TRUE(ran(name)) << name;
  std::string names;
  for (const auto& name : elsewhere) names += name + " ";
  EXPECT_TRUE(elsewhere.empty()) << names;
}

TYPED_TEST(GravityRun, ReadsBackItsOwnSnapshotExactly) {
  const char* yaml = R"(
problem: gravity
system: {n: 64, softening: 0.05, seed: 4}
initial: {type: galaxy}
run: {steps: 2}
output: {every: 1}
)";
  run_input(yaml, this->dir("snap"), this->backend());
  // Zero steps from the snapshot: the thermo row must equal the last row of the first run.
  run_input(
      yaml, this->dir("snap_read"), this->backend(),
      {"initial.type=file", "initial.file=" + this->dir("snap") + "/snapshots.xyz", "run.steps=1"});
  auto a = read_csv_columns(this->dir("snap") + "/thermo.csv");
  auto b = read_csv_columns(this->dir("snap_read") + "/thermo.csv");
  EXPECT_EQ(a["ke"].back(), b["ke"][0]);
  EXPECT_EQ(a["pe"].back(), b["pe"][0]);
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = gravity_out(name);
  std::ofstream(path) << text;
  return path;
}

TEST(GravityInput, BadInputsFailWithLocationAndExitCode2) {
  std::filesystem::create_directories(gravity_out(""));
  struct Case {
    std::string yaml, command, expect;
  };
  const std::vector<Case> cases{
      {"problem: gravity\nsystem:\n  softening: 0\n", "check", "bad_eps.yaml:3:14"},
      {"problem: gravity\nsolver: treee\n", "check", "bad_solver.yaml:2:9"},
      {"problem: gravity\ntime:\n  integrater: block\n", "check", "integrator"},
      {"problem: gravity\ninitial:\n  type: kepler\n  kepler: {eccentricity: 1.0}\n", "check",
       "bad_ecc.yaml:4:26"},
      {"problem: gravity\ninitial:\n  type: file\n  file: does_not_exist.xyz\n", "run --quiet",
       "bad_file.yaml:4:9"},
      {"problem: gravity\ninitial:\n  type: file\n", "run --quiet", "bad_nofile.yaml"},
      {"problem: gravity\ndirect:\n  i_per_thread: 4\n", "check",
       "bad_moved.yaml:3:3: 'direct.i_per_thread' moved to 'tuning.i_per_thread'"},
      {"problem: gravity\nsolver: tree\ntime:\n  integrator: hermite\n", "run --quiet",
       "bad_hermite.yaml:2:9"},
      {"problem: gravity\ntree:\n  dacc: -1\n", "check", "bad_dacc.yaml:3:9"},
      {"problem: gravity\ntree:\n  walk: particle\n", "check",
       "bad_walk.yaml:3:3: 'tree.walk' was removed"},
      {"problem: gravity\nsolver: tree\ntree:\n  curve: morton\n", "check",
       "bad_curve.yaml:4:3: 'tree.curve' was removed"},
      {"problem: gravity\ntuning:\n  i_per_thread: 3\n", "check", "bad_ipt.yaml:3:17"},
  };
  const char* names[] = {"bad_eps",  "bad_solver", "bad_key",   "bad_ecc",
                         "bad_file", "bad_nofile", "bad_moved", "bad_hermite",
                         "bad_dacc", "bad_walk",   "bad_curve", "bad_ipt"};
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::string path = write_file(std::string(names[k]) + ".yaml", cases[k].yaml);
    const bool run = cases[k].command.rfind("run", 0) == 0;
    const auto r = hayate::test::run_cli(cases[k].command + " " + path +
                                         (run ? " --output " + gravity_out(names[k]) : ""));
    EXPECT_EQ(r.exit_code, 2) << names[k] << ": " << r.output;
    EXPECT_NE(r.output.find(cases[k].expect), std::string::npos) << names[k] << ": " << r.output;
  }
}

TEST(GravityInput, MalformedParticleFilesNameLineAndColumn) {
  std::filesystem::create_directories(gravity_out(""));
  const std::string csv =
      write_file("bad.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,zz,0,0,0,1\n");
  const std::string yaml =
      write_file("bad_csv.yaml", "problem: gravity\ninitial:\n  type: file\n  file: " + csv + "\n");
  auto r = hayate::test::run_cli("run --quiet " + yaml + " --output " + gravity_out("bad_csv"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.csv:3:5"), std::string::npos) << r.output;
  const std::string csv2 = write_file("bad2.csv", "x,y,z,vx,vy,m\n0,0,0,0,0,1\n");
  const std::string yaml2 = write_file(
      "bad_csv2.yaml", "problem: gravity\ninitial:\n  type: file\n  file: " + csv2 + "\n");
  r = hayate::test::run_cli("run --quiet " + yaml2 + " --output " + gravity_out("bad_csv2"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'vz' is missing"), std::string::npos) << r.output;
}

TEST(GravityInput, ShippedInputsValidate) {
  for (const char* f : {"plummer_direct", "kepler", "plummer_tree", "galaxy_tree"}) {
    const auto r = hayate::test::run_cli("check " + hayate::test::source_path("inputs/gravity/") +
                                         f + ".yaml");
    EXPECT_EQ(r.exit_code, 0) << f << ": " << r.output;
  }
}

}  // namespace
