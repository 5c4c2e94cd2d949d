#include "ode/expr.hpp"

#include "config/error.hpp"
#include "config/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace hayate::ode {

namespace {

// Byte c as a message shows it: printable ASCII as it is, any other byte escaped (\x1b).
std::string shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) return fmt::format("\\x{:02x}", u);
  return std::string(1, c);
}

}  // namespace

void expr_error(const ExprSource& src, int pos, const std::string& message) {
  const int size = static_cast<int>(src.text.size());
  if (pos < 0) pos = 0;
  if (pos > size) pos = size;
  // A window of the text around pos: long expressions are quoted in part, with "..." where
  // text is left out, so that a message stays a few lines long whatever the input.
  const int half = kQuoteChars / 2;
  int begin = std::max(0, pos - half);
  const int end = std::min(size, begin + kQuoteChars);
  begin = std::max(0, std::min(begin, end - kQuoteChars));
  std::string quote = begin > 0 ? "..." : "";
  std::size_t caret = quote.size();
  for (int i = begin; i < end; ++i) {
    const std::string c = shown(src.text[static_cast<std::size_t>(i)]);
    if (i < pos) caret += c.size();
    quote += c;
  }
  if (end < size) quote += "...";
  std::string text = message;
  if (!src.owner.empty()) text += " (in " + src.owner + ")";
  text += "\n    " + quote + "\n    " + std::string(caret, ' ') + "^";
  throw core::InputError(
      core::SourceLocation{src.file, src.line, src.line > 0 ? src.column + pos : 0}, text);
}

Node::~Node() {
  std::vector<NodePtr> pending;
  for (auto& a : args)
    if (a) pending.push_back(std::move(a));  // a rewrite may have moved an argument out
  while (!pending.empty()) {
    NodePtr n = std::move(pending.back());
    pending.pop_back();
    for (auto& a : n->args)
      if (a) pending.push_back(std::move(a));
    n->args.clear();
  }  // each node is freed with no children left
}

int tree_height(const Node& root) {
  int height = 0;
  std::vector<std::pair<const Node*, int>> pending{{&root, 1}};
  while (!pending.empty()) {
    const auto [n, level] = pending.back();
    pending.pop_back();
    height = std::max(height, level);
    for (const auto& a : n->args) pending.emplace_back(a.get(), level + 1);
  }
  return height;
}

NodePtr Node::copy_fields() const {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->symbol = symbol;
  n->name = name;
  n->value = value;
  n->index = index;
  n->pos = pos;
  n->src = src;
  return n;
}

NodePtr Node::clone() const {
  NodePtr n = copy_fields();
  n->args.reserve(args.size());
  for (const auto& a : args) n->args.push_back(a->clone());
  return n;
}

NodePtr make_const(double v, int pos, const ExprSource* src) {
  auto n = std::make_unique<Node>();
  n->op = PUSH_CONST;
  n->value = v;
  n->pos = pos;
  n->src = src;
  return n;
}

NodePtr make_op(Op op, std::vector<NodePtr> args, int pos, const ExprSource* src) {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->args = std::move(args);
  n->pos = pos;
  n->src = src;
  return n;
}

namespace {

struct Function {
  const char* name;
  Op op;
  int min_args, max_args;  // max_args < 0: any number >= min_args
};

// min and max take two or more arguments (folded left); if is the piecewise conditional.
const Function functions[] = {
    {"exp", EXP, 1, 1},     {"log", LOG, 1, 1},       {"ln", LOG, 1, 1},
    {"log10", LOG10, 1, 1}, {"sqrt", SQRT, 1, 1},     {"abs", ABS, 1, 1},
    {"sin", SIN, 1, 1},     {"cos", COS, 1, 1},       {"tan", TAN, 1, 1},
    {"tanh", TANH, 1, 1},   {"floor", FLOOR, 1, 1},   {"pow", POW, 2, 2},
    {"min", MIN, 2, -1},    {"max", MAX, 2, -1},      {"mod", MOD, 2, 2},
    {"if", SELECT, 3, 3},   {"and", AND, 2, -1},      {"or", OR, 2, -1},
    {"not", NOT, 1, 1},     {"exprel", EXPREL, 1, 1}, {"exprelr", EXPRELR, 1, 1},
};

const Function* find_function(const std::string& name) {
  for (const auto& f : functions)
    if (name == f.name) return &f;
  return nullptr;
}

class Parser {
 public:
  explicit Parser(const ExprSource& src) : src_(src), s_(src.text) {}

