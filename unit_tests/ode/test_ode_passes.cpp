// Every compiler pass preserves results: random models compiled with each combination of passes,
// run by the serial bytecode interpreter, agree with the AST evaluator; the stack bound holds.
#include "cli_runner.hpp"
#include "ode/compiler.hpp"
#include "ode/engine.hpp"
#include "ode/reference.hpp"
#include "random_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace hayate::ode {
namespace {

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max({std::fabs(a[i]), std::fabs(b[i]), 1e-300});
    worst = std::max(worst, std::fabs(a[i] - b[i]) / scale);
    if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
  }
  return worst;
}

// Simulates the stack through every stream a lane can run.
int max_depth(const Program& p) {
  int worst = 0;
  const auto walk = [&](std::size_t begin, std::size_t len) {
    int d = 0;
    for (std::size_t i = begin; i < begin + len; ++i) {
      d -= word_pops(p.code[i]);
      EXPECT_GE(d, 0);
      d += word_pushes(p.code[i]);
      worst = std::max(worst, d);
    }
    EXPECT_EQ(d, 0);
  };
  for (std::size_t g = 0; g < p.n_groups(); ++g) {
    if (p.group(g, G_KIND) == GROUP_UNIFIED)
      walk(p.group(g, G_CODE), p.group(g, G_LEN));
    else
      for (int l = 0; l < p.group(g, G_COUNT); ++l)
        walk(p.lane_code[g * kWarp + l], p.lane_len[g * kWarp + l]);
  }
  return worst;
}

TEST(OdePasses, EveryCombinationPreservesResults) {
  bool cut_any = false;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    test::RandomModel gen(seed);
    const std::string text = gen.yaml(12, 4, 40);
    // Sums kept whole, and every sum of three or more terms cut into parts (the random
    // expressions have sums of three, nested anywhere).
    ModelOptions whole, split;
    whole.split_sums = 0;
    split.split_sums = 2;
    const FlatModel whole_model = load_model_string(text, "random.yaml", whole);
    const FlatModel split_model = load_model_string(text, "random.yaml", split);
    cut_any |= split_model.n_alg > whole_model.n_alg;
    for (Method method : {Method::Euler, Method::RK4}) {
      // Cutting a sum changes only the order of its additions.
      AstIntegrator whole_ast(whole_model, method), split_ast(split_model, method);
      whole_ast.x() = split_ast.x() = whole_model.state_init;
      whole_ast.advance(0, 3, 0.01);
      split_ast.advance(0, 3, 0.01);
      EXPECT_LE(rel_diff(whole_ast.x(), split_ast.x()), 1e-9) << "seed " << seed;
    }
    for (const FlatModel* m : {&whole_model, &split_model})
      for (Method method : {Method::Euler, Method::RK4}) {
        const FlatModel& model = *m;
        AstIntegrator ast(model, method);
        ast.x() = model.state_init;
        ast.advance(0, 3, 0.01);
        for (int bits = 0; bits < 32; ++bits) {
          CompilerOptions o = test::passes_from_bits(bits);
          o.merge_max_length = 40;
          const Program prog = compile(model, o);
          EXPECT_LE(prog.max_stack, kMaxStack);
          EXPECT_EQ(max_depth(prog), prog.max_stack) << "seed " << seed << " passes " << bits;
          ReferenceInterpreter ref(prog, 1, method);
          ref.x() = model.state_init;
          ref.advance(0, 3, 0.01);
          EXPECT_LE(rel_diff(ref.x(), ast.x()), 1e-12) << "seed " << seed << " passes " << bits;
          ref.evaluate(0.03);
          ast.evaluate(0.03);
          EXPECT_LE(rel_diff(ref.v, ast.v), 1e-12) << "seed " << seed << " passes " << bits;
          if (o.unify && o.pad) EXPECT_EQ(prog.unified_groups(), prog.n_groups());
          if (o.merge) EXPECT_LE(prog.n_phases(), prog.n_levels);
        }
      }
  }
  EXPECT_TRUE(cut_any);
}

