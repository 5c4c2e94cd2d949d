// The device interpreter against the serial reference interpreter and the AST evaluator, step by
// step, for every execution space, both execution modes and both integrators; ensembles; RK4 order.
#include "cli_runner.hpp"
#include "ode/engine.hpp"
#include "ode/reference.hpp"
#include "random_model.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

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
    return layout_teams(p, int(p.n_bins), true).critical_words();
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

// The teams interpreter decodes team words (team_word) by bit tests, and for the binary family
// (pairs, an operand on either side, a stack argument) selects its arguments and the result of
// +, * and - instead of branching. Every operation of exact IEEE semantics, on signed zeros,
// infinities, NaN and subnormals, as a stack operation, with its operand on either side and as a
// pair, must give bitwise what run_stream gives; the stored value is read back by the next word,
// and deeper stacks mix the paths.
struct StreamAssign {
  double* f;
  int i;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t, double value) const { f[i] = value; }
};

template <class Space, class T>
Kokkos::View<T*, typename Space::memory_space> to_device(const std::vector<T>& host) {
  Kokkos::View<T*, typename Space::memory_space> v("copy", host.size());
  Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                           host.data(), host.size()));
  return v;
}

template <class View>
std::vector<double> to_host(const View& v) {
  std::vector<double> out(v.extent(0));
  Kokkos::deep_copy(
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), out.size()), v);
  return out;
}

// Case i runs code[begin(i), begin(i) + length(i)) on u[9i, 9i + 9), its derivative into f(i).
// (A free function: nvcc rejects device lambdas inside gtest's private TestBody.)
// The unified table: lane 0 reads u[0] (a) through row 0 and u[1] (b) through row 1 (and the folds
// rows 2-4, the affine words rows 5-84, a fold rows 85-88, comparing selects rows 89-142, below).
template <class Space, bool Direct, class Ints, class Code, class Reals>
void run_team_streams(const Code& code, const Ints& begin, const Ints& length, const Ints& itab,
                      const Reals& u, const Reals& f) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(begin.extent(0))), KOKKOS_LAMBDA(const int i) {
        run_local_stream<Space, Direct>(code.data() + begin(i), length(i), itab.data(), 0,
                                        u.data() + 9 * i, StreamAssign{f.data(), i});
      });
  Kokkos::fence();
}

// Case i of the general interpreter: run_stream over u[9i, 9i + 9) read as variables.
template <class Space, class Ints, class Code, class Reals>
void run_general_streams(const Code& code, const Ints& begin, const Ints& length, const Reals& u,
                         const Reals& f) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(begin.extent(0))), KOKKOS_LAMBDA(const int i) {
        const StateRef s{nullptr, u.data() + 9 * i, 0.0, 1};
        run_stream(code.data() + begin(i), length(i), nullptr, nullptr, 0, nullptr, s, 0,
                   StreamAssign{f.data(), i});
      });
  Kokkos::fence();
}

