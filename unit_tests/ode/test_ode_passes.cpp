// Every compiler pass preserves results: random models compiled with each combination of passes,
// run by the serial bytecode interpreter, agree with the AST evaluator; the stack bound holds.
#include "ode/compiler.hpp"
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
      const Op op = op_of(p.code[i]);
      d -= op_pops(op, arg_of(p.code[i]));
      EXPECT_GE(d, 0);
      d += op_pushes(op);
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
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    test::RandomModel gen(seed);
    const std::string text = gen.yaml(12, 4, 40);
    const FlatModel model = load_model_string(text, "random.yaml");
    for (Method method : {Method::Euler, Method::RK4}) {
      AstIntegrator ast(model, method);
      ast.x() = model.state_init;
      ast.advance(0, 3, 0.01);
      for (int bits = 0; bits < 32; ++bits) {
        CompilerOptions o;
        o.fold = bits & 1;
        o.merge = bits & 2;
        o.reorder = bits & 4;
        o.pad = bits & 8;
        o.unify = bits & 16;
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

}  // namespace
}  // namespace hayate::ode