// The longest stream any lane runs in any phase, in words.
int longest_stream(const Program& p) {
  int worst = 0;
  for (std::size_t g = 0; g < p.n_groups(); ++g) {
    if (p.group(g, G_KIND) == GROUP_UNIFIED)
      worst = std::max(worst, p.group(g, G_LEN));
    else
      for (int l = 0; l < p.group(g, G_COUNT); ++l)
        worst = std::max(worst, p.lane_len[g * kWarp + l]);
  }
  return worst;
}

// Two network inputs summed over 39 synapses each, read through one algebraic variable each by
// one derivative (as Rybak CPG's G_E and G_I through I_SynE and I_SynI); the synaptic weight is
// a swept parameter, so its index has to move past the new variables.
std::string two_input_network() {
  return R"yaml(modules:
  n:
    inputs: [S, Q]
    parameters: {w: 0.5}
    algebraics:
      I: "w*S*(1 - s)"
      J: "Q*(s - 2)"
    states:
      s: {init: 1.0, ddt: "I + J - s"}
network:
  - {name: a, module: n, count: 40, init: {s: {uniform: [0.2, 0.9], seed: 3}}}
connections:
  - {from: a, topology: all_to_all, input: S, term: "pre.s*(pre.s + 1)/n_pre"}
  - {from: a, topology: all_to_all, input: Q, term: "0.1*pre.s/n_pre"}
)yaml";
}

TEST(OdePasses, LongSumsAreCutIntoParallelParts) {
  const std::string text = two_input_network();
  ModelOptions whole, split;
  whole.split_sums = 0;
  split.split_sums = 8;
  // Bare reads do not count towards L: eleven of them stay one sum even at L = 2, three
  // products of them do not.
  ModelOptions two;
  two.split_sums = 2;
  const std::string reads = "modules:\n  c:\n    states:\n      x: {init: 1, ddt: \"" +
                            std::string("x + x + x + x + x + x + x + x + x + x + t") + "\"}\n";
  EXPECT_EQ(load_model_string(reads, "m.yaml", two).n_alg, 0u);
  const std::string products =
      "modules:\n  c:\n    states:\n      x: {init: 1, ddt: \"2*x + 3*x + 4*x\"}\n";
  EXPECT_EQ(load_model_string(products, "m.yaml", two).n_alg, 2u);
  whole.swept = split.swept = {"a.w"};
  const FlatModel wm = load_model_string(text, "m.yaml", whole);
  const FlatModel sm = load_model_string(text, "m.yaml", split);
  // 39 terms in parts of at most 8: five parts of 7-8 terms per input and cell.
  ASSERT_EQ(wm.n_alg, 160u);
  ASSERT_EQ(sm.n_alg, 160u + 40u * 2u * 5u);
  EXPECT_EQ(sm.var_names[160], "a[0].S.part0");
  bool is_state = true;
  std::uint32_t k = 0;
  EXPECT_TRUE(sm.find("a[39].Q.part4", is_state, k));
  ASSERT_TRUE(sm.find("a.w", is_state, k));
  EXPECT_EQ(k, sm.n_alg);
  EXPECT_EQ(sm.n_vars(), sm.n_alg + 1);
  for (Method method : {Method::Euler, Method::RK4}) {
    AstIntegrator wa(wm, method), sa(sm, method);
    wa.x() = sa.x() = wm.state_init;
    wa.advance(0, 20, 0.05);
    sa.advance(0, 20, 0.05);
    EXPECT_LE(rel_diff(wa.x(), sa.x()), 1e-13);
    EXPECT_GT(rel_diff(wa.x(), wm.state_init), 1e-3);  // it moved
    // The bytecode of the cut model, every pass on, against its AST.
    CompilerOptions o;
    o.merge = o.reorder = o.pad = o.unify = true;
    const Program wp = compile(wm, o), sp = compile(sm, o);
    ReferenceInterpreter ref(sp, 1, method);
    ref.x() = sm.state_init;
    ref.v[sm.n_alg] = sm.param_values[0];  // the swept weight
    ref.advance(0, 20, 0.05);
    EXPECT_LE(rel_diff(ref.x(), sa.x()), 1e-12);
    // The input keeps its value (the same additions in the same order as its readers').
    ref.evaluate(1.0);
    sa.evaluate(1.0);
    EXPECT_LE(rel_diff(ref.v, sa.v), 1e-12);
    ASSERT_TRUE(sm.find("a[7].S", is_state, k));
    double parts = 0;
    for (int p = 0; p < 5; ++p) {
      std::uint32_t q = 0;
      ASSERT_TRUE(sm.find("a[7].S.part" + std::to_string(p), is_state, q));
      parts += sa.v[q];
    }
    EXPECT_EQ(sa.v[k], parts);
    // The readers of S and Q read their parts, and ds/dt reads I and J in place: no level and no
    // phase is added (without the second step ds/dt would wait for I and J in a third phase), and
    // the longest stream (one cell's 39 terms) becomes a part's 8 plus the sums of the parts.
    EXPECT_LE(sp.n_levels, wp.n_levels);
    EXPECT_LE(sp.n_phases(), wp.n_phases());
    EXPECT_EQ(wp.n_phases(), 2u);
    EXPECT_LT(2 * longest_stream(sp), longest_stream(wp))
        << longest_stream(sp) << " against " << longest_stream(wp);
  }
}