  NodePtr parse() {
    if (s_.size() > kMaxExprChars)
      expr_error(src_, static_cast<int>(kMaxExprChars),
                 fmt::format("the expression has {} characters, more than the {} allowed: split "
                             "it into algebraic variables",
                             s_.size(), kMaxExprChars));
    skip();
    if (at_end()) expr_error(src_, 0, "empty expression");
    NodePtr n = logical_or();
    skip();
    if (!at_end()) {
      if (s_[p_] == ')') expr_error(src_, p_, "unbalanced ')'");
      expr_error(src_, p_,
                 fmt::format("unexpected '{}' after a complete expression", shown(s_[p_])));
    }
    // Chains such as a - b - c or min(a, b, c) nest one level per operator without nesting in
    // the text: the tree's height is bounded apart from the nesting.
    if (tree_height(*n) > kMaxExprHeight) expr_error(src_, deepest(*n), too_deep());
    return n;
  }

 private:
  bool at_end() const { return p_ >= s_.size(); }
  void skip() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  // Consumes `tok` if it comes next (after blanks); `not_followed` excludes e.g. "<" of "<=".
  bool accept(const char* tok, char not_followed = 0) {
    skip();
    const std::size_t n = std::char_traits<char>::length(tok);
    if (s_.compare(p_, n, tok) != 0) return false;
    if (not_followed && p_ + n < s_.size() && s_[p_ + n] == not_followed) return false;
    p_ += n;
    return true;
  }
  int here() {
    skip();
    return static_cast<int>(p_);
  }

  std::string too_deep() const {
    return fmt::format(
        "the expression nests more than {} levels deep (or chains more than {} operators): "
        "split it into algebraic variables",
        kMaxExprNesting, kMaxExprHeight);
  }
  // The position of the node at the bottom of the longest path (where the nesting is deepest).
  static int deepest(const Node& root) {
    int best = -1, where = root.pos;
    std::vector<std::pair<const Node*, int>> pending{{&root, 1}};
    while (!pending.empty()) {
      const auto [n, level] = pending.back();
      pending.pop_back();
      if (level > best) best = level, where = n->pos;
      for (const auto& a : n->args) pending.emplace_back(a.get(), level + 1);
    }
    return where;
  }
  // Every operand passes through unary(): one level of nesting in the text per call.
  struct Nest {
    Parser& parser;
    explicit Nest(Parser& p, int pos) : parser(p) {
      if (++parser.nesting_ > kMaxExprNesting) expr_error(parser.src_, pos, parser.too_deep());
    }
    ~Nest() { --parser.nesting_; }
  };

  NodePtr binary(Op op, NodePtr a, NodePtr b, int pos) {
    std::vector<NodePtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return make_op(op, std::move(args), pos, &src_);
  }

