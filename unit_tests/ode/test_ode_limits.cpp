// The model language under hostile input: nesting, length, numbers and network sizes beyond the
// parser's bounds are input errors at the offending character, never a stack overflow or an
// endless load. The few time bounds are loose guards against the pathologies (seconds against
// the minutes they took), not measurements.
#include "config/error.hpp"
#include "ode/compiler.hpp"
#include "ode/model.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace hayate::ode {
namespace {

// One state whose derivative is `ddt` (and extra model text after the module).
std::string model_with(const std::string& ddt, const std::string& extra = "") {
  return "modules:\n  c:\n    parameters: {g: 2.0}\n    states:\n      V: {init: 0, ddt: \"" + ddt +
         "\"}\n" + extra;
}

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

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(OdeLimits, DeepNestingIsAnErrorNotACrash) {
  // The reproducers of the crash: thousands of parentheses, signs and calls inside each other.
  const std::string cases[] = {
      repeat("(", 4500) + "V" + repeat(")", 4500),
      repeat("-", 3000) + "V",
      repeat("exp(", 1000) + "V" + repeat(")", 1000),
      "V" + repeat("^V", 3000),
      repeat("!", 5000) + "V",
      repeat("if(", 500) + "1,1,1" + repeat(")", 500),
  };
  for (const auto& ddt : cases) {
    const std::string e = model_error(model_with(ddt));
    EXPECT_NE(e.find("m.yaml:5:"), std::string::npos) << e.substr(0, 300);
    EXPECT_NE(e.find("nests more than 200 levels"), std::string::npos) << e.substr(0, 300);
    EXPECT_LT(e.size(), 600u) << "the message quotes a window of the text, not all of it";
  }
  // Just inside the bound it parses and compiles.
  EXPECT_EQ(model_error(model_with(repeat("(", 150) + "V" + repeat(")", 150))), "");
  EXPECT_EQ(model_error(model_with(repeat("-", 150) + "V")), "");
}

TEST(OdeLimits, LongOperatorChainsAreBoundedToo) {
  // a - b - c ... nests one tree level per operator without any nesting in the text.
  std::string chain = "V";
  for (int i = 0; i < 2000; ++i) chain += " - V";
  std::string e = model_error(model_with(chain));
  EXPECT_NE(e.find("chains more than 1000 operators"), std::string::npos) << e.substr(0, 300);
  std::string args = "V";
  for (int i = 0; i < 1500; ++i) args += ",V";
  e = model_error(model_with("min(" + args + ")"));
  EXPECT_NE(e.find("m.yaml:5:"), std::string::npos) << e.substr(0, 300);
  std::string ok = "V";
  for (int i = 0; i < 500; ++i) ok += " - V";
  EXPECT_EQ(model_error(model_with(ok)), "");
}

TEST(OdeLimits, HugeExpressionIsRefusedInWellUnderASecond) {
  std::string big = "1";
  while (big.size() < 400000) big += "+1";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = model_error(model_with(big));
  EXPECT_LT(seconds_since(t0), 5.0);  // it took 16 s and 4.4 GB: a bound on the pathology only
  EXPECT_NE(e.find("the expression has 400001 characters, more than the 16384 allowed"),
            std::string::npos)
      << e.substr(0, 300);
  EXPECT_LT(e.size(), 600u);
  // A long sum inside the bound loads and compiles quickly.
  std::string sum = "V";
  while (sum.size() < 16000) sum += "+V";
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(model_error(model_with(sum)), "");
  EXPECT_LT(seconds_since(t1), 10.0);
}

TEST(OdeLimits, NumbersMustBeFiniteAndDecimal) {
  EXPECT_NE(
      model_error(model_with("1e999*V")).find("m.yaml:5:26: the number '1e999' is out of range"),
      std::string::npos)
      << model_error(model_with("1e999*V"));
  EXPECT_NE(model_error(model_with("0x1p3*V")).find("decimal numbers only"), std::string::npos);
  EXPECT_EQ(model_error(model_with("1e-400*V")), "");  // underflows to 0: finite
}

TEST(OdeLimits, MessagesEscapeControlBytes) {
  const std::string e = model_error(model_with("V \\x1b[2J $ 2"));
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("unexpected '\\x1b'"), std::string::npos) << e;
}

TEST(OdeLimits, DeepTreesAreFreedWithoutRecursion) {
  // A tree far deeper than the stack allows a recursive destructor to free.
  NodePtr root = make_const(1.0, 0, nullptr);
  for (int i = 0; i < 1000000; ++i) {
    std::vector<NodePtr> args;
    args.push_back(std::move(root));
    root = make_op(NEG, std::move(args), 0, nullptr);
  }
  EXPECT_EQ(tree_height(*root), 1000001);
  root.reset();
}