// A module with a = 2 - x, b = k / sin(x), c = a + b + x, then `more` algebraic lines and the
// states (YAML lines under `states:`).
std::string abc_model(const std::string& more, const std::string& states) {
  return "modules:\n"
         "  m:\n"
         "    parameters: {k: 3.0}\n"
         "    algebraics:\n"
         "      a: \"2 - x\"\n"
         "      b: \"k / sin(x)\"\n"
         "      c: \"a + b + x\"\n" +
         more + "    states:\n" + states;
}

// compiler.split_sums: auto loads the model with whole sums and with every limit below its
// longest sum, and keeps the limit whose teams layout has the fewest critical words (ties to the
// larger limit; whole sums unless a cut does better). A model without long sums gets no trial.
TEST(OdePasses, AutoSplitTakesTheShortestTeamsLayout) {
  const std::string text = two_input_network();
  CompilerOptions o;
  o.merge = o.reorder = o.pad = o.unify = true;
  o.partitions = 0;
  o.inline_single_use = false;  // every store stays, for the count from the program below
  std::vector<int> loaded;
  const auto load = [&](int limit) {
    loaded.push_back(limit);
    ModelOptions mo;
    mo.split_sums = limit;
    return load_model_string(text, "m.yaml", mo);
  };
  EXPECT_EQ(longest_sum(load(0)), 39u);
  loaded.clear();
  const SplitChoice choice = choose_split_sums(load, o);
  ASSERT_GE(choice.trials.size(), 3u);
  EXPECT_EQ(choice.trials.front().first, 0);
  EXPECT_EQ(choice.trials[1].first, 2);
  EXPECT_EQ(choice.trials.back().first, 32);  // the widest limit below 39 terms
  ASSERT_EQ(loaded.size(), choice.trials.size());
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const auto [limit, words] = choice.trials[i];
    EXPECT_EQ(loaded[i], limit);
    // The words are the layout's, counted again here from the program: without pair words a team
    // word is a program word, and each team runs one bin.
    ModelOptions mo;
    mo.split_sums = limit;
    const Program prog = compile(load_model_string(text, "m.yaml", mo), o);
    EXPECT_EQ(layout_teams(prog, int(prog.n_bins)).critical_words(), words);
    int most = 0;
    for (std::size_t b = 0; b < prog.n_bins; ++b) {
      int sum = 0;
      for (std::size_t ph = 0; ph < prog.n_phases(); ++ph) {
        int longest = 0;
        for (int g = prog.bin_begin[ph * prog.n_bins + b];
             g < prog.bin_begin[ph * prog.n_bins + b + 1]; ++g)
          longest = std::max(longest, prog.group(std::size_t(g), G_KIND) == GROUP_UNIFIED
                                          ? prog.group(std::size_t(g), G_LEN)
                                          : prog.lane_len[std::size_t(g) * kWarp]);
        sum += longest;
      }
      most = std::max(most, sum);
    }
    LayoutOptions unpaired;
    unpaired.pairs = false;
    EXPECT_EQ(layout_teams(prog, int(prog.n_bins), unpaired).critical_words(), most) << limit;
    // The choice: no trial shorter, none as short with a larger limit, whole sums longer.
    EXPECT_GE(words, choice.critical) << limit;
    if (limit > choice.limit) EXPECT_GT(words, choice.critical) << limit;
  }
  EXPECT_GE(choice.limit, 2);
  EXPECT_LT(2 * choice.critical, choice.trials.front().second);  // 39 terms in one lane before
  // Nothing to cut: no trial, whole sums.
  int loads = 0;
  const SplitChoice none = choose_split_sums(
      [&](int limit) {
        ++loads;
        ModelOptions mo;
        mo.split_sums = limit;
        return load_model_string(abc_model("", "      x: {init: 1, ddt: \"c - x\"}\n"), "abc.yaml",
                                 mo);
      },
      o);
  EXPECT_EQ(none.limit, 0);
  EXPECT_TRUE(none.trials.empty());
  EXPECT_EQ(loads, 1);
}