TYPED_TEST(OdeEngine, TeamStreamsMatchTheGeneralInterpreterBitwise) {
  using MemSpace = typename TypeParam::memory_space;
  const double values[] = {0.0,       -0.0,         1.5,      -2.25,   3.0,    INFINITY,
                           -INFINITY, std::nan(""), 4.9e-324, -1e-310, 1.7e308};
  std::vector<std::uint32_t> code, team_code;  // run_stream's words, run_local_stream's
  std::vector<int> begin, length, team_begin, team_length;
  // Per case: a, b, the stored slot (NaN until stored), -0.0 for folds, and an affine word's
  // constants.
  std::vector<double> u;
  // `team`: the team words of the case when they are not those of `words` (pairs).
  const auto add_case = [&](std::vector<std::uint32_t> words, double a, double b,
                            std::vector<std::uint32_t> team = {},
                            std::array<double, kTeamAffineConstants> constants = {}) {
    begin.push_back(int(code.size()));
    length.push_back(int(words.size()));
    code.insert(code.end(), words.begin(), words.end());
    if (team.empty()) team = words;
    for (std::uint32_t& w : team) w = team_word(w);  // idempotent
    team_begin.push_back(int(team_code.size()));
    team_length.push_back(int(team.size()));
    team_code.insert(team_code.end(), team.begin(), team.end());
    u.insert(u.end(), {a, b, std::nan(""), -0.0});
    u.insert(u.end(), constants.begin(), constants.end());
  };
  // Store the top in slot 2, read it back, and hand it to the derivative store.
  const std::vector<std::uint32_t> tail = {encode(ASSIGN_ALG, 2), encode(PUSH_VAR, 2),
                                           encode(ASSIGN_DERIV, 0)};
  const auto with_tail = [&](std::vector<std::uint32_t> w) {
    w.insert(w.end(), tail.begin(), tail.end());
    return w;
  };
  const std::uint32_t a = encode(PUSH_VAR, 0), b = encode(PUSH_VAR, 1);
  for (Op op : {ADD, SUB, MUL, DIV, MIN, MAX, LT, LE, GT, GE, EQ, NE, AND, OR})
    for (double x : values)
      for (double y : values) {
        add_case(with_tail({a, b, encode(op, 0)}), x, y);
        add_case(with_tail({a, encode_operand(op, PUSH_VAR, false, 1)}), x, y);
        add_case(with_tail({b, encode_operand(op, PUSH_VAR, true, 0)}), x, y);
        // A pair op(a, b) on a non-empty stack, then an operation on both.
        const std::uint32_t pair = encode_operand(
            Op(kPairFirst + (std::uint32_t(op) - std::uint32_t(ADD))), VAR_IND, false, 0);
        add_case(with_tail({b, a, encode_operand(op, PUSH_VAR, false, 1), encode(MIN, 0),
                            encode(NEG, 0)}),
                 x, y, with_tail({b, pair, encode(MIN, 0), encode(NEG, 0)}));
        // A pair of +, -, * or / taking in the stack operation after it (kTeamPairTakes): b op2
        // op(a, b), rows 143 + 3 (4 (p - 1) + c - 1): a, b, then b with op2 (c) in the top bits
        // (1 ... 4 for +, -, *, /).
        const auto combine_op = [](std::uint32_t c) {
          return c == AFFINE_ADD ? ADD : c == AFFINE_SUB ? SUB : c == AFFINE_MUL ? MUL : DIV;
        };
        for (std::uint32_t p = 1; p <= 4; ++p)
          for (std::uint32_t c = 1; c <= 4; ++c) {
            if (combine_op(p) != op) continue;
            const std::uint32_t takes =
                encode_operand(Op(kPairFirst + (std::uint32_t(op) - std::uint32_t(ADD))), VAR_IND,
                               true, 143 + 3 * (4 * (p - 1) + c - 1));
            add_case(
                with_tail({b, a, encode_operand(op, PUSH_VAR, false, 1), encode(combine_op(c), 0)}),
                x, y, with_tail({b, takes}));
          }
      }
  for (Op op : {NEG, ABS, SQRT, FLOOR, NOT})
    for (double x : values) add_case(with_tail({a, encode(op, 0)}), x, 0.0);
  for (double x : values)
    for (double y : values) {
      // a - b * sqrt(a / b), a + b * (a - b) - a, select(a, b, a), a + b + a.
      add_case(
          with_tail({a, b, a, b, encode(DIV, 0), encode(SQRT, 0), encode(MUL, 0), encode(SUB, 0)}),
          x, y);
      add_case(with_tail({a, b, a, encode_operand(SUB, PUSH_VAR, false, 1), encode(MUL, 0),
                          encode(ADD, 0), encode_operand(SUB, PUSH_VAR, false, 0)}),
               x, y);
      add_case(with_tail({a, b, a, encode(SELECT, 0)}), x, y);
      // select(a, b, a) and select(b, b, a) with a leaf arm as the operand, then one under b.
      add_case(with_tail({a, b, encode_operand(SELECT, PUSH_VAR, false, 0)}), x, y);
      add_case(with_tail({b, a, encode_operand(SELECT, PUSH_VAR, true, 1)}), x, y);
      add_case(with_tail({b, a, b, encode_operand(SELECT, PUSH_VAR, false, 0), encode(SUB, 0)}), x,
               y);
      // exp(b * a) and exp(a * b) with a factor as the operand, then one under a.
      add_case(with_tail({a, encode_operand(EXP, PUSH_VAR, true, 1)}), x, y);
      add_case(with_tail({a, b, encode_operand(EXP, PUSH_VAR, false, 0), encode(ADD, 0)}), x, y);
      // Affine words p + q f(((a + c) + d) k) (or / k), c, d, k, q, p in slots 4-8, for each
      // function and both scales, alone and pushed over a value: rows 5 + 2j (a) and 6 + 2j (the
      // constants and flags of combination j). y takes the place of the shift, of the second
      // shift, then of the scale, among constants of rate functions and identities.
      const std::array<double, kTeamAffineConstants> blocks[] = {
          {-0.0, -0.0, 1.0, 1.0, -0.0},      {40.14, -0.0, -0.1378, 1.0, 1.0},
          {77.0, -0.0, 0.04, 0.11348, -0.0}, {y, -0.0, -2.5, -13.0287, 7.7},
          {-10.66, -0.0, y, 0.13, -1.0},     {87.8929, 5.476, 0.08032, 0.49124, -0.0},
          {-87.8929, y, 0.2385, 1.0, 1.0}};
      // The words of function j (j / 2) with its scale (divide for odd j), after a leaf.
      const auto affine_source = [&](int j) {
        const Op fn = j / 2 == 0 ? EXP : j / 2 == 1 ? EXPREL : j / 2 == 2 ? EXPRELR : LOG;
        return std::vector<std::uint32_t>{
            encode_operand(ADD, PUSH_VAR, false, 4),
            encode_operand(ADD, PUSH_VAR, false, 5),
            encode_operand(j % 2 != 0 ? DIV : MUL, PUSH_VAR, false, 6),
            encode(fn, 0),
            encode_operand(MUL, PUSH_VAR, true, 7),
            encode_operand(ADD, PUSH_VAR, true, 8)};
      };
      const auto combine_op = [](int c) {
        return c == 0 ? ADD : c == 1 ? SUB : c == 2 ? MUL : DIV;
      };
      for (int j = 0; j < 8; ++j) {
        const std::uint32_t affine = with_team_kind(encode_operand(EXP, VAR_IND, false, 0),
                                                    kTeamKindAffine, std::uint32_t(5 + 2 * j));
        const std::vector<std::uint32_t> words = affine_source(j);
        for (const auto& block : blocks) {
          std::vector<std::uint32_t> alone = {a}, over = {b, a};
          alone.insert(alone.end(), words.begin(), words.end());
          over.insert(over.end(), words.begin(), words.end());
          over.push_back(encode(SUB, 0));
          add_case(with_tail(alone), x, y, with_tail({affine}), block);
          add_case(with_tail(over), x, y, with_tail({b, affine, encode(SUB, 0)}), block);
          // The word taking in the operation after it: b op value (rows 21 + 2 (4 c + j) and
          // the next, c = 0 ... 3 for +, -, *, /).
          for (int c = 0; c < 4; ++c) {
            const Op bop = combine_op(c);
            std::vector<std::uint32_t> combined = {b, a};
            combined.insert(combined.end(), words.begin(), words.end());
            combined.push_back(encode(bop, 0));
            add_case(with_tail(combined), x, y,
                     with_tail(
                         {b, with_team_kind(encode_operand(EXP, VAR_IND, false, 0), kTeamKindAffine,
                                            std::uint32_t(21 + 2 * (8 * c + j)))}),
                     block);
          }
        }
      }
      // Two affine words as one (kTeamAffinePair), rows R and R + 1 the first's, R + 2 and
      // R + 3 the second's: R = 5 + 2 j pushes functions j and j + 1 (then their difference),
      // R = 19 pushes function 7 and adds function 0, R = 21 + 2 m does combinations m and m + 1
      // of the words above.
      for (const auto& block : {blocks[1], blocks[3], blocks[6]}) {
        const auto pair = [](std::uint32_t row) {
          return with_team_kind(encode_operand(EXP, VAR_IND, false, 0) | kTeamAffinePair,
                                kTeamKindAffine, row);
        };
        for (int j = 0; j + 1 < 8; ++j) {
          std::vector<std::uint32_t> both = {b, a};
          for (std::uint32_t w : affine_source(j)) both.push_back(w);
          both.push_back(a);
          for (std::uint32_t w : affine_source(j + 1)) both.push_back(w);
          both.push_back(encode(SUB, 0));
          add_case(with_tail(both), x, y,
                   with_tail({b, pair(std::uint32_t(5 + 2 * j)), encode(SUB, 0)}), block);
        }
        std::vector<std::uint32_t> across = {b, a};
        for (std::uint32_t w : affine_source(7)) across.push_back(w);
        across.push_back(a);
        for (std::uint32_t w : affine_source(0)) across.push_back(w);
        across.push_back(encode(ADD, 0));
        add_case(with_tail(across), x, y, with_tail({b, pair(19)}), block);
        for (int m = 0; m + 1 < 32; ++m) {
          std::vector<std::uint32_t> both = {b};
          for (int k = m; k <= m + 1; ++k) {
            both.push_back(a);
            for (std::uint32_t w : affine_source(k % 8)) both.push_back(w);
            both.push_back(encode(combine_op(k / 8), 0));
          }
          add_case(with_tail(both), x, y, with_tail({b, pair(std::uint32_t(21 + 2 * m))}), block);
        }
      }
      add_case(with_tail({a, b, a, encode(ADDN, 3), a, encode(MULN, 2), encode(NEG, 0)}), x, y);
      // A stream's last store is done after the loop: a negated one (the layout's fused NEG),
      // of either kind, and an algebraic one last.
      add_case({a, b, encode(SUB, 0), encode(NEG, 0), encode(ASSIGN_ALG, 2), encode(PUSH_VAR, 2),
                encode(NEG, 0), encode(ASSIGN_DERIV, 0)},
               x, y,
               {a, b, encode(SUB, 0), encode(ASSIGN_ALG, 2) | kTeamNegate, encode(PUSH_VAR, 2),
                encode(ASSIGN_DERIV, 0) | kTeamNegate});
      add_case({a, encode_operand(MUL, PUSH_VAR, false, 1), encode(ASSIGN_ALG, 2)}, x, y);
      add_case({b, encode_operand(DIV, PUSH_VAR, true, 0), encode(NEG, 0), encode(ASSIGN_ALG, 2)},
               x, y,
               {b, encode_operand(DIV, PUSH_VAR, true, 0), encode(ASSIGN_ALG, 2) | kTeamNegate});
      // Folds over rows 0-3 (+a, +b, -b, +a) and 1-4 (+b, -b, +a, the -0.0 of slot 3): onto
      // the top, with the first row added or subtracted, and pushed over a value.
      const auto add_op = [](std::uint32_t slot, bool subtract) {
        return encode_operand(subtract ? SUB : ADD, PUSH_VAR, false, slot);
      };
      for (bool subtract : {false, true}) {
        const auto fold = [&](std::uint32_t row) {
          return with_team_kind(encode(ADDN, 0) | (subtract ? kTeamNegate : 0u),
                                std::uint32_t(VAR_IND) + 1, row);
        };
        add_case(with_tail(
                     {b, add_op(0, subtract), add_op(1, false), add_op(1, true), add_op(0, false)}),
                 x, y, with_tail({b, fold(0)}));
        add_case(with_tail({a, add_op(1, subtract), add_op(1, true), add_op(0, false)}), x, y,
                 with_tail({a, fold(1)}));
      }
      const auto push_fold = [](std::uint32_t row) {
        return with_team_kind(encode(ADDN, 0), kTeamKindFoldPush, row);
      };
      add_case(
          with_tail({b, a, add_op(1, false), add_op(1, true), add_op(0, false), encode(SUB, 0)}), x,
          y, with_tail({b, push_fold(0), encode(SUB, 0)}));
      add_case(with_tail({a, b, add_op(1, true), add_op(0, false), encode(SUB, 0)}), x, y,
               with_tail({a, push_fold(1), encode(SUB, 0)}));
      // Selects that compare a and b themselves (rows 89 + 9 c + 3 v: the arm or a spare, a with
      // the comparison, b with the arm flag), with both arms on the stack (v = 0) or a leaf arm,
      // a the true one (v = 1) or b the false one (v = 2).
      for (int c = 0; c < 6; ++c) {
        const Op cmp = Op(std::uint32_t(LT) + std::uint32_t(c));
        const auto compare = [&](int v) {
          return with_team_kind(encode(SELECT, 0) | (v == 1 ? kTeamNegate : 0u), kTeamKindCompare,
                                std::uint32_t(89 + 9 * c + 3 * v));
        };
        add_case(with_tail({a, b, encode(cmp, 0), b, a, encode(SELECT, 0)}), x, y,
                 with_tail({b, a, compare(0)}));
        add_case(with_tail({a, b, encode(cmp, 0), b, encode_operand(SELECT, PUSH_VAR, true, 0)}), x,
                 y, with_tail({b, compare(1)}));
        add_case(with_tail({a, b, encode(cmp, 0), a, encode_operand(SELECT, PUSH_VAR, false, 1)}),
                 x, y, with_tail({a, compare(2)}));
      }
      // A pushed fold that adds the value below (rows 85-88: a, b with kTeamFoldAdd, -b, a).
      add_case(
          with_tail({b, a, add_op(1, false), add_op(1, true), add_op(0, false), encode(ADD, 0)}), x,
          y, with_tail({b, push_fold(85)}));
    }
  const int n = int(begin.size());

  // Expected: run_stream in the same space (its exp, log and expm1 may differ from the host's in
  // the last place), whose leaves read the same values as variables.
  std::vector<double> u_expected, f_expected;
  {
    auto d_u = to_device<TypeParam>(u);
    Kokkos::View<double*, MemSpace> d_f("f", std::size_t(n));
    Kokkos::deep_copy(d_f, std::nan(""));
    run_general_streams<TypeParam>(to_device<TypeParam>(code), to_device<TypeParam>(begin),
                                   to_device<TypeParam>(length), d_u, d_f);
    u_expected = to_host(d_u);
    f_expected = to_host(d_f);
  }

  // The table-free words of a direct layout (TeamsLayout::direct): every U access as a
  // lane-offset word (lane 0 reads the index itself) and the table pairs as direct pairs.
  std::vector<std::uint32_t> direct_code = team_code;
  for (std::uint32_t& w : direct_code) {
    if (op_of(w) >= kPairFirst && (w & kTeamPairTakes) != 0)
      continue;  // pairs that take in an operation keep their table rows
    else if (op_of(w) >= kPairFirst)
      w = with_team_kind(w, std::uint32_t(PUSH_VAR) + 1, team_pair_operands(0, true, 1, true));
    else if (((op_of(w) == EXP || op_of(w) == SELECT) && (w & kTeamKindMask) == kTeamKindAffine
                                                                                    << kOpBits) ||
             op_of(w) == ADDN)
      continue;  // affine words, comparing selects and folds keep their table rows
    else if ((w & kTeamReads) != 0)
      w = with_team_kind(w, kTeamKindLane, arg_of(w));
  }
  // Lane 0's rows: a, b, -b, a, the -0.0, as the folds above read them; then a and the
  // constants with each function and scale, as the affine words read them.
  std::vector<int> itab(191 * kWarp, 0);
  for (std::uint32_t p = 1; p <= 4; ++p)
    for (std::uint32_t c = 1; c <= 4; ++c) {
      const std::size_t base = std::size_t(143 + 3 * (4 * (p - 1) + c - 1)) * kWarp;
      itab[base + kWarp] = 1;
      itab[base + 2 * kWarp] = 1 | std::int32_t(c << kTeamPairTakeShift);
    }
  for (int c = 0; c < 6; ++c)
    for (int v = 0; v < 3; ++v) {
      const std::size_t base = std::size_t(89 + 9 * c + 3 * v) * kWarp;
      itab[base] = v == 2 ? 1 : 0;
      itab[base + kWarp] = std::int32_t(std::uint32_t(c) << kTeamCompareShift);
      itab[base + 2 * kWarp] = 1 | (v > 0 ? kTeamCompareArm : 0);
    }
  itab[86 * kWarp] = 1 | kTeamFoldAdd;
  itab[87 * kWarp] = 1 | kTeamRowNegate;
  itab[kWarp] = 1;
  itab[2 * kWarp] = 1 | kTeamRowNegate;
  itab[4 * kWarp] = 3;
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 5; ++c)
      itab[std::size_t(c == 0 ? 6 + 2 * j : 22 + 2 * (8 * (c - 1) + j)) * kWarp] =
          4 | (j / 2) << kTeamAffineFnShift | (j % 2 != 0 ? kTeamAffineDivide : 0) |
          std::int32_t(std::uint32_t(c) << kTeamAffineCombineShift);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant == 0   ? "table decode"
                 : variant == 1 ? "direct decode, table words"
                                : "direct decode, direct words");
    auto d_u = to_device<TypeParam>(u);
    Kokkos::View<double*, MemSpace> d_f("f", std::size_t(n));
    Kokkos::deep_copy(d_f, std::nan(""));
    const auto d_code = to_device<TypeParam>(variant == 2 ? direct_code : team_code);
    if (variant == 0)
      run_team_streams<TypeParam, false>(d_code, to_device<TypeParam>(team_begin),
                                         to_device<TypeParam>(team_length),
                                         to_device<TypeParam>(itab), d_u, d_f);
    else
      run_team_streams<TypeParam, true>(d_code, to_device<TypeParam>(team_begin),
                                        to_device<TypeParam>(team_length),
                                        to_device<TypeParam>(itab), d_u, d_f);
    const std::vector<double> got_u = to_host(d_u), got_f = to_host(d_f);
    const auto same = [](double p, double q) {
      return (std::isnan(p) && std::isnan(q)) || std::memcmp(&p, &q, sizeof(double)) == 0;
    };
    int bad = 0;
    for (int i = 0; i < n && bad < 10; ++i) {
      const std::size_t k = std::size_t(i);
      if (same(got_u[9 * k + 2], u_expected[9 * k + 2]) && same(got_f[k], f_expected[k])) continue;
      ++bad;
      ADD_FAILURE() << "case " << i << " a " << u[9 * k] << " b " << u[9 * k + 1] << ": stored "
                    << got_u[9 * k + 2] << " expected " << u_expected[9 * k + 2] << ", derivative "
                    << got_f[k] << " expected " << f_expected[k] << "\n"
                    << disassemble(code, std::size_t(begin[k]), std::size_t(length[k]));
    }
  }
  // The cases cover both paths of the interpreter.
  EXPECT_GT(n, 2000);
}

