// The device interpreter against the serial reference interpreter and the AST evaluator, step by
// step, for every execution space, every mode and both fixed-step integrators; ensembles; teams
// with halos; the integrators' orders and rk45's tolerance.
#include "cli_runner.hpp"
#include "ode/engine.hpp"
#include "ode/reference.hpp"
#include "random_model.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace hayate::ode {
namespace {

template <class Space>
class OdeEngine : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(OdeEngine);

// Relative difference per element with a floor of 1e-300 on the scale; NaN never matches.
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    const double scale = std::max({std::fabs(a[i]), std::fabs(b[i]), 1e-300});
    worst = std::max(worst, std::fabs(a[i] - b[i]) / scale);
  }
  return worst;
}

// Devices may contract a*b + c into one FMA; 1e-12 relative per step covers that rounding.
constexpr double kTolerance = 1e-12;

constexpr ExecMode all_modes[] = {ExecMode::Phases, ExecMode::Persistent, ExecMode::Fused,
                                  ExecMode::Teams};

template <class Space>
void compare_per_step(const FlatModel& model, CompilerOptions options, Method method, ExecMode mode,
                      int steps, double dt, double t0 = 0.0,
                      const EngineOptions& engine_options = {}) {
  if (mode == ExecMode::Teams && options.partitions == 1) options.partitions = 3;
  const Program prog = compile(model, options);
  Engine<Space> dev(Space(), prog, 1, method, mode, engine_options);
  ReferenceInterpreter ref(prog, 1, method);
  AstIntegrator ast(model, method);
  dev.set_states(model.state_init);
  ref.x() = model.state_init;
  ast.x() = model.state_init;
  const auto first = static_cast<std::int64_t>(std::llround(t0 / dt));
  for (int n = 0; n < steps; ++n) {
    dev.advance(first + n, 1, dt);
    ref.advance(first + n, 1, dt);
    ast.advance(first + n, 1, dt);
    const auto x = dev.states_host();
    ASSERT_LE(rel_diff(x, ref.x()), kTolerance) << "step " << n;
    ASSERT_LE(rel_diff(x, ast.x()), kTolerance) << "step " << n;
    // Continue every path from the same state so the comparison stays per step.
    ref.x() = x;
    ast.x() = x;
  }
  dev.evaluate(double(first + steps) * dt);
  ref.evaluate(double(first + steps) * dt);
  const auto v = dev.vars_host();
  EXPECT_LE(rel_diff(std::vector<double>(v.begin(), v.begin() + prog.n_alg),
                     std::vector<double>(ref.v.begin(), ref.v.begin() + prog.n_alg)),
            kTolerance);
  // A derivative near zero is only known to the absolute precision of the terms it sums (CUDA's
  // exp/pow differ from glibc's by an ulp), so derivatives are compared through what they do:
  // the update dt*f relative to the state it changes.
  const auto f_dev = dev.f_host();
  const auto x_now = dev.states_host();
  double worst = 0;
  for (std::size_t i = 0; i < f_dev.size(); ++i) {
    const double scale =
        std::max({std::fabs(x_now[i % x_now.size()]), std::fabs(dt * ref.f[i]), 1e-300});
    worst = std::max(worst, std::fabs(dt * (f_dev[i] - ref.f[i])) / scale);
  }
  EXPECT_LE(worst, kTolerance);
}

TYPED_TEST(OdeEngine, LuoRudyMatchesReferenceAndAstPerStep) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/lr91.model.yaml"));
  for (Method method : {Method::Euler, Method::RK4})
    for (ExecMode mode : all_modes) {
      // Start just before the stimulus so the upstroke is inside the compared steps.
      compare_per_step<TypeParam>(model, all_passes(), method, mode, 30, 0.02, 9.8);
      compare_per_step<TypeParam>(model, CompilerOptions{}, method, mode, 5, 0.02);
    }
}

TYPED_TEST(OdeEngine, RandomModelsMatchWithAndWithoutPasses) {
  for (std::uint64_t seed : {11u}) {
    test::RandomModel gen(seed);
    const FlatModel model = load_model_string(gen.yaml(10, 3, 45), "random.yaml");
    for (int bits : {0, 31, 29})
      for (ExecMode mode : all_modes) {
        compare_per_step<TypeParam>(model, test::passes_from_bits(bits), Method::RK4, mode, 3,
                                    0.01);
      }
    CompilerOptions sunk = all_passes();
    sunk.sink_derivatives = true;
    for (ExecMode mode : all_modes)
      compare_per_step<TypeParam>(model, sunk, Method::RK4, mode, 3, 0.01);
  }
}

