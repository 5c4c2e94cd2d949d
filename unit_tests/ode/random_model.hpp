#pragma once
// Random models for pass-preservation tests: a module with random algebraic expressions over
// the whole operation set, instantiated many times with per-instance parameters so unified
// warps carry differing constants.
#include "ode/compiler.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hayate::test {

class RandomModel {
 public:
  explicit RandomModel(std::uint64_t seed) : seed_(seed) {}

  std::string yaml(int n_alg, int n_states, int count) {
    std::string s =
        "modules:\n  rnd:\n    parameters: {p0: 0.7, p1: -1.3, p2: 2.1}\n    algebraics:\n";
    for (int a = 0; a < n_alg; ++a)
      s += fmt::format("      a{}: \"{}\"\n", a, expr(3, a, n_states));
    s += "    states:\n";
    for (int k = 0; k < n_states; ++k)
      s += fmt::format("      s{}: {{init: {}, ddt: \"-s{} + tanh({})\"}}\n", k, 0.1 * (k + 1), k,
                       expr(2, n_alg, n_states));
    s += fmt::format(
        "network:\n  - {{name: c, module: rnd, count: {}, parameters: {{p0: {{uniform: [0.5, 1.5], "
        "seed: "
        "{}}}, p2: \"2 + 0.1*i\"}}}}\n",
        count, seed_ % 1000);
    return s;
  }

 private:
  double uniform() { return util::uniform01(seed_, 7, counter_++); }
  int pick(int n) { return static_cast<int>(uniform() * n) % n; }

  std::string leaf(int n_alg, int n_states) {
    switch (pick(7)) {
      case 0:
        return fmt::format("{:.3f}", 4 * uniform() - 2);
      case 1:
        return fmt::format("p{}", pick(3));
      case 2:
      case 3:
        return fmt::format("s{}", pick(n_states));
      case 4:
      case 5:
        return n_alg > 0 ? fmt::format("a{}", pick(n_alg)) : fmt::format("s{}", pick(n_states));
      default:
        return "t";
    }
  }

  // Operands stay in safe domains so every value is finite.
  std::string expr(int depth, int n_alg, int n_states) {
    if (depth == 0 || pick(4) == 0) return leaf(n_alg, n_states);
    const auto e = [&] { return expr(depth - 1, n_alg, n_states); };
    switch (pick(24)) {
      case 0:
        return "(" + e() + " + " + e() + " + " + e() + ")";
      case 1:
        return "(" + e() + " - " + e() + ")";
      case 2:
        return "(" + e() + "*" + e() + "*" + e() + ")";
      case 3:
        return e() + "/(1 + (" + e() + ")^2)";
      case 4:
        return "exp(-abs(" + e() + "))";
      case 5:
        return "log(1 + abs(" + e() + "))";
      case 6:
        return "log10(2 + (" + e() + ")^2)";
      case 7:
        return "sqrt(abs(" + e() + "))";
      case 8:
        return "tanh(" + e() + ")";
      case 9:
        return "exprelr(sin(" + e() + "))";
      case 10:
        return "cos(" + e() + ")";
      case 11:
        return "exprel(tan(0.5*tanh(" + e() + ")))";
      case 12:
        return "min(" + e() + ", " + e() + ")";
      case 13:
        return "max(" + e() + ", " + e() + ", " + e() + ")";
      case 14:
        return "pow(abs(" + e() + ") + 0.5, 1.5)";
      case 15:
        return "(" + e() + ")^3";
      case 16:
        return "if(" + e() + " > " + e() + ", " + e() + ", " + e() + ")";
      case 17:
        return "if(" + e() + " <= 0.2 && " + e() + " != 1 || !(" + e() + " >= 0), 1, -1)";
      case 18:
        return "if(and(" + e() + " < 1, or(" + e() + " == 0, not(" + e() + "))), 0.5, 2)";
      case 19:
        return "mod(" + e() + ", 1.7)";
      case 20:
        return "floor(" + e() + ")";
      case 21:
        return "-" + e();
      case 22:
        return "2^-(" + e() + ")^2";
      default:
        return "abs(" + e() + ")";
    }
  }

  std::uint64_t seed_;
  std::uint64_t counter_ = 0;
};

// One combination of the five switchable passes: bits 0-4 are fold, merge, reorder, pad, unify.
inline ode::CompilerOptions passes_from_bits(int bits) {
  ode::CompilerOptions o;
  o.fold = bits & 1;
  o.merge = bits & 2;
  o.reorder = bits & 4;
  o.pad = bits & 8;
  o.unify = bits & 16;
  return o;
}

}  // namespace hayate::test