// A binary operation takes a leaf argument from its operand instead of the stack, on either
// side, and a sum whose later terms are leaves runs as a chain of such operations.
TEST(OdePasses, LeafArgumentsFoldIntoOperations) {
  const std::string text = abc_model("", "      x: {init: 0.5, ddt: \"c * t\"}\n");
  const FlatModel model = load_model_string(text, "fold.yaml");
  CompilerOptions no_inline;
  no_inline.inline_single_use = false;  // keep a, b and c as stores (see the test below)
  const Program p = compile(model, no_inline);
  const std::string code = disassemble(p.serial, 0, p.serial.size());
  // Three words for a, four for b and c, three for x' (18 without operands: 4 + 5 + 5 + 4).
  EXPECT_EQ(p.serial.size(), 14u) << code;
  EXPECT_NE(code.find("sub push_state 0"), std::string::npos) << code;
  EXPECT_NE(code.find("div left push_const"), std::string::npos) << code;
  EXPECT_NE(code.find("add push_var"), std::string::npos) << code;
  EXPECT_NE(code.find("add push_state 0"), std::string::npos) << code;
  EXPECT_NE(code.find("mul push_time"), std::string::npos) << code;
  EXPECT_EQ(code.find("addn"), std::string::npos) << code;
  EXPECT_EQ(p.max_stack, 1);
  // The values: one Euler step of the reference interpreter against the formulas.
  ReferenceInterpreter ref(p, 1, Method::Euler);
  ref.x() = model.state_init;
  ref.advance(1, 1, 0.25);
  const double x = 0.5, a = 2 - x, b = 3.0 / std::sin(x), c = a + b + x;
  EXPECT_DOUBLE_EQ(ref.x()[0], x + 0.25 * (c * 0.25));
}

// The states after one Euler step of dt from the initial state, by the reference interpreter,
// for the model compiled without passes and with every pass (unified streams read a leaf
// operand through the table when lanes differ).
std::vector<std::vector<double>> one_euler_step_both_ways(const FlatModel& model, double dt) {
  CompilerOptions all;
  all.merge = all.reorder = all.pad = all.unify = true;
  std::vector<std::vector<double>> out;
  for (const Program& p : {compile(model), compile(model, all)}) {
    ReferenceInterpreter ref(p, 1, Method::Euler);
    ref.x() = model.state_init;
    ref.advance(1, 1, dt);
    out.push_back(ref.x());
  }
  return out;
}