TYPED_TEST(OdeEngine, EnsembleMembersMatchSeparateRuns) {
  ModelOptions mo;
  mo.swept = {"wb.I_app"};
  const FlatModel model = load_model_file(test::source_path("inputs/ode/wb96.model.yaml"), mo);
  const Program prog = compile(model, all_passes());
  const std::size_t M = 37;  // not a multiple of the warp width
  std::vector<double> x(prog.n_states * M), p(M);
  for (std::size_t m = 0; m < M; ++m) {
    p[m] = 0.05 * double(m);
    for (std::size_t i = 0; i < prog.n_states; ++i)
      x[i * M + m] = model.state_init[i] + 0.1 * double(m % 5) * (i == 0);
  }
  struct Variant {
    ExecMode mode;
    EngineOptions options;
  };
  // Fused: state in scratch (all members in one team, or 8 per team with a partial last team)
  // and in global memory; 2 and 4 members per thread (full teams, then the rest at width 1).
  const Variant variants[] = {{ExecMode::Phases, {}},
                              {ExecMode::Persistent, {}},
                              {ExecMode::Fused, {}},
                              {ExecMode::Fused, {FusedState::Scratch, 8}},
                              {ExecMode::Fused, {FusedState::Global, 0}},
                              {ExecMode::Fused, {FusedState::Scratch, 8, true, 2}},
                              {ExecMode::Fused, {FusedState::Scratch, 16, true, 4}},
                              {ExecMode::Fused, {FusedState::Global, 8, true, 4}},
                              {ExecMode::Fused, {FusedState::Auto, 0, true, 4}}};
  for (const auto& [mode, options] : variants) {
    SCOPED_TRACE(testing::Message()
                 << "mode " << int(mode) << " members per team " << options.fused_members
                 << " width " << options.fused_width << " state " << int(options.fused_state));
    Engine<TypeParam> dev(TypeParam(), prog, M, Method::RK4, mode, options);
    dev.set_states(x);
    dev.set_params(p);
    ReferenceInterpreter ref(prog, M, Method::RK4);
    ref.x() = x;
    std::copy(p.begin(), p.end(), ref.v.begin() + prog.n_alg * M);
    dev.advance(0, 60, 0.05);
    ref.advance(0, 60, 0.05);
    const auto got = dev.states_host();
    EXPECT_LE(rel_diff(got, ref.x()), 1e-9);  // 60 steps: per-step rounding may accumulate
    // Member m alone, by the AST evaluator.
    for (std::size_t m : {std::size_t(0), std::size_t(20), M - 1}) {
      AstIntegrator ast(model, Method::RK4);
      for (std::size_t i = 0; i < prog.n_states; ++i) ast.x()[i] = x[i * M + m];
      ast.v[prog.n_alg] = p[m];
      ast.advance(0, 60, 0.05);
      for (std::size_t i = 0; i < prog.n_states; ++i)
        EXPECT_NEAR(got[i * M + m], ast.x()[i], 1e-9 * std::max(1.0, std::fabs(ast.x()[i])))
            << "member " << m;
    }
  }
}

// LR-Line in teams mode: 100 cells in 25 bins (one team each on a GPU), coupled through the
// previous stage's voltages; Euler and RK4 against the reference interpreter step by step, with
// each team's program and values in scratch, only its variables in scratch, and everything in
// global memory.
TYPED_TEST(OdeEngine, LineOfCellsInTeamsMatchesReference) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/lr_line.model.yaml"));
  CompilerOptions o = all_passes();
  o.partitions = 0;
  EXPECT_EQ(compile(model, o).n_bins, 25u);
  EngineOptions in_global;
  in_global.teams_scratch = false;
  EngineOptions vars_only;
  vars_only.teams_program = false;
  for (Method method : {Method::Euler, Method::RK4})
    for (const EngineOptions& eo : {EngineOptions{}, vars_only, in_global})
      compare_per_step<TypeParam>(model, o, method, ExecMode::Teams, 3, 0.01, 9.99, eo);
}