// How many times the program's streams read each variable (a lane's read counts once).
std::vector<int> variable_reads(const Program& p) {
  std::vector<int> reads(p.n_vars, 0);
  for (std::size_t g = 0; g < p.n_groups(); ++g) {
    const int count = p.group(g, G_COUNT);
    for (int l = 0; l < count; ++l) {
      const bool unified = p.group(g, G_KIND) == GROUP_UNIFIED;
      const std::size_t begin = unified ? std::size_t(p.group(g, G_CODE))
                                        : std::size_t(p.lane_code[g * kWarp + std::size_t(l)]);
      const int len = unified ? p.group(g, G_LEN) : p.lane_len[g * kWarp + std::size_t(l)];
      for (int k = 0; k < len; ++k) {
        const std::uint32_t w = p.code[begin + std::size_t(k)];
        const Op leaf = word_has_operand(w) ? operand_leaf(w) : op_of(w);
        if (leaf == PUSH_VAR)
          ++reads[arg_of(w)];
        else if (leaf == VAR_IND)
          ++reads[std::size_t(
              p.itab[(std::size_t(p.group(g, G_ITAB)) + arg_of(w)) * kWarp + std::size_t(l)])];
      }
    }
  }
  return reads;
}

// The team programs of teams mode, on the host for any number of teams: every leaf reads the
// team's value array U, each state is owned (published) by exactly one team, U holds no value
// twice, and the derivatives and variables they compute equal the reference interpreter's
// bitwise (the operations are the same; only where the operands come from changed), in the
// halo too. Phases run team by team, as the bins of a phase never read each other.
TEST(OdeTeamsLayout, TeamProgramsEvaluateLikeTheReference) {
  const FlatModel line = load_model_file(test::source_path("inputs/ode/lr_line.model.yaml"));
  test::RandomModel gen(5);
  const FlatModel random = load_model_string(gen.yaml(10, 3, 45), "random.yaml");
  struct Case {
    const FlatModel* model;
    bool unify;
    int partitions, teams;
    bool pair_leaves;
    int halo;
  };
  for (const bool direct : {false, true})
    for (const auto& [model, unify, partitions, teams, pair_leaves, halo] :
         {Case{&line, true, 0, 1, true, 0}, Case{&line, true, 0, 3, true, 0},
          Case{&line, true, 8, 8, true, 0}, Case{&line, true, 0, 3, false, 0},
          Case{&random, true, 3, 2, true, 0}, Case{&random, true, 3, 2, false, 0},
          Case{&random, false, 4, 3, true, 0}, Case{&line, true, 8, 8, true, 2},
          Case{&line, true, 25, 25, false, 5}, Case{&random, true, 3, 3, true, 1},
          Case{&random, false, 4, 4, true, 2}}) {
      SCOPED_TRACE(testing::Message()
                   << "unify " << unify << " bins " << partitions << " teams " << teams << " pairs "
                   << pair_leaves << " halo " << halo << " direct " << direct);
      CompilerOptions o = all_passes();
      o.unify = o.pad = unify;
      o.partitions = partitions;
      o.pair_leaves = pair_leaves;
      o.halo = halo;
      o.inline_single_use = !direct;  // both ways: variables read once kept on the stack or not
      int pairs = 0, direct_pairs = 0, lane_words = 0, table_words = 0, shared_rows = 0,
          negated_stores = 0, affine_words = 0, combined_affine = 0, folds = 0, adding_folds = 0,
          compare_selects = 0, lane_blocks = 0, affine_pairs = 0, taking_pairs = 0;
      const Program prog = compile(*model, o);
      ASSERT_EQ(prog.halo_programs.size(), std::size_t(halo));  // none of these closes
      const TeamsLayout layout = layout_teams(prog, teams, true, halo, direct);
      EXPECT_EQ(layout.direct, direct);
      std::size_t halo_stores = 0;
      ASSERT_EQ(layout.teams, teams);
      ASSERT_EQ(layout.int_begin.size(), std::size_t(teams) + 1);
      EXPECT_GT(layout.scratch_bytes(), 0u);

      // The reference: derivatives and algebraic variables at a state off the initial one.
      std::vector<double> x = model->state_init;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += 1e-3 * double(i % 7);
      // The line's stimulus is on at 10.2; at 11.2 it is off although t >= 10 (its select's
      // condition is the whole `t >= 10 && mod(t - 10, 1000) < 0.5`, not its first comparison).
      const double t = teams == 3 ? 11.2 : 10.2;
      ReferenceInterpreter ref(prog, 1, Method::Euler);
      ref.x() = x;
      ref.evaluate(t);

      std::vector<double> f(prog.n_states, std::nan("")), v(prog.n_vars, std::nan(""));
      std::vector<int> stored_states(prog.n_states, 0), stored_vars(prog.n_vars, 0);
      struct Team {
        std::vector<double> u;
        const std::int32_t *h, *state_src, *state_flag, *var_src, *phase_begin, *groups, *lanes,
            *itab;
        const std::uint32_t* code;
      };
      std::vector<Team> team(static_cast<std::size_t>(teams));
      for (int k = 0; k < teams; ++k) {
        Team& tm = team[std::size_t(k)];
        tm.h = layout.ints.data() + layout.int_begin[std::size_t(k)];
        const int ns = tm.h[T_STATES], nv = tm.h[T_VARS], nc = tm.h[T_CONSTS];
        tm.state_src = tm.h + kTeamFields;
        tm.state_flag = tm.state_src + ns;
        tm.var_src = tm.state_flag + ns;
        tm.phase_begin = tm.var_src + nv;
        tm.groups = tm.phase_begin + layout.n_phases + 1;
        tm.lanes = tm.groups + std::size_t(tm.h[T_GROUPS]) * kGroupFields;
        tm.itab = tm.lanes + tm.h[T_LANES];
        tm.code = reinterpret_cast<const std::uint32_t*>(tm.itab + tm.h[T_ITAB]);
        const std::int32_t* end = layout.ints.data() + layout.int_begin[std::size_t(k) + 1];
        ASSERT_EQ(reinterpret_cast<const std::int32_t*>(tm.code) + tm.h[T_CODE], end);
        // U: the states, then the variables (each once), the constants (each value once), time.
        EXPECT_EQ(std::set<std::int32_t>(tm.state_src, tm.state_src + ns).size(), std::size_t(ns));
        EXPECT_EQ(std::set<std::int32_t>(tm.var_src, tm.var_src + nv).size(), std::size_t(nv));
        const double* c = layout.reals.data() + layout.real_begin[std::size_t(k)];
        // (By their bits: a fold's padding -0.0 is a constant of its own.) The five constants
        // of an affine word are a block of their own, once per tuple.
        std::set<int> in_blocks;
        std::set<std::int32_t> blocks;
        for (int g = 0; g < tm.h[T_GROUPS]; ++g) {
          const std::int32_t* rec = tm.groups + std::size_t(g) * kGroupFields;
          if (rec[G_KIND] != GROUP_UNIFIED) continue;
          for (int w = 0; w < rec[G_LEN]; ++w) {
            const std::uint32_t word = tm.code[rec[G_CODE] + w];
            if (op_of(word) != EXP || (word & kTeamKindMask) != kTeamKindAffine << kOpBits)
              continue;
            // A lane's own block (several rates in one warp); a pair of words has two.
            for (std::uint32_t row = 1; row <= ((word & kTeamAffinePair) != 0 ? 3u : 1u); row += 2)
              for (int l = 0; l < kWarp; ++l) {
                const std::int32_t at =
                    tm.itab[(std::size_t(rec[G_ITAB]) + arg_of(word) + row) * kWarp +
                            std::size_t(l)] &
                    kTeamAffineIndexMask;
                blocks.insert(at);
                for (int r = 0; r < kTeamAffineConstants; ++r) in_blocks.insert(at - ns - nv + r);
              }
          }
        }
        std::set<std::uint64_t> const_bits;
        std::set<std::vector<std::uint64_t>> block_bits;
        for (int j = 0; j < nc; ++j) {
          std::uint64_t bits;
          std::memcpy(&bits, c + j, sizeof bits);
          if (!in_blocks.count(j)) const_bits.insert(bits);
          if (!blocks.count(ns + nv + j)) continue;
          std::vector<std::uint64_t> tuple(kTeamAffineConstants);
          std::memcpy(tuple.data(), c + j, sizeof(std::uint64_t) * kTeamAffineConstants);
          block_bits.insert(tuple);
        }
        EXPECT_EQ(const_bits.size() + in_blocks.size(), std::size_t(nc));
        EXPECT_EQ(block_bits.size(), blocks.size());
        tm.u.resize(std::size_t(ns + nv + nc + 1));
        for (int i = 0; i < ns; ++i) tm.u[std::size_t(i)] = x[std::size_t(tm.state_src[i])];
        for (int j = 0; j < nv; ++j) tm.u[std::size_t(ns + j)] = ref.v[std::size_t(tm.var_src[j])];
        for (int j = 0; j < nc; ++j) tm.u[std::size_t(ns + nv + j)] = c[j];
        tm.u[std::size_t(ns + nv + nc)] = t;
        // The code ends with a spare word, so the interpreter reads the next word untested.
        ASSERT_GE(tm.h[T_CODE], 1);
        EXPECT_EQ(tm.code[tm.h[T_CODE] - 1], 0u);
        // Every leaf is a U read (uniform or per lane), time included; a pair reads both its
        // arguments through the table, or carries both indices when neither row needs one.
        for (int w = 0; w + 1 < tm.h[T_CODE]; ++w) {
          const std::uint32_t word = tm.code[w];
          const Op op = op_of(word);
          const bool pair = std::uint32_t(op) >= kPairFirst;
          EXPECT_LE(std::uint32_t(op), kPairLast);
          const Op leaf = is_leaf(op)                                          ? op
                          : ((takes_operand(op) || pair) && has_operand(word)) ? operand_leaf(word)
                                                                               : PUSH_VAR;
          const std::uint32_t kind = (word & kTeamReads) >> kOpBits;
          // A fold: ADDN with a table kind (onto the top, or pushed).
          const bool fold = op == ADDN && kind != 0;
          EXPECT_TRUE(!fold || kind == std::uint32_t(VAR_IND) + 1 || kind == kTeamKindFoldPush);
          folds += fold;
          // A select that compares (kTeamKindCompare, the affine kind on a SELECT).
          const bool compare = kind == kTeamKindCompare && op == SELECT;
          compare_selects += compare;
          const bool affine = kind == kTeamKindAffine && !fold && !compare;
          EXPECT_TRUE(!affine || op == EXP) << op_name(op);
          affine_words += affine;
          // A lane-offset operand's kind field reads as CONST_IND + 1 (kTeamKindLane).
          EXPECT_TRUE(leaf == PUSH_VAR || leaf == VAR_IND ||
                      (kind == kTeamKindLane && leaf == CONST_IND) || affine || fold || compare)
              << op_name(leaf);
          if (pair) {
            ++pairs;
            EXPECT_TRUE(operand_leaf(word) == VAR_IND || operand_leaf(word) == PUSH_VAR);
            direct_pairs += operand_leaf(word) == PUSH_VAR;
          }
          lane_words += !pair && kind == kTeamKindLane;
          // A store of a negated value stands for a NEG and the store (LR-Line's dV/dt).
          if (op >= ASSIGN_ALG && op <= ASSIGN_DERIV_IND)
            negated_stores += (word & kTeamNegate) != 0;
          if (op == NEG) {
            const Op after = op_of(tm.code[w + 1]);
            EXPECT_FALSE(after >= ASSIGN_ALG && after <= ASSIGN_DERIV_IND)
                << "a NEG the layout left before a store";
          }
          table_words += (word & kTeamTable) == kTeamTable;
        }
        // Words of a group that read the same table rows read one copy of them.
        for (int g = 0; g < tm.h[T_GROUPS]; ++g) {
          const std::int32_t* rec = tm.groups + std::size_t(g) * kGroupFields;
          if (rec[G_KIND] != GROUP_UNIFIED) continue;
          std::map<std::vector<std::int32_t>, std::uint32_t> row_of;
          for (int k = 0; k < rec[G_LEN]; ++k) {
            const std::uint32_t word = tm.code[rec[G_CODE] + k];
            if ((word & kTeamTable) != kTeamTable) continue;
            const bool compare = op_of(word) == SELECT && (word & kTeamKindMask) == kTeamKindCompare
                                                                                        << kOpBits;
            const bool affine = op_of(word) == EXP && (word & kTeamKindMask) == kTeamKindAffine
                                                                                    << kOpBits;
            const bool pair = std::uint32_t(op_of(word)) >= kPairFirst;
            const bool takes = pair && (word & kTeamPairTakes) != 0;
            const std::size_t n_rows = op_of(word) == ADDN                       ? kTeamFoldRows
                                       : compare || takes                        ? 3
                                       : affine && (word & kTeamAffinePair) != 0 ? 4
                                       : pair || affine                          ? 2
                                                                                 : 1;
            affine_pairs += affine && (word & kTeamAffinePair) != 0;
            taking_pairs += takes;
            const std::int32_t* first = tm.itab + (std::size_t(rec[G_ITAB]) + arg_of(word)) * kWarp;
            // A pair that takes in an operation: its third row is its second's U indices with
            // +, -, * or / in the top bits, the same in every lane.
            for (int l = 0; takes && l < rec[G_COUNT]; ++l) {
              const std::int32_t e = first[2 * kWarp + std::size_t(l)];
              EXPECT_EQ(e & kTeamRowIndexMask, first[kWarp + std::size_t(l)] & kTeamRowIndexMask);
              const std::uint32_t how = std::uint32_t(e) >> kTeamPairTakeShift;
              EXPECT_TRUE(how >= AFFINE_ADD && how <= AFFINE_DIV) << how;
              EXPECT_EQ(how, std::uint32_t(first[2 * kWarp]) >> kTeamPairTakeShift);
            }
            const std::vector<std::int32_t> rows(first, first + n_rows * kWarp);
            const auto [at, added] = row_of.emplace(rows, arg_of(word));
            EXPECT_EQ(at->second, arg_of(word)) << "group " << g << " word " << k;
            shared_rows += !added;
            // An affine word's second row (and a pair's fourth): the same function and flags
            // in every lane, and a block of five constants (each lane's own where their rates
            // differ).
            for (std::size_t row = 1; affine && row < n_rows; row += 2)
              for (int l = 0; l < rec[G_COUNT]; ++l) {
                const std::int32_t e = first[row * kWarp + std::size_t(l)];
                EXPECT_EQ(e & ~kTeamAffineIndexMask, first[row * kWarp] & ~kTeamAffineIndexMask)
                    << "group " << g;
                lane_blocks += l > 0 && e != first[row * kWarp];
                const std::int32_t at = e & kTeamAffineIndexMask;
                const std::int32_t consts = tm.h[T_STATES] + tm.h[T_VARS];
                EXPECT_GE(at, consts);
                EXPECT_LE(at + kTeamAffineConstants, consts + tm.h[T_CONSTS]);
                if (l == 0)
                  combined_affine += (std::uint32_t(e) >> kTeamAffineCombineShift) != AFFINE_PUSH;
              }
            // A fold's later rows read U values, subtracted where flagged; a zero among the
            // constants they read is the -0.0 of the padding (x + -0.0 is x; x + 0.0 is not
            // for x = -0.0).
            // Only a pushed fold's second row may add the value below (kTeamFoldAdd).
            if (op_of(word) == ADDN) {
              const bool adds = (first[kWarp] & kTeamFoldAdd) != 0;
              adding_folds += adds;
              EXPECT_TRUE(!adds || (word & kTeamKindMask) == kTeamKindFoldPush << kOpBits);
              for (int l = 0; l < rec[G_COUNT]; ++l) {
                EXPECT_EQ(first[kWarp + std::size_t(l)] & kTeamFoldAdd, adds ? kTeamFoldAdd : 0);
                for (std::size_t r = 2; r < n_rows; ++r)
                  EXPECT_EQ(first[r * kWarp + std::size_t(l)] & kTeamFoldAdd, 0);
              }
            }
            if (op_of(word) == ADDN)
              for (std::size_t r = 1; r < n_rows; ++r)
                for (int l = 0; l < rec[G_COUNT]; ++l) {
                  const std::int32_t at = first[r * kWarp + std::size_t(l)] & kTeamRowIndexMask;
                  ASSERT_LT(std::size_t(at), tm.u.size());
                  const std::int32_t consts = tm.h[T_STATES] + tm.h[T_VARS];
                  if (at >= consts && at < consts + tm.h[T_CONSTS] && tm.u[std::size_t(at)] == 0.0)
                    EXPECT_TRUE(std::signbit(tm.u[std::size_t(at)])) << "group " << g;
                }
          }
        }
      }
      if (model == &line) EXPECT_GT(negated_stores, 0);
      // LR-Line's rate functions run as affine words.
      if (model == &line && unify && pair_leaves) EXPECT_GT(affine_words, 0);
      // Some warps hold several gates' rates of one shape, each lane with its own constants
      // (alpha_d, beta_f, beta_X).
      if (model == &line && unify && pair_leaves) EXPECT_GT(lane_blocks, 0);
      // Some of them take in the division or addition after them (beta_j, dV/dt).
      if (model == &line && unify && pair_leaves) EXPECT_GT(combined_affine, 0);
      // Its pairs of exponentials (beta_j's two arms, each `AF AF div`) run as pairs of words.
      if (model == &line && unify && pair_leaves) EXPECT_GT(affine_pairs, 0);
      // Its products and quotients of pairs (`Pmul g_K, X; mul` of I_K, `Pmul; div` of dV/dt)
      // take in the operation after them, in table layouts.
      if (model == &line && unify && pair_leaves && !direct) EXPECT_GT(taking_pairs, 0);
      if (direct) EXPECT_EQ(taking_pairs, 0);
      // Its sum of currents runs as folds.
      if (model == &line && unify && pair_leaves) EXPECT_GT(folds, 0);
      // Its rate functions' guards (V < -40) are compared by their selects.
      if (model == &line && unify && pair_leaves) EXPECT_GT(compare_selects, 0);
      // One of them adds I_K1, below it on the stack in dV/dt where it is not stored.
      if (model == &line && unify && pair_leaves && o.inline_single_use) EXPECT_GT(adding_folds, 0);
      // The cells of a line sit in U in lane order, so most of its per-lane rows need no table.
      if (!direct) {
        EXPECT_EQ(lane_words + direct_pairs, 0);
      } else if (model == &line && unify) {
        EXPECT_GT(lane_words, 0);
        if (pair_leaves) EXPECT_GT(direct_pairs, 0);
      }
      // Scheduled variables start as NaN in U, so a read before its store (or of another team's
      // variable) would show in the results.
      std::set<std::uint32_t> folded;
      for (const auto& [index, value] : prog.constant_vars) folded.insert(index);
      for (Team& tm : team)
        for (int j = 0; j < tm.h[T_VARS]; ++j) {
          const auto var = std::uint32_t(tm.var_src[j]);
          if (var < prog.n_alg && !folded.count(var))
            tm.u[std::size_t(tm.h[T_STATES] + j)] = std::nan("");
        }
      // A team whose states are updated in place (T_IN_PLACE) has each state overwritten by its
      // store, here with NaN, so a read that the layout let run after it would show in the
      // results. The groups and lanes of a phase run in either order on a GPU: the second pass
      // runs them backwards.
      int in_place_stores = 0;
      std::vector<std::vector<double>> u0;
      for (const Team& tm : team) u0.push_back(tm.u);
      for (const bool backwards : {false, true}) {
        SCOPED_TRACE(backwards ? "groups and lanes backwards" : "groups and lanes in order");
        for (std::size_t k = 0; k < team.size(); ++k) team[k].u = u0[k];
        std::fill(f.begin(), f.end(), std::nan(""));
        std::fill(v.begin(), v.end(), std::nan(""));
        std::fill(stored_states.begin(), stored_states.end(), 0);
        std::fill(stored_vars.begin(), stored_vars.end(), 0);
        halo_stores = 0;
        in_place_stores = 0;
        for (int ph = 0; ph < layout.n_phases; ++ph)
          for (Team& tm : team) {
            // Derivative stores name the U index of their state.
            const auto assign = [&](std::size_t k, double value) {
              const std::size_t i = std::size_t(tm.state_src[k]);
              ASSERT_NE(tm.state_flag[k], STATE_READ) << "state " << i;
              if (tm.h[T_IN_PLACE] != 0) {
                tm.u[k] = std::nan("");
                ++in_place_stores;
              }
              if (tm.state_flag[k] == STATE_HALO) {
                EXPECT_EQ(value, ref.f[i]) << "halo state " << i;
                ++halo_stores;
                return;
              }
              f[i] = value;
              ++stored_states[i];
            };
            const int first = tm.phase_begin[ph], n = (tm.phase_begin[ph + 1] - first) * kWarp;
            for (int j = 0; j < n; ++j) {
              const int at = backwards ? n - 1 - j : j;
              const int g = first + at / kWarp, l = at % kWarp;
              if (direct)
                run_local_group_lane<Kokkos::DefaultHostExecutionSpace, true>(
                    tm.code, tm.groups, tm.lanes, tm.itab, g, l, tm.u.data(), assign);
              else
                run_local_group_lane<Kokkos::DefaultHostExecutionSpace, false>(
                    tm.code, tm.groups, tm.lanes, tm.itab, g, l, tm.u.data(), assign);
            }
          }
        // Without a halo every variable is stored by one team; with one, the variables of a
        // team's halo are stored again there (with the same values).
        for (Team& tm : team)
          for (int j = 0; j < tm.h[T_VARS]; ++j) {
            const std::size_t var = std::size_t(tm.var_src[j]);
            if (var >= prog.n_alg) continue;
            const double value = tm.u[std::size_t(tm.h[T_STATES] + j)];
            if (std::isnan(value) || folded.count(std::uint32_t(var))) continue;
            if (stored_vars[var] > 0 && halo > 0) {
              EXPECT_EQ(value, v[var]) << "variable " << var;
              continue;
            }
            v[var] = value;
            ++stored_vars[var];
          }
        if (halo > 0)
          EXPECT_GT(halo_stores, 0u);
        else
          EXPECT_EQ(halo_stores, 0u);
        for (std::size_t i = 0; i < prog.n_states; ++i) {
          EXPECT_EQ(stored_states[i], 1) << "state " << i;
          EXPECT_EQ(f[i], ref.f[i]) << "state " << i;
        }
      }
      // LR-Line's states are all read in phases before their derivatives' (or by the storing
      // lane before its store), and its time only in the first phase: every team updates in
      // place and writes the next time at the start of phase 1.
      for (const Team& tm : team) {
        EXPECT_GE(tm.h[T_TIME_PHASE], 0);
        EXPECT_LE(tm.h[T_TIME_PHASE], layout.n_phases);
        if (model == &line && tm.h[T_STATES] > 0) {
          EXPECT_EQ(tm.h[T_IN_PLACE], 1);
          EXPECT_EQ(tm.h[T_TIME_PHASE], 1);
        }
      }
      if (model == &line) EXPECT_GT(in_place_stores, 0);
      // A variable that one stream stores and reads once stays on its stack (inline_single_use):
      // only variables the program reads once go unstored.
      const std::vector<int> reads = variable_reads(prog);
      int kept = 0;
      for (std::size_t j = 0; j < prog.n_alg; ++j) {
        if (folded.count(std::uint32_t(j))) continue;
        if (stored_vars[j] == 0 && reads[j] == 1) {
          ++kept;
          continue;
        }
        EXPECT_EQ(stored_vars[j], 1) << "variable " << j;
        EXPECT_EQ(v[j], ref.v[j]) << "variable " << j;
      }
      // LR-Line's merged streams store Xi for I_K and I_K1 for I_ion, which dV/dt reads.
      if (!o.inline_single_use)
        EXPECT_EQ(kept, 0);
      else if (model == &line)
        EXPECT_GE(kept, 3 * int(prog.n_states / 8));
      if (model == &line && unify && !direct) EXPECT_GT(shared_rows, 0);
      // Pairs only come from unified streams, and only when asked for.
      if (unify && pair_leaves)
        EXPECT_GT(pairs, 0);
      else
        EXPECT_EQ(pairs, 0);
    }
}