// A select takes a leaf arm from its operand (the 0 of if(V < -40, rate, 0)), the false arm or
// the true one; a select of two computed arms keeps all three on the stack.
TEST(OdePasses, SelectTakesALeafArmFromItsOperand) {
  const std::string text =
      "modules:\n  m:\n    states:\n"
      "      x: {init: 0.5, ddt: \"if(x < 1, 2 * x, 0)\"}\n"
      "      y: {init: 0.25, ddt: \"if(x > 1, 3, exp(y))\"}\n"
      "      z: {init: 2, ddt: \"if(z > 1, z * z, exp(-z))\"}\n";
  const FlatModel model = load_model_string(text, "select.yaml");
  const Program p = compile(model);
  const std::string code = disassemble(p.serial, 0, p.serial.size());
  EXPECT_NE(code.find("select push_const"), std::string::npos) << code;
  EXPECT_NE(code.find("select left push_const"), std::string::npos) << code;
  EXPECT_NE(code.find("select\n"), std::string::npos) << code;
  EXPECT_EQ(std::count_if(p.serial.begin(), p.serial.end(),
                          [](std::uint32_t w) { return op_of(w) == SELECT; }),
            3);
  // x': x, lt, x, mul, select, store; y': x, gt, y, exp, select, store; z': z, gt, z, mul z, z,
  // neg, exp, select, store.
  EXPECT_EQ(p.serial.size(), 21u) << code;
  EXPECT_EQ(p.max_stack, 3);
  // One Euler step against the formulas.
  for (const auto& x : one_euler_step_both_ways(model, 0.25)) {
    EXPECT_DOUBLE_EQ(x[0], 0.5 + 0.25 * (2 * 0.5));
    EXPECT_DOUBLE_EQ(x[1], 0.25 + 0.25 * std::exp(0.25));
    EXPECT_DOUBLE_EQ(x[2], 2 + 0.25 * 4);
  }
}

// exp of a product with a leaf factor, on either side, multiplies by its operand first: the
// exp(0.04 * (V + 77)) of rate functions is one word less, with the same two operations.
TEST(OdePasses, ExpTakesALeafFactorFromItsOperand) {
  const std::string text =
      "modules:\n  m:\n    parameters: {k: 0.5}\n    states:\n"
      "      x: {init: 0.1, ddt: \"exp(0.04 * (x + 77)) - exp(x * k)\"}\n"
      "      y: {init: 0.2, ddt: \"exp(x * y)\"}\n";
  const FlatModel model = load_model_string(text, "exp.yaml");
  const Program p = compile(model);
  const std::string code = disassemble(p.serial, 0, p.serial.size());
  EXPECT_NE(code.find("exp left push_const"), std::string::npos) << code;
  EXPECT_NE(code.find("exp push_const"), std::string::npos) << code;
  // x': x, add, exp (by 0.04), x, exp (by k, a folded constant), sub, store; y': x, exp (by y),
  // store.
  EXPECT_EQ(p.serial.size(), 10u) << code;
  for (const auto& v : one_euler_step_both_ways(model, 0.25)) {
    const double x = 0.1, y = 0.2;
    EXPECT_DOUBLE_EQ(v[0], x + 0.25 * (std::exp(0.04 * (x + 77)) - std::exp(x * 0.5)));
    EXPECT_DOUBLE_EQ(v[1], y + 0.25 * std::exp(x * y));
  }
}