  NodePtr logical_or() {
    NodePtr a = logical_and();
    for (int pos = here(); accept("||"); pos = here())
      a = binary(OR, std::move(a), logical_and(), pos);
    return a;
  }
  NodePtr logical_and() {
    NodePtr a = equality();
    for (int pos = here(); accept("&&"); pos = here())
      a = binary(AND, std::move(a), equality(), pos);
    return a;
  }
  NodePtr equality() {
    NodePtr a = relational();
    for (;;) {
      const int pos = here();
      if (accept("=="))
        a = binary(EQ, std::move(a), relational(), pos);
      else if (accept("!="))
        a = binary(NE, std::move(a), relational(), pos);
      else
        return a;
    }
  }
  NodePtr relational() {
    NodePtr a = additive();
    for (;;) {
      const int pos = here();
      if (accept("<="))
        a = binary(LE, std::move(a), additive(), pos);
      else if (accept(">="))
        a = binary(GE, std::move(a), additive(), pos);
      else if (accept("<"))
        a = binary(LT, std::move(a), additive(), pos);
      else if (accept(">"))
        a = binary(GT, std::move(a), additive(), pos);
      else
        return a;
    }
  }
  // a + b + c becomes one n-ary sum (a*b*c one product), evaluated left to right as written.
  NodePtr collapse(Op op, std::vector<NodePtr>& terms, int pos) {
    if (terms.size() == 1) return std::move(terms[0]);
    return make_op(op, std::move(terms), pos, &src_);
  }
  template <class Operand>
  NodePtr chain(Op nary, const char* join, Op inverse, const char* inverse_tok, Operand operand) {
    std::vector<NodePtr> terms;
    terms.push_back((this->*operand)());
    int chain_pos = -1;
    for (;;) {
      const int pos = here();
      if (accept(join)) {
        if (chain_pos < 0) chain_pos = pos;
        terms.push_back((this->*operand)());
      } else if (accept(inverse_tok)) {
        NodePtr a = collapse(nary, terms, chain_pos);
        chain_pos = -1;
        terms.clear();
        terms.push_back(binary(inverse, std::move(a), (this->*operand)(), pos));
      } else {
        return collapse(nary, terms, chain_pos);
      }
    }
  }
  NodePtr additive() { return chain(ADD, "+", SUB, "-", &Parser::multiplicative); }
  NodePtr multiplicative() { return chain(MUL, "*", DIV, "/", &Parser::unary); }
  NodePtr unary() {
    const int pos = here();
    const Nest nest(*this, pos);
    if (accept("-")) {
      std::vector<NodePtr> args;
      args.push_back(unary());
      return make_op(NEG, std::move(args), pos, &src_);
    }
    if (accept("+")) return unary();
    if (accept("!", '=')) {
      std::vector<NodePtr> args;
      args.push_back(unary());
      return make_op(NOT, std::move(args), pos, &src_);
    }
    return power();
  }
  // Right-associative and binding tighter than unary minus: -a^2 = -(a^2), a^b^c = a^(b^c).
  NodePtr power() {
    NodePtr a = primary();
    const int pos = here();
    if (accept("^")) return binary(POW, std::move(a), unary(), pos);
    return a;
  }
  NodePtr primary() {
    const int pos = here();
    if (at_end()) expr_error(src_, pos, "expression ends where a value was expected");
    const char c = s_[p_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    if (accept("(")) {
      NodePtr n = logical_or();
      if (!accept(")"))
        expr_error(src_, here(), fmt::format("missing ')' to close '(' at column {}", pos + 1));
      return n;
    }
    if (c == ')') expr_error(src_, pos, "unbalanced ')' where a value was expected");
    expr_error(src_, pos, fmt::format("unexpected '{}' where a value was expected", shown(c)));
  }
  NodePtr number() {
    const int pos = here();
    const char* begin = s_.c_str() + p_;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) expr_error(src_, pos, "malformed number");
    // strtod also reads hexadecimal numbers (0x1p3): the language has decimal numbers only.
    if (std::find_if(begin, static_cast<const char*>(end),
                     [](char ch) { return ch == 'x' || ch == 'X'; }) != end)
      expr_error(src_, pos, "malformed number (decimal numbers only)");
    if (!std::isfinite(v))
      expr_error(src_, pos,
                 fmt::format("the number '{}' is out of range (at most about 1.8e308)",
                             std::string(begin, static_cast<std::size_t>(end - begin))));
    p_ += static_cast<std::size_t>(end - begin);
    if (!at_end() && (std::isalpha(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_'))
      expr_error(src_, static_cast<int>(p_), "malformed number (a name cannot start with a digit)");
    return make_const(v, pos, &src_);
  }
  NodePtr name() {
    const int pos = here();
    std::size_t e = p_;
    while (e < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_' ||
            (s_[e] == '.' && e + 1 < s_.size() &&
             (std::isalpha(static_cast<unsigned char>(s_[e + 1])) || s_[e + 1] == '_'))))
      ++e;
    std::string id = s_.substr(p_, e - p_);
    p_ = e;
    skip();
    if (at_end() || s_[p_] != '(') {
      auto n = std::make_unique<Node>();
      n->symbol = true;
      n->name = std::move(id);
      n->pos = pos;
      n->src = &src_;
      return n;
    }
    ++p_;  // '('
    const Function* f = find_function(id);
    if (!f) {
      const std::string near = core::nearest(id, function_names());
      expr_error(src_, pos,
                 fmt::format("unknown function '{}'{}", id,
                             near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    std::vector<NodePtr> args;
    if (!accept(")")) {
      for (;;) {
        args.push_back(logical_or());
        if (accept(")")) break;
        if (!accept(","))
          expr_error(src_, here(), fmt::format("expected ',' or ')' in the arguments of {}()", id));
      }
    }
    const int n = static_cast<int>(args.size());
    if (n < f->min_args || (f->max_args >= 0 && n > f->max_args)) {
      std::string want = f->max_args < 0 ? fmt::format("at least {}", f->min_args)
                         : f->min_args == f->max_args
                             ? fmt::format("{}", f->min_args)
                             : fmt::format("{} to {}", f->min_args, f->max_args);
      expr_error(
          src_, pos,
          fmt::format("{}() takes {} argument{}, got {}", id, want, want == "1" ? "" : "s", n));
    }
    // Variadic min/max/and/or nest to the left so each node has two arguments.
    NodePtr acc = std::move(args[0]);
    if (n == 1 || f->op == SELECT) {
      if (f->op == SELECT) {
        std::vector<NodePtr> three;
        three.push_back(std::move(acc));
        three.push_back(std::move(args[1]));
        three.push_back(std::move(args[2]));
        return make_op(SELECT, std::move(three), pos, &src_);
      }
      std::vector<NodePtr> one;
      one.push_back(std::move(acc));
      return make_op(f->op, std::move(one), pos, &src_);
    }
    for (int i = 1; i < n; ++i) acc = binary(f->op, std::move(acc), std::move(args[i]), pos);
    return acc;
  }

  const ExprSource& src_;
  const std::string& s_;
  std::size_t p_ = 0;
  int nesting_ = 0;
};

int precedence(Op op) {
  switch (op) {
    case OR:
      return 1;
    case AND:
      return 2;
    case EQ:
    case NE:
      return 3;
    case LT:
    case LE:
    case GT:
    case GE:
      return 4;
    case ADD:
    case ADDN:
    case SUB:
      return 5;
    case MUL:
    case MULN:
    case DIV:
      return 6;
    case NEG:
    case NOT:
      return 7;
    case POW:
    case POWI:
      return 8;
    default:
      return 9;
  }
}

const char* infix(Op op) {
  switch (op) {
    case OR:
      return " || ";
    case AND:
      return " && ";
    case EQ:
      return " == ";
    case NE:
      return " != ";
    case LT:
      return " < ";
    case LE:
      return " <= ";
    case GT:
      return " > ";
    case GE:
      return " >= ";
    case ADD:
    case ADDN:
      return " + ";
    case SUB:
      return " - ";
    case MUL:
    case MULN:
      return "*";
    case DIV:
      return "/";
    case POW:
      return "^";
    default:
      return nullptr;
  }
}

}  // namespace

NodePtr parse_expression(const ExprSource& src) {
  return Parser(src).parse();
}

const std::vector<std::string>& function_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& f : functions) v.push_back(f.name);
    return v;
  }();
  return names;
}

double evaluate(const Node& n, const double* x, const double* v, double t) {
  switch (n.op) {
    case PUSH_CONST:
      return n.value;
    case PUSH_STATE:
      return x[n.index];
    case PUSH_VAR:
      return v[n.index];
    case PUSH_TIME:
      return t;
    case ADD:
    case ADDN:
    case MUL:
    case MULN: {
      const Op op = n.op == ADD || n.op == ADDN ? ADD : MUL;
      double acc = evaluate(*n.args[0], x, v, t);
      for (std::size_t i = 1; i < n.args.size(); ++i)
        acc = apply_binary(op, acc, evaluate(*n.args[i], x, v, t));
      return acc;
    }
    case POWI:
      return ipow(evaluate(*n.args[0], x, v, t), int(n.index) - kPowiBias);
    case SELECT: {
      const double c = evaluate(*n.args[0], x, v, t);
      const double a = evaluate(*n.args[1], x, v, t);
      const double b = evaluate(*n.args[2], x, v, t);
      return apply_select(c, a, b);
    }
    default:
      break;
  }
  if (n.args.size() == 1) return apply_unary(n.op, evaluate(*n.args[0], x, v, t));
  return apply_binary(n.op, evaluate(*n.args[0], x, v, t), evaluate(*n.args[1], x, v, t));
}

std::string to_string(const Node& n) {
  if (n.symbol) return n.name;
  switch (n.op) {
    case PUSH_CONST:
      return fmt::format("{}", n.value);
    case PUSH_STATE:
      return fmt::format("x[{}]", n.index);
    case PUSH_VAR:
      return fmt::format("v[{}]", n.index);
    case PUSH_TIME:
      return "t";
    default:
      break;
  }
  const int prec = precedence(n.op);
  const auto wrap = [&](const Node& c, bool right) {
    const int pc = precedence(c.op);
    std::string s = to_string(c);
    if (c.symbol || pc > prec || (pc == prec && !right && n.op != POW)) return s;
    return "(" + s + ")";
  };
  if (n.op == POWI) return wrap(*n.args[0], false) + "^" + std::to_string(int(n.index) - kPowiBias);
  if (const char* sep = infix(n.op)) {
    std::string s;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      if (i) s += sep;
      s += wrap(*n.args[i], i > 0 && n.op != POW ? true : n.op == POW && i == 1);
    }
    return s;
  }
  if (n.op == NEG) return "-" + wrap(*n.args[0], true);
  if (n.op == NOT) return "!" + wrap(*n.args[0], true);
  std::string s = n.op == SELECT ? "if" : op_name(n.op);
  s += "(";
  for (std::size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + to_string(*n.args[i]);
  return s + ")";
}

}  // namespace hayate::ode
