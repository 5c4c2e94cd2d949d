// Model language: parsing, composition, and the errors bad models produce.
#include "config/error.hpp"
#include "ode/compiler.hpp"
#include "ode/model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>

namespace hayate::ode {
namespace {

// Loads and compiles; returns the error text ("" when the model is fine).
std::string model_error(const std::string& text) {
  try {
    const FlatModel m = load_model_string(text, "m.yaml");
    compile(m);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

double eval_text(const std::string& text) {
  ExprSource src{"e", 1, 1, text, ""};
  const NodePtr n = parse_expression(src);
  return evaluate(*n, nullptr, nullptr, 0.0);
}

TEST(OdeLanguage, PrecedenceAndFunctions) {
  EXPECT_DOUBLE_EQ(eval_text("1 + 2*3"), 7.0);
  EXPECT_DOUBLE_EQ(eval_text("-2^2"), -4.0);
  EXPECT_DOUBLE_EQ(eval_text("2^3^2"), 512.0);
  EXPECT_DOUBLE_EQ(eval_text("10 - 4 - 3"), 3.0);
  EXPECT_DOUBLE_EQ(eval_text("8/4/2"), 1.0);
  EXPECT_DOUBLE_EQ(eval_text("(1 + 2)*(3 - 1)"), 6.0);
  EXPECT_DOUBLE_EQ(eval_text("if(1 < 2 && !(3 == 4), 5, 6)"), 5.0);
  EXPECT_DOUBLE_EQ(eval_text("if(or(0, 0) || not(1), 5, 6)"), 6.0);
  EXPECT_DOUBLE_EQ(eval_text("min(3, 1, 2) + max(4, 9, 2)"), 10.0);
  EXPECT_DOUBLE_EQ(eval_text("mod(-1, 3)"), 2.0);
  EXPECT_DOUBLE_EQ(eval_text("log10(1000)"), 3.0);
  EXPECT_DOUBLE_EQ(eval_text("abs(-2) + floor(2.7) + sqrt(16)"), 8.0);
  EXPECT_NEAR(eval_text("exp(log(3)) + tanh(0) + sin(0) + cos(0) + tan(0)"), 4.0, 1e-15);
  EXPECT_DOUBLE_EQ(eval_text("pow(2, 10) + 1.5e1 + .5"), 1039.5);
  // The removable singularities of rate functions: (e^x - 1)/x and its reciprocal, 1 at 0 and
  // accurate near it (exp(x) - 1 there would keep only the digits of x above 1e-16).
  EXPECT_DOUBLE_EQ(eval_text("exprel(0) + exprelr(0)"), 2.0);
  EXPECT_NEAR(eval_text("exprel(1e-10)"), 1.0 + 0.5e-10, 1e-16);
  EXPECT_NEAR(eval_text("exprelr(-1e-10)"), 1.0 + 0.5e-10, 1e-16);
  EXPECT_NEAR(eval_text("exprel(2)"), (std::exp(2.0) - 1.0) / 2.0, 1e-15);
  EXPECT_NEAR(eval_text("exprelr(-3) * exprel(-3)"), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(
      eval_text("1 >= 1") + eval_text("1 > 1") + eval_text("1 <= 0") + eval_text("1 != 2"), 2.0);
}

TEST(OdeLanguage, FoldingKeepsTheOrderOfEvaluation) {
  ExprSource src{"e", 1, 1, "(2*3)*x + 1 + 2", ""};
  NodePtr n = parse_expression(src);
  // Resolve x to state 0 by hand.
  n->args[0]->args[1]->symbol = false;
  n->args[0]->args[1]->op = PUSH_STATE;
  const double x[1] = {0.1};
  const double before = evaluate(*n, x, nullptr, 0.0);
  NodePtr f = fold(std::move(n));
  EXPECT_EQ(evaluate(*f, x, nullptr, 0.0), before);
  // 2*3 folded; the trailing constants of the sum are not (that would change its rounding).
  EXPECT_EQ(to_string(*f), "6*x[0] + 1 + 2");
  ExprSource cube{"e", 1, 1, "y^3", ""};
  NodePtr c = parse_expression(cube);
  c->args[0]->symbol = false;
  c->args[0]->op = PUSH_STATE;
  c = fold(std::move(c));
  EXPECT_EQ(c->op, POWI);
}

// x * 1, x / 1 and x - (+0) fold to x: bit for bit the same value (signed zeros, infinities and
// NaN included), one instruction fewer; x - (-0) and x + 0 are not identities for x = -0 / +0
// and stay.
TEST(OdeLanguage, FoldingDropsExactIdentities) {
  const auto folded = [](const std::string& text) {
    ExprSource src{"e", 1, 1, text, ""};
    NodePtr n = parse_expression(src);
    // Resolve every symbol (x, y) to states 0 and 1 by hand.
    std::function<void(Node&)> resolve = [&](Node& m) {
      if (m.symbol) {
        m.symbol = false;
        m.op = PUSH_STATE;
        m.index = m.name == "x" ? 0 : 1;
      }
      for (auto& a : m.args) resolve(*a);
    };
    resolve(*n);
    const double values[] = {0.0, -0.0, 2.5, -INFINITY, std::nan("")};
    for (double x : values)
      for (double y : {3.0, -0.0}) {
        const double s[2] = {x, y};
        const double before = evaluate(*n, s, nullptr, 0.0);
        NodePtr f = fold(n->clone());
        const double after = evaluate(*f, s, nullptr, 0.0);
        EXPECT_TRUE((std::isnan(before) && std::isnan(after)) ||
                    std::memcmp(&before, &after, sizeof(double)) == 0)
            << text << " at x = " << x;
      }
    return to_string(*fold(std::move(n)));
  };
  EXPECT_EQ(folded("-(x + y)/1"), "-(x[0] + x[1])");
  EXPECT_EQ(folded("1*x*1*y*1"), "x[0]*x[1]");
  EXPECT_EQ(folded("x*1"), "x[0]");
  EXPECT_EQ(folded("x - 0"), "x[0]");
  EXPECT_EQ(folded("x - -0"), "x[0] - -0");
  EXPECT_EQ(folded("x + 0"), "x[0] + 0");
  EXPECT_EQ(folded("x/2"), "x[0]/2");
}

const char* good_model = R"yaml(modules:
  cell:
    parameters: {g: 2.0, E: "g*10", I: 0.0}
    inputs: [I_gap]
    algebraics:
      I_ion: "g*(V - E)"
    states:
      V: {init: -1.0, ddt: "-I_ion + I + I_gap"}
network:
  - {name: c, module: cell, count: 5, parameters: {I: "0.5*i"}, init: {V: [1, 2, 3, 4, 5]}}
connections:
  - {from: c, topology: ring, input: I_gap, term: "k*(pre.V - post.V)/n_pre", parameters: {k: 0.25}}
)yaml";

TEST(OdeLanguage, CompositionAndConnections) {
  const FlatModel m = load_model_string(good_model, "m.yaml");
  ASSERT_EQ(m.n_states(), 5u);
  EXPECT_EQ(m.state_names[3], "c[3].V");
  EXPECT_EQ(m.state_init[3], 4.0);
  ASSERT_EQ(m.n_alg, 10u);  // I_gap and I_ion per cell
  EXPECT_EQ(m.var_names[0], "c[0].I_gap");
  // d(V2)/dt at the initial state, by the AST evaluator.
  std::vector<double> v(m.n_vars()), x = m.state_init;
  for (std::size_t i : topological_order(m))
    v[m.equations[i].target] = evaluate(*m.equations[i].expr, x.data(), v.data(), 0);
  const Equation* dv2 = nullptr;
  for (const auto& e : m.equations)
    if (e.derivative && e.target == 2) dv2 = &e;
  ASSERT_NE(dv2, nullptr);
  const double I_ion = 2.0 * (3.0 - 20.0), I = 1.0, gap = 0.25 * ((2.0 - 3.0) + (4.0 - 3.0)) / 2.0;
  EXPECT_DOUBLE_EQ(evaluate(*dv2->expr, x.data(), v.data(), 0), -I_ion + I + gap);
}

TEST(OdeLanguage, AllToAllAndLineTopologies) {
  const std::string text = R"yaml(modules:
  n:
    inputs: [S]
    states:
      s: {init: 1.0, ddt: "S"}
network:
  - {name: a, module: n, count: 4}
  - {name: b, module: n, count: 3}
connections:
  - {from: a, to: b, topology: all_to_all, input: S, term: "pre.s"}
  - {from: a, topology: line, input: S, term: "10*pre.s"}
)yaml";
  const FlatModel m = load_model_string(text, "m.yaml");
  std::vector<double> v(m.n_vars()), x = m.state_init;
  for (std::size_t i : topological_order(m))
    v[m.equations[i].target] = evaluate(*m.equations[i].expr, x.data(), v.data(), 0);
  bool st;
  std::uint32_t k;
  ASSERT_TRUE(m.find("b[1].S", st, k));
  EXPECT_EQ(v[k], 4.0);  // four presynaptic cells
  ASSERT_TRUE(m.find("a[0].S", st, k));
  EXPECT_EQ(v[k], 10.0);  // line end: one neighbour
  ASSERT_TRUE(m.find("a[2].S", st, k));
  EXPECT_EQ(v[k], 20.0);
}

TEST(OdeLanguage, ErrorsPointAtTheOffendingCharacter) {
  // Unknown symbol: line 6, the value starts after the quote at column 15, 'Vm' at offset 5.
  const std::string unknown = R"yaml(modules:
  cell:
    parameters: {g: 2.0}
    algebraics:
      a: "g*(V + 1)"
      b: "2*g*Vm"
    states:
      V: {init: 0, ddt: "-a - b"}
)yaml";
  const std::string e = model_error(unknown);
  EXPECT_NE(e.find("m.yaml:6:15: unknown symbol 'Vm'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'V'"), std::string::npos) << e;
  EXPECT_NE(e.find("2*g*Vm\n        ^"), std::string::npos) << e;
}

TEST(OdeLanguage, BadModelsGiveClearErrors) {
  const auto with = [](const std::string& alg, const std::string& ddt = "-V") {
    return "modules:\n  c:\n    parameters: {z: 0}\n    algebraics:\n" + alg +
           "    states:\n      V: {init: 0, ddt: \"" + ddt + "\"}\n";
  };
  EXPECT_NE(model_error(with("      a: \"exp(V, 2)\"\n")).find("exp() takes 1 argument, got 2"),
            std::string::npos);
  EXPECT_NE(model_error(with("      a: \"if(V, 2)\"\n")).find("if() takes 3 arguments, got 2"),
            std::string::npos);
  EXPECT_NE(model_error(with("      a: \"expp(V)\"\n"))
                .find("unknown function 'expp' (did you mean 'exp'?)"),
            std::string::npos);
  const std::string div = model_error(with("      a: \"V/(2*z)\"\n"));
  EXPECT_NE(div.find("m.yaml:5:12: division by constant zero"), std::string::npos) << div;
  const std::string cyc =
      model_error(with("      a: \"b + 1\"\n      b: \"2*c\"\n      c: \"a*V\"\n"));
  EXPECT_NE(cyc.find("algebraic cycle: c.a -> c.b -> c.c -> c.a"), std::string::npos) << cyc;
  EXPECT_NE(cyc.find("m.yaml:7:"), std::string::npos) << cyc;
  EXPECT_NE(model_error(with("      a: \"(V + 1\"\n")).find("missing ')'"), std::string::npos);
  EXPECT_NE(model_error(with("      a: \"V + * 2\"\n")).find("unexpected '*'"), std::string::npos);
  EXPECT_NE(
      model_error(with("      a: \"V 2\"\n")).find("unexpected '2' after a complete expression"),
      std::string::npos);
  EXPECT_NE(model_error(with("      V: \"1\"\n")).find("'V' is defined twice"), std::string::npos);
  // A sum too deep for the stack is rejected with advice.
  std::string deep = "V";
  for (int i = 0; i < 30; ++i) deep = "exp(V + " + deep + ")*1";
  std::string nested = "1";
  for (int i = 0; i < 30; ++i) nested = "(V + V + " + nested + ")";
  EXPECT_NE(model_error(with("      a: \"" + nested + "\"\n")).find("evaluation stack"),
            std::string::npos);
  EXPECT_EQ(model_error(with("      a: \"" + deep + "\"\n")), "");
  EXPECT_NE(model_error("modules:\n  c:\n    states:\n      V: {init: x, ddt: \"1\"}\n")
                .find("must be a number"),
            std::string::npos);
  EXPECT_NE(model_error("modules:\n  c:\n    states:\n      V: {init: 1, ddt: \"1\"}\nnetwork:\n  "
                        "- {module: d}\n")
                .find("unknown module 'd'"),
            std::string::npos);
}

TEST(OdeLanguage, LongSumsStayWithinTheStack) {
  std::string sum = "V";
  for (int i = 0; i < 200; ++i) sum += " + " + std::to_string(i) + "*V";
  const FlatModel m = load_model_string(
      "modules:\n  c:\n    states:\n      V: {init: 1, ddt: \"" + sum + "\"}\n", "m.yaml");
  const Program p = compile(m);
  EXPECT_LE(p.max_stack, kMaxStack);
  EXPECT_GE(p.max_stack, 2);
}

}  // namespace
}  // namespace hayate::ode