// The fused stream evaluates a variable read once where it is read: a and b inside c, c inside
// x', so the stream has one store and no variable slots; a variable read twice keeps its slot.
// The values are those of the per-phase program (the same operations in the same order; 1e-13
// leaves room for a compiler that contracts a*b + c differently in the two interpreters).
TEST(OdePasses, SingleUseVariablesAreInlinedInTheFusedStream) {
  const std::string text = abc_model("      d: \"exp(-x)\"\n",
                                     "      x: {init: 0.5, ddt: \"c * t - d\"}\n"
                                     "      y: {init: 0.1, ddt: \"d * y\"}\n");
  const FlatModel model = load_model_string(text, "inline.yaml");
  CompilerOptions off;
  off.inline_single_use = false;
  const Program p0 = compile(model, off), p1 = compile(model);
  const auto stores = [](const Program& p) {
    std::size_t n = 0;
    for (std::uint32_t w : p.serial) n += op_of(w) == ASSIGN_ALG;
    return n;
  };
  EXPECT_EQ(stores(p0), 4u);
  EXPECT_EQ(p0.serial_vars.size(), 4u);
  EXPECT_EQ(stores(p1), 1u) << disassemble(p1.serial, 0, p1.serial.size());
  ASSERT_EQ(p1.serial_vars.size(), 1u);
  EXPECT_EQ(model.var_names[std::size_t(p1.serial_vars[0])], "m.d");
  EXPECT_LT(p1.serial.size(), p0.serial.size());
  // Both streams on the host backend's fused kernel against the reference interpreter.
  for (const Program* p : {&p0, &p1}) {
    Engine<Kokkos::DefaultHostExecutionSpace> fused(Kokkos::DefaultHostExecutionSpace(), *p, 1,
                                                    Method::RK4, ExecMode::Fused);
    ReferenceInterpreter ref(*p, 1, Method::RK4);
    fused.set_states(model.state_init);
    ref.x() = model.state_init;
    fused.advance(0, 20, 0.05);
    ref.advance(0, 20, 0.05);
    const auto got = fused.states_host();
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], ref.x()[i], 1e-13 * std::fabs(ref.x()[i])) << i;
  }
}

TEST(OdePasses, PassesChangeTheSchedule) {
  test::RandomModel gen(3);
  const FlatModel model = load_model_string(gen.yaml(12, 4, 64), "random.yaml");
  CompilerOptions base;
  base.fold = true;
  const Program p0 = compile(model, base);
  EXPECT_EQ(p0.n_phases(), p0.n_levels);
  EXPECT_EQ(p0.unified_groups(), 0u);
  CompilerOptions all = base;
  all.merge = all.reorder = all.pad = all.unify = true;
  const Program p1 = compile(model, all);
  EXPECT_LT(p1.n_tasks, p0.n_tasks);  // merging moved expressions into earlier lanes
  EXPECT_EQ(p1.unified_groups(), p1.n_groups());
  EXPECT_FALSE(p1.itab.empty() && p1.ctab.empty());  // lanes differ in operands
}

// The leaf or store of a word (its operand's leaf for an operation with an operand).
Op access_of(std::uint32_t w) {
  return word_has_operand(w) ? operand_leaf(w) : op_of(w);
}

// Calls fn(op, operand) for the leaf or store of every word lane `lane` of group g runs, per-lane
// operands resolved (a binary operation with an operand reports its operand's leaf).
template <class Fn>
void for_each_word(const Program& p, std::size_t g, int lane, Fn fn) {
  const bool unified = p.group(g, G_KIND) == GROUP_UNIFIED;
  const std::size_t begin = unified ? p.group(g, G_CODE) : p.lane_code[g * kWarp + lane];
  const std::size_t len = unified ? p.group(g, G_LEN) : p.lane_len[g * kWarp + lane];
  for (std::size_t i = begin; i < begin + len; ++i) {
    const Op op = access_of(p.code[i]);
    const std::uint32_t a = arg_of(p.code[i]);
    const auto ind = [&] { return std::uint32_t(p.itab[(p.group(g, G_ITAB) + a) * kWarp + lane]); };
    switch (op) {
      case VAR_IND:
        fn(PUSH_VAR, ind());
        break;
      case ASSIGN_ALG_IND:
        fn(ASSIGN_ALG, ind());
        break;
      default:
        fn(op, a);
    }
  }
}