// compiler.sink: LR-Line's dCai/dt, which merging appended to E_si -> I_si in phase 0, runs in
// phase 1 next to the gates (no phase added), the teams layout's critical path gets shorter
// (so `auto` takes it), and every mode still matches the reference interpreter.
TYPED_TEST(OdeEngine, SunkDerivativesKeepThePhasesAndMatchTheReference) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/lr_line.model.yaml"));
  CompilerOptions o = all_passes();
  o.partitions = 0;
  CompilerOptions sunk = o;
  sunk.sink_derivatives = true;
  const Program plain = compile(model, o), sunk_prog = compile(model, sunk);
  EXPECT_EQ(sunk_prog.n_phases(), plain.n_phases());
  const auto critical = [](const Program& p) {
    return layout_teams(p, int(p.n_bins)).critical_words();
  };
  EXPECT_LT(critical(sunk_prog), critical(plain));
  EXPECT_TRUE(sink_shortens(model, o));
  for (Method method : {Method::Euler, Method::RK4})
    for (ExecMode mode : {ExecMode::Teams, ExecMode::Phases})
      compare_per_step<TypeParam>(model, sunk, method, mode, 3, 0.01, 9.99);
}

// Teams with a halo run several sweeps between exchanges, each recomputing its neighbours' cells
// next to its own: the states must be bitwise those of teams without a halo, over runs that
// end inside a block and resume, for Euler and RK4 (whose blocks are whole steps). wb_net's
// all-to-all synapses close every halo at three rings: each team then evaluates the whole
// network and never exchanges (on a GPU that does not fit: it takes one ring).
TYPED_TEST(OdeEngine, TeamsWithAHaloMatchTeamsWithoutBitwise) {
  struct Case {
    const char* file;
    int halo;
    Method method;
    std::int64_t block_steps;      // expected steps per block (0: the whole launch, -1: no halo)
    std::int64_t gpu_block_steps;  // where a GPU's shared memory takes a narrower halo
  };
  for (const auto& [file, halo, method, block_steps, gpu_block_steps] :
       {Case{"inputs/ode/lr_line.model.yaml", 1, Method::Euler, 2, 2},
        Case{"inputs/ode/lr_line.model.yaml", 6, Method::Euler, 7, 7},
        Case{"inputs/ode/lr_line.model.yaml", 1, Method::RK4, -1, -1},
        Case{"inputs/ode/lr_line.model.yaml", 8, Method::RK4, 2, 2},
        Case{"inputs/ode/wb_net.model.yaml", 1, Method::Euler, 2, 2},
        Case{"inputs/ode/wb_net.model.yaml", 5, Method::Euler, 0, 2}}) {
    SCOPED_TRACE(testing::Message()
                 << file << " halo " << halo << " rk4 " << (method == Method::RK4));
    const FlatModel model = load_model_file(test::source_path(file));
    CompilerOptions o = all_passes();
    o.partitions = 0;
    o.halo = 0;
    const Program plain = compile(model, o);
    o.halo = halo;
    const Program with_halo = compile(model, o);
    ASSERT_FALSE(with_halo.halo_programs.empty());
    Engine<TypeParam> a(TypeParam(), plain, 1, method, ExecMode::Teams);
    EngineOptions host_halo;
    host_halo.teams_host_halo = true;
    Engine<TypeParam> b(TypeParam(), with_halo, 1, method, ExecMode::Teams, host_halo);
    EngineOptions direct = host_halo;
    direct.teams_direct_first = true;
    Engine<TypeParam> c(TypeParam(), with_halo, 1, method, ExecMode::Teams, direct);
    EXPECT_TRUE(c.teams_direct());
    EXPECT_EQ(a.teams_block_steps(), -1);
    if (Engine<TypeParam>::on_gpu &&
        int(with_halo.n_bins) > core::ExecTraits<TypeParam>::multiprocessors(TypeParam()))
      continue;
    EXPECT_EQ(b.teams_block_steps(), Engine<TypeParam>::on_gpu ? gpu_block_steps : block_steps);
    const double dt = 0.01;
    for (Engine<TypeParam>* e : {&a, &b, &c}) {
      e->set_states(model.state_init);
      // Over the stimulus, in two launches of 17 and 12 steps.
      e->advance(995, 17, dt);
      e->advance(1012, 12, dt);
    }
    const auto xa = a.states_host(), xb = b.states_host(), xc = c.states_host();
    ASSERT_EQ(xa.size(), xb.size());
    ASSERT_EQ(xa.size(), xc.size());
    int bad = 0;
    for (std::size_t i = 0; i < xa.size() && bad < 5; ++i)
      if (std::memcmp(&xa[i], &xb[i], sizeof(double)) != 0 ||
          std::memcmp(&xa[i], &xc[i], sizeof(double)) != 0) {
        ++bad;
        ADD_FAILURE() << "state " << i << ": " << xa[i] << " with a halo " << xb[i]
                      << ", table-free " << xc[i];
      }
    // And both still follow the reference interpreter.
    ReferenceInterpreter ref(plain, 1, method);
    ref.x() = model.state_init;
    ref.advance(995, 29, dt);
    EXPECT_LE(rel_diff(xa, ref.x()), 1e-9);
  }
}