TEST(OdeLimits, ParameterSubstitutionIsBounded) {
  // Each parameter wraps the one before in 150 calls (parentheses alone make no tree levels):
  // every expression is within the parser's bounds, the substituted one is 8,850 levels deep,
  // and resolution stops at its bound.
  std::string params = "p0: \"V*1\"";
  for (int i = 1; i < 60; ++i)
    params += ", p" + std::to_string(i) + ": \"" + repeat("sin(", 150) + "p" +
              std::to_string(i - 1) + repeat(")", 150) + "\"";
  const std::string text = "modules:\n  c:\n    parameters: {" + params +
                           "}\n    states:\n      V: {init: 0, ddt: \"p59\"}\n";
  const std::string e = model_error(text);
  EXPECT_NE(e.find("once its parameters are substituted"), std::string::npos) << e.substr(0, 400);
}

TEST(OdeLimits, NetworkSizesAreBoundedBeforeTheyAreBuilt) {
  const std::string module =
      "modules:\n  c:\n    inputs: [I]\n    states:\n"
      "      V: {init: 0, ddt: \"I - V\"}\n";
  auto t0 = std::chrono::steady_clock::now();
  std::string e = model_error(module + "network:\n  - {name: a, module: c, count: 10000000}\n");
  EXPECT_NE(e.find("m.yaml:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("'count' must be an integer in [1, 1048576]"), std::string::npos) << e;
  e = model_error(module +
                  "network:\n  - {name: a, module: c, count: 100000}\nconnections:\n"
                  "  - {from: a, topology: all_to_all, input: I, term: \"pre.V\"}\n");
  EXPECT_NE(e.find("m.yaml:9:"), std::string::npos) << e;
  EXPECT_NE(e.find("pairs, more than the"), std::string::npos) << e;
  e = model_error(module +
                  "network:\n  - {name: a, module: c, count: 3000}\nconnections:\n"
                  "  - {from: a, topology: all_to_all, input: I, term: \"pre.V*post.V + 1\"}\n");
  EXPECT_NE(e.find("the model expands to more than"), std::string::npos) << e;
  EXPECT_LT(seconds_since(t0), 60.0);
}

TEST(OdeLimits, MissingConnectionKeysArePositionedInputErrors) {
  // A connection without topology used to escape as yaml-cpp's "invalid node" (exit 3).
  const std::string base =
      "modules:\n  c:\n    inputs: [I]\n    states:\n"
      "      V: {init: 0, ddt: \"I - V\"}\nnetwork:\n"
      "  - {name: a, module: c, count: 3}\nconnections:\n";
  EXPECT_NE(model_error(base + "  - {from: a, input: I, term: \"pre.V\"}\n")
                .find("m.yaml:9:5: a connection needs 'topology'"),
            std::string::npos)
      << model_error(base + "  - {from: a, input: I, term: \"pre.V\"}\n");
  EXPECT_NE(
      model_error(base + "  - {from: a, topology: ring, input: I}\n").find("missing expression"),
      std::string::npos);
  EXPECT_NE(model_error(base + "  - {topology: ring, input: I, term: \"1\"}\n")
                .find("m.yaml:9:5: a connection needs 'from'"),
            std::string::npos);
  EXPECT_NE(model_error(base + "  - {from: a, topology: ring, input: I, term: \"1\", self: [1]}\n")
                .find("'self' must be a single value"),
            std::string::npos);
  EXPECT_NE(model_error(base + "  - {from: a, topology: random, probability: 0.5, seed: -1, "
                               "input: I, term: \"1\"}\n")
                .find("'seed' must be an integer in [0, 2^53]"),
            std::string::npos);
  EXPECT_NE(model_error("modules:\n  c:\n    states:\n      V: {init: 0, ddt: \"1\"}\nnetwork:\n"
                        "  - {name: a, count: 2}\n")
                .find("m.yaml:6:5: missing 'module'"),
            std::string::npos);
}

TEST(OdeLimits, RepeatedKeysAndBadNamesAreErrors) {
  // yaml-cpp keeps both entries of a repeated key: a module given twice used to load twice.
  std::string e = model_error(
      "modules:\n  c:\n    states:\n      V: {init: 0, ddt: \"1\"}\n  c:\n    states:\n"
      "      W: {init: 0, ddt: \"1\"}\n");
  EXPECT_NE(e.find("m.yaml:5:3: duplicate key 'c'"), std::string::npos) << e;
  e = model_error("modules:\n  c:\n    states:\n      V: {init: 0, init: 1, ddt: \"1\"}\n");
  EXPECT_NE(e.find("m.yaml:4:20: duplicate key 'init'"), std::string::npos) << e;
  e = model_error("modules:\n  a.b:\n    states:\n      V: {init: 0, ddt: \"1\"}\n");
  EXPECT_NE(e.find("m.yaml:2:3: 'a.b' is not a valid name"), std::string::npos) << e;
}

TEST(OdeLimits, DeepYamlNamesAPosition) {
  const std::string e = model_error("modules: " + repeat("[", 3000) + repeat("]", 3000) + "\n");
  EXPECT_NE(e.find("m.yaml:1:"), std::string::npos) << e.substr(0, 200);
  EXPECT_NE(e.find("nested 500 levels deep"), std::string::npos) << e.substr(0, 200);
}

}  // namespace
}  // namespace hayate::ode