// Bins of a network never read each other's algebraic variables within a sweep, and the serial
// stream writes every variable before reading it.
TEST(OdePasses, BinsAreIndependentAndTheSerialStreamIsOrdered) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/lr_ring.model.yaml"));
  for (int parts : {0, 1, 5}) {
    CompilerOptions o;
    o.merge = o.reorder = o.pad = o.unify = true;
    o.partitions = parts;
    const Program p = compile(model, o);
    EXPECT_EQ(p.n_bins, parts == 0 ? 20u : std::size_t(parts));  // 80 cells: 4 per bin
    ASSERT_EQ(p.bin_begin.size(), p.n_phases() * p.n_bins + 1);
    std::vector<int> writer(p.n_alg, -1);
    std::vector<std::size_t> groups_in(p.n_bins, 0);
    for (std::size_t ph = 0; ph < p.n_phases(); ++ph) {
      EXPECT_EQ(p.bin_begin[ph * p.n_bins], p.phase_begin[ph]);
      for (std::size_t b = 0; b < p.n_bins; ++b)
        for (int g = p.bin_begin[ph * p.n_bins + b]; g < p.bin_begin[ph * p.n_bins + b + 1]; ++g) {
          ++groups_in[b];
          for (int l = 0; l < p.group(g, G_COUNT); ++l)
            for_each_word(p, g, l, [&](Op op, std::uint32_t a) {
              if (op == ASSIGN_ALG) writer[a] = int(b);
            });
        }
    }
    for (std::size_t ph = 0; ph < p.n_phases(); ++ph)
      for (std::size_t b = 0; b < p.n_bins; ++b)
        for (int g = p.bin_begin[ph * p.n_bins + b]; g < p.bin_begin[ph * p.n_bins + b + 1]; ++g)
          for (int l = 0; l < p.group(g, G_COUNT); ++l)
            for_each_word(p, g, l, [&](Op op, std::uint32_t a) {
              if (op == PUSH_VAR && a < p.n_alg && writer[a] >= 0)
                EXPECT_EQ(writer[a], int(b)) << "variable " << a << " phase " << ph;
            });
    for (std::size_t b = 0; b < p.n_bins; ++b) EXPECT_GT(groups_in[b], 0u) << "bin " << b;
    // Serial stream (with and without inlining): dependency order and a balanced stack; its
    // variable operands are slots of serial_vars.
    for (bool inl : {false, true}) {
      o.inline_single_use = inl;
      const Program q = compile(model, o);
      std::vector<bool> written(q.n_alg, false);
      for (const auto& cv : q.constant_vars) written[cv.first] = true;
      int depth = 0;
      std::size_t stores = 0, derivatives = 0;
      for (std::uint32_t w : q.serial) {
        const Op op = access_of(w);
        ASSERT_NE(op, VAR_IND);
        if (op == PUSH_VAR || op == ASSIGN_ALG) ASSERT_LT(arg_of(w), q.serial_vars.size());
        const auto var = [&] { return std::size_t(q.serial_vars[arg_of(w)]); };
        if (op == PUSH_VAR && var() < q.n_alg) EXPECT_TRUE(written[var()]) << var();
        if (op == ASSIGN_ALG) written[var()] = true;
        stores += word_pushes(w) == 0;
        derivatives += op == ASSIGN_DERIV;
        depth += word_pushes(w) - word_pops(w);
        ASSERT_GE(depth, 0);
      }
      EXPECT_EQ(depth, 0);
      EXPECT_EQ(derivatives, q.n_states);
      if (inl)
        EXPECT_LT(stores, q.n_equations);  // the gap currents are read once
      else
        EXPECT_EQ(stores, q.n_equations);
    }
  }
}

}  // namespace
}  // namespace hayate::ode