// A forced oscillator x'' = -x + t, x(0) = 1, x'(0) = 0, with a known solution.
const char* oscillator = R"yaml(modules:
  osc:
    states:
      x: {init: 1.0, ddt: "y"}
      y: {init: 0.0, ddt: "-x + t"}
)yaml";  // exact: x = cos t + t - sin t, y = -sin t + 1 - cos t

TYPED_TEST(OdeEngine, IntegratorsConvergeAtTheirOrder) {
  const FlatModel model = load_model_string(oscillator, "osc.yaml");
  const Program prog = compile(model);
  const double T = 2.0;
  const double exact = std::cos(T) + T - std::sin(T);
  for (Method method : {Method::Euler, Method::RK4}) {
    std::vector<double> err;
    for (int n : {20, 40, 80, 160}) {
      Engine<TypeParam> dev(TypeParam(), prog, 1, method, ExecMode::Phases);
      dev.set_states(model.state_init);
      dev.advance(0, n, T / n);
      err.push_back(std::fabs(dev.states_host()[0] - exact));
    }
    const double expected = method == Method::RK4 ? 4.0 : 1.0;
    for (std::size_t k = 1; k < err.size(); ++k) {
      const double order = std::log2(err[k - 1] / err[k]);
      EXPECT_NEAR(order, expected, 0.15) << "refinement " << k;
    }
  }
}

TYPED_TEST(OdeEngine, AdaptiveDormandPrinceMeetsItsTolerance) {
  const FlatModel model = load_model_string(oscillator, "osc.yaml");
  const Program prog = compile(model);
  const double T = 4.0, exact = std::cos(T) + T - std::sin(T);
  double previous_error = 1.0;
  std::int64_t previous_steps = 0;
  for (double tol : {1e-4, 1e-7}) {
    Engine<TypeParam> dev(TypeParam(), prog, 1, Method::RK45, ExecMode::Phases);
    ReferenceInterpreter ref(prog, 1, Method::RK45);
    dev.set_states(model.state_init);
    ref.x() = model.state_init;
    double h_dev = 0.1, h_ref = 0.1;
    AdaptiveStats s_dev, s_ref;
    // Two output intervals: the controller carries h across them.
    dev.advance_adaptive(0.0, T / 2, h_dev, tol, tol, s_dev);
    dev.advance_adaptive(T / 2, T, h_dev, tol, tol, s_dev);
    ref.advance_adaptive(0.0, T / 2, h_ref, tol, tol, s_ref);
    ref.advance_adaptive(T / 2, T, h_ref, tol, tol, s_ref);
    const double err = std::fabs(dev.states_host()[0] - exact);
    EXPECT_LT(err, 100 * tol * T) << tol;
    EXPECT_LT(err, previous_error) << tol;
    EXPECT_GT(s_dev.accepted, previous_steps) << tol;
    EXPECT_EQ(s_dev.accepted, s_ref.accepted);
    EXPECT_LE(rel_diff(dev.states_host(), ref.x()), 1e-9);
    previous_error = err;
    previous_steps = s_dev.accepted;
  }
}

}  // namespace
}  // namespace hayate::ode
