#pragma once
// Expressions of the model language: a hand-written recursive-descent parser producing an AST
// whose nodes carry their character offset, so every error points at file:line:col of the
// offending character and quotes the expression.
#include "ode/ops.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hayate::ode {

// Where an expression's text came from: the position of its first character (1-based).
struct ExprSource {
  std::string file;
  int line = 0;
  int column = 0;
  std::string text;
  std::string owner;  // what it defines, e.g. "d(cell[3].V)/dt" or "lr91.E_Na"
};

// Throws core::InputError at the character `pos` of the source, quoting the text around it (at
// most kQuoteChars characters, control bytes escaped) with a caret.
[[noreturn]] void expr_error(const ExprSource& src, int pos, const std::string& message);

// Bounds on what the parser accepts, so that no input can exhaust the stack, the memory or the
// time of the passes that walk an expression recursively (resolution, folding, bytecode). A
// real model's expressions are far inside them (the shipped ones: under 200 characters, nesting
// under 10 levels).
inline constexpr std::size_t kMaxExprChars = 16384;  // characters of one expression
inline constexpr int kMaxExprNesting = 200;          // parentheses, calls, signs, powers inside
                                                     // each other
inline constexpr int kMaxExprHeight = 1000;          // levels of the parsed tree (a - b - c ...
                                                     // is one level per operator)
inline constexpr int kQuoteChars = 72;               // characters of the text a message quotes

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  Node() = default;
  Node(Node&&) = default;
  Node& operator=(Node&&) = default;
  // Frees the tree without recursion: a tree too deep for the stack can be destroyed.
  ~Node();

  Op op = PUSH_CONST;       // PUSH_CONST/STATE/VAR/TIME for leaves, the operation otherwise
  bool symbol = false;      // an unresolved name straight from the parser
  std::string name;         // the name of a symbol
  double value = 0.0;       // PUSH_CONST
  std::uint32_t index = 0;  // PUSH_STATE, PUSH_VAR
  int pos = 0;              // character offset in the source text
  std::vector<NodePtr> args;
  const ExprSource* src = nullptr;

  bool is_const() const { return op == PUSH_CONST && !symbol; }
  NodePtr clone() const;
  // A copy of this node's fields without its arguments (for rewrites that rebuild them).
  NodePtr copy_fields() const;
};

NodePtr make_const(double v, int pos, const ExprSource* src);
NodePtr make_op(Op op, std::vector<NodePtr> args, int pos, const ExprSource* src);

// Parses the whole text of `src`; throws InputError on a syntax error, an unknown function, a
// wrong number of arguments, a number that is not finite, or a text beyond the bounds above.
// Names stay unresolved (symbol = true).
NodePtr parse_expression(const ExprSource& src);

// The names a function call may use, for "did you mean" suggestions.
const std::vector<std::string>& function_names();

// The AST-walking evaluator, independent of the bytecode: x = states, v = variables (algebraic
// and swept parameters), t = time. Sums and products run left to right as the bytecode does.
double evaluate(const Node& node, const double* x, const double* v, double t);

// Levels of the tree below and including `node`, computed without recursion.
int tree_height(const Node& node);

// Rebuilds an expression as text (for messages and the docs' listings).
std::string to_string(const Node& node);

}  // namespace hayate::ode