// Teams layouts place each phase's groups on a GPU multiprocessor's four warp schedulers (warp w
// on scheduler w % 4): the same groups per phase as in bin order, and no scheduler's estimate
// (its longest stream plus a quarter of the words of the others) above the bin order's worst. For
// LR-Line the longest stream of a phase then shares its scheduler with fewer words than in bin
// order.
TEST(OdeTeamsLayout, PhasesArePlacedOnTheWarpSchedulers) {
  struct Case {
    const char* file;
    int halo;
  };
  for (const auto& [file, halo] :
       {Case{"inputs/ode/lr_line.model.yaml", 8}, Case{"inputs/ode/lr_line.model.yaml", 0},
        Case{"inputs/ode/rybak_cpg.model.yaml", 4}}) {
    SCOPED_TRACE(testing::Message() << file << " halo " << halo);
    const FlatModel model = load_model_file(test::source_path(file));
    CompilerOptions o = all_passes();
    o.partitions = 0;
    o.halo = halo;
    const Program placed_prog = compile(model, o);
    o.place = false;
    const Program plain_prog = compile(model, o);
    const int h = std::min(halo, int(placed_prog.halo_programs.size()));
    const int teams = int(placed_prog.n_bins);
    const TeamsLayout placed = layout_teams(placed_prog, teams, true, h);
    const TeamsLayout plain = layout_teams(plain_prog, teams, true, h);
    // Per phase of team t: the group lengths in order.
    const auto phases = [](const TeamsLayout& l, int t) {
      const std::int32_t* hd = l.ints.data() + l.int_begin[std::size_t(t)];
      const std::int32_t* phase_begin = hd + kTeamFields + 2 * hd[T_STATES] + hd[T_VARS];
      const std::int32_t* recs = phase_begin + l.n_phases + 1;
      std::vector<std::vector<int>> out;
      for (int ph = 0; ph < l.n_phases; ++ph) {
        out.emplace_back();
        for (int g = phase_begin[ph]; g < phase_begin[ph + 1]; ++g)
          out.back().push_back(recs[std::size_t(g) * kGroupFields + G_LEN]);
      }
      return out;
    };
    // The worst scheduler's estimate, and the words sharing the longest stream's scheduler.
    const auto estimate = [](const std::vector<int>& len, double* beside_longest) {
      double longest[4] = {}, total[4] = {};
      std::size_t at = 0;
      for (std::size_t p = 0; p < len.size(); ++p) {
        longest[p % 4] = std::max(longest[p % 4], double(len[p]));
        total[p % 4] += len[p];
        if (len[p] > len[at]) at = p;
      }
      *beside_longest = total[at % 4] - len[at];
      double worst = 0.0;
      for (int k = 0; k < 4; ++k)
        worst = std::max(worst, longest[k] + 0.25 * (total[k] - longest[k]));
      return worst;
    };
    int fewer = 0;
    for (int t = 0; t < teams; ++t) {
      const auto a = phases(placed, t), b = phases(plain, t);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t ph = 0; ph < a.size(); ++ph) {
        auto sa = a[ph], sb = b[ph];
        std::sort(sa.begin(), sa.end());
        std::sort(sb.begin(), sb.end());
        EXPECT_EQ(sa, sb) << "team " << t << " phase " << ph;
        if (a[ph].size() > 24) continue;
        double beside_a = 0, beside_b = 0;
        EXPECT_LE(estimate(a[ph], &beside_a), estimate(b[ph], &beside_b))
            << "team " << t << " phase " << ph;
        fewer += beside_a < beside_b;
      }
    }
    // With the default halo LR-Line's longest streams share a scheduler in bin order (without
    // one, its phase-0 streams are so even that bin order already spreads them).
    if (std::string(file).find("lr_line") != std::string::npos && halo > 0) EXPECT_GT(fewer, 0);
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
