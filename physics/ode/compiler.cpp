#include "ode/compiler.hpp"

#include "config/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace hayate::ode {

const char* op_name(Op op) {
  static const char* names[OP_COUNT] = {"push_const",
                                        "push_state",
                                        "push_var",
                                        "push_time",
                                        "const_ind",
                                        "state_ind",
                                        "var_ind",
                                        "add",
                                        "mul",
                                        "sub",
                                        "div",
                                        "pow",
                                        "min",
                                        "max",
                                        "mod",
                                        "lt",
                                        "le",
                                        "gt",
                                        "ge",
                                        "eq",
                                        "ne",
                                        "and",
                                        "or",
                                        "addn",
                                        "muln",
                                        "powi",
                                        "neg",
                                        "exp",
                                        "log",
                                        "log10",
                                        "sqrt",
                                        "abs",
                                        "sin",
                                        "cos",
                                        "tan",
                                        "tanh",
                                        "exprel",
                                        "exprelr",
                                        "floor",
                                        "not",
                                        "select",
                                        "assign_alg",
                                        "assign_deriv",
                                        "assign_alg_ind",
                                        "assign_deriv_ind"};
  static_assert(OP_COUNT == 45, "one name per opcode, in enum order");
  if (std::uint32_t(op) >= kPairFirst && std::uint32_t(op) <= kPairLast) return "pair";
  return op < OP_COUNT ? names[op] : "?";
}

int word_pops(std::uint32_t word) {
  const Op op = op_of(word);
  if (is_leaf(op)) return 0;
  switch (op) {
    case ADDN:
    case MULN:
      return static_cast<int>(arg_of(word));
    case SELECT:
      return has_operand(word) ? 2 : 3;
    case POWI:
    case ASSIGN_ALG:
    case ASSIGN_DERIV:
    case ASSIGN_ALG_IND:
    case ASSIGN_DERIV_IND:
      return 1;
    default:
      return is_unary(op) || (is_binary(op) && has_operand(word)) ? 1 : 2;
  }
}

int word_pushes(std::uint32_t word) {
  const Op op = op_of(word);
  return op == ASSIGN_ALG || op == ASSIGN_DERIV || op == ASSIGN_ALG_IND || op == ASSIGN_DERIV_IND
             ? 0
             : 1;
}

std::size_t Program::max_groups_per_phase() const {
  std::size_t m = 0;
  for (std::size_t p = 0; p + 1 < phase_begin.size(); ++p)
    m = std::max<std::size_t>(m, phase_begin[p + 1] - phase_begin[p]);
  return m;
}

std::size_t Program::unified_groups() const {
  std::size_t n = 0;
  for (std::size_t g = 0; g < n_groups(); ++g) n += group(g, G_KIND) == GROUP_UNIFIED;
  return n;
}

namespace {

[[noreturn]] void node_error(const Node& n, const std::string& message) {
  if (n.src) expr_error(*n.src, n.pos, message);
  throw core::InputError(core::SourceLocation{"<model>", 0, 0}, message);
}

bool integer_exponent(double b) {
  return b == std::floor(b) && b != 0.0 && std::fabs(b) <= kPowiMax;
}

}  // namespace

NodePtr fold(NodePtr n) {
  if (n->args.empty()) return n;
  for (auto& a : n->args) a = fold(std::move(a));
  if (n->op == DIV && n->args[1]->is_const() && n->args[1]->value == 0.0)
    node_error(*n, fmt::format("division by constant zero: the divisor '{}' is 0",
                               n->args[1]->src ? to_string(*n->args[1]) : "0"));
  if (n->op == ADD || n->op == MUL) {
    // (a + b) + c = a + b + c: flattening a leading operand keeps the order of evaluation.
    if (n->args[0]->op == n->op) {
      std::vector<NodePtr> flat = std::move(n->args[0]->args);
      for (std::size_t i = 1; i < n->args.size(); ++i) flat.push_back(std::move(n->args[i]));
      n->args = std::move(flat);
    }
    // A constant prefix folds exactly: the sum runs left to right.
    while (n->args.size() >= 2 && n->args[0]->is_const() && n->args[1]->is_const()) {
      n->args[0]->value = apply_binary(n->op, n->args[0]->value, n->args[1]->value);
      n->args.erase(n->args.begin() + 1);
    }
    if (n->args.size() == 1) return std::move(n->args[0]);
  }
  // Exact identities: x * 1, x / 1 and x - (+0) are x bit for bit (signed zeros, infinities and
  // NaN too), and each would cost an instruction on a stream's path (-(I_ion + ...) / C, C = 1).
  const auto is = [](const NodePtr& a, double v) {
    return a->is_const() && a->value == v && std::signbit(a->value) == std::signbit(v);
  };
  if (n->op == MUL && n->args.size() >= 2) {
    std::vector<NodePtr> kept;
    for (auto& a : n->args)
      if (!is(a, 1.0)) kept.push_back(std::move(a));
    if (kept.empty()) return make_const(1.0, n->pos, n->src);
    if (kept.size() == 1) return std::move(kept[0]);
    n->args = std::move(kept);
  }
  if ((n->op == DIV && is(n->args[1], 1.0)) || (n->op == SUB && is(n->args[1], 0.0)))
    return std::move(n->args[0]);
  const bool all_const =
      std::all_of(n->args.begin(), n->args.end(), [](const NodePtr& a) { return a->is_const(); });
  if (all_const) {
    const double v = evaluate(*n, nullptr, nullptr, 0.0);
    return make_const(v, n->pos, n->src);
  }
  if (n->op == POW && n->args[1]->is_const() && integer_exponent(n->args[1]->value)) {
    n->op = POWI;
    n->index = static_cast<std::uint32_t>(static_cast<int>(n->args[1]->value) + kPowiBias);
    n->args.pop_back();
  }
  return n;
}

namespace {

bool leaf(const Node& n) {
  return n.args.empty();
}

// A sum or product of more than two terms runs as a chain of two-argument operations when at
// most one term after the first is not a leaf (leaves fold into the operations' operands, as in
// I_Na + I_K + I_L); otherwise as n-ary operations over the stack.
bool chained(const Node& n) {
  if ((n.op != ADD && n.op != MUL) || n.args.size() <= 2) return false;
  return std::count_if(n.args.begin() + 1, n.args.end(), [](const auto& a) { return !leaf(*a); }) <=
         1;
}

// exp(c * x) or exp(x * c) with c a leaf: x, which the exp word multiplies by its operand c
// before the exp (the same two operations); else null.
const Node* scaled_exp_argument(const Node& n) {
  if (n.op != EXP || n.args.size() != 1) return nullptr;
  const Node& product = *n.args[0];
  if (product.op != MUL || product.args.size() != 2) return nullptr;
  if (leaf(*product.args[1])) return product.args[0].get();
  if (leaf(*product.args[0])) return product.args[1].get();
  return nullptr;
}

// Stack depth an expression needs, for the emission order below.
int need(const Node& n) {
  if (leaf(n)) return 1;
  if (n.args.size() == 2 && is_binary(n.op)) {
    const Node &l = *n.args[0], &r = *n.args[1];
    if (leaf(r)) return need(l);  // l, then the operation with r as its operand
    if (leaf(l)) return need(r);
    const int a = need(l), b = need(r);
    if (n.op == ADD || n.op == MUL) return a == b ? a + 1 : std::max(a, b);
    return std::max(a, b + 1);
  }
  if (const Node* x = scaled_exp_argument(n)) return need(*x);
  if (n.op == SELECT && (leaf(*n.args[1]) || leaf(*n.args[2]))) {
    // The condition, then the other arm; the leaf arm is the select's operand.
    const Node& arm = leaf(*n.args[2]) ? *n.args[1] : *n.args[2];
    return std::max(need(*n.args[0]), 1 + need(arm));
  }
  if (chained(n)) {
    int d = need(*n.args[0]);
    for (std::size_t i = 1; i < n.args.size(); ++i)
      if (!leaf(*n.args[i])) d = std::max(d, 1 + need(*n.args[i]));
    return d;
  }
  int d = 0;
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    // Long sums run in chunks of 8 with the running value at the bottom.
    const std::size_t pos = (n.op == ADD || n.op == MUL) && i >= 8 ? 1 + (i - 8) % 7 : i;
    d = std::max(d, int(pos) + need(*n.args[i]));
  }
  return d;
}

class Emitter {
 public:
  Emitter(std::vector<double>& consts, std::vector<std::uint32_t>& code)
      : consts_(consts), code_(code) {
    for (std::size_t i = 0; i < consts_.size(); ++i)
      index_[bits(consts_[i])] = static_cast<std::uint32_t>(i);
  }

  void emit(const Node& n) {
    if (leaf(n)) {
      word(n.op, leaf_arg(n), n);
      push(1);
      return;
    }
    if (n.args.size() == 2 && is_binary(n.op)) {
      const Node &l = *n.args[0], &r = *n.args[1];
      if (leaf(r)) {
        emit(l);
        operand(n.op, r, false, n);
        return;
      }
      if (leaf(l)) {
        emit(r);
        operand(n.op, l, true, n);
        return;
      }
      // a + b and b + a round identically, so the deeper operand goes first (Sethi-Ullman).
      if ((n.op == ADD || n.op == MUL) && need(r) > need(l)) {
        emit(r);
        emit(l);
      } else {
        emit(l);
        emit(r);
      }
      word(n.op, 0, n);
      depth_ -= 1;
      return;
    }
    if (const Node* x = scaled_exp_argument(n)) {
      const Node& product = *n.args[0];
      const bool left = x == product.args[1].get();  // c * x
      emit(*x);
      operand(EXP, *product.args[left ? 0 : 1], left, n);
      return;
    }
    switch (n.op) {
      case ADD:
      case MUL:
        if (chained(n)) {
          // ((a + b) + c) + d: the order of the n-ary sum, one operation per term.
          emit(*n.args[0]);
          for (std::size_t i = 1; i < n.args.size(); ++i) {
            if (leaf(*n.args[i])) {
              operand(n.op, *n.args[i], false, n);
            } else {
              emit(*n.args[i]);
              word(n.op, 0, n);
              depth_ -= 1;
            }
          }
          return;
        }
        nary(n);
        return;
      case POWI:
        emit(*n.args[0]);
        word(POWI, n.index, n);
        return;
      case SELECT: {
        // A leaf arm (the 0 of if(V < -40, rate, 0)) is the operand: one word less.
        const Node &c = *n.args[0], &a = *n.args[1], &b = *n.args[2];
        emit(c);
        if (leaf(b)) {
          emit(a);
          operand(SELECT, b, false, n);
        } else if (leaf(a)) {
          emit(b);
          operand(SELECT, a, true, n);
        } else {
          emit(a);
          emit(b);
          word(SELECT, 0, n);
          depth_ -= 1;
        }
        depth_ -= 1;
        return;
      }
      default:
        break;
    }
    for (const auto& a : n.args) emit(*a);
    word(n.op, 0, n);
    depth_ -= static_cast<int>(n.args.size()) - 1;
  }
  void store(Op op, std::uint32_t target, const Node& n) {
    word(op, target, n);
    depth_ -= 1;
  }
  int max_depth() const { return max_; }

 private:
  // Long sums (a connection input of 100 synapses) run in chunks so the stack stays shallow;
  // the running value is the first operand of the next chunk, so the order is unchanged.
  void nary(const Node& n) {
    constexpr std::size_t chunk = 8;
    const std::size_t count = n.args.size();
    const Op two = n.op, many = n.op == ADD ? ADDN : MULN;
    std::size_t i = 0, pending = 0;
    while (i < count) {
      const std::size_t take = std::min(count - i, pending ? chunk - 1 : chunk);
      for (std::size_t k = 0; k < take; ++k) emit(*n.args[i + k]);
      i += take;
      const std::size_t operands = take + pending;
      if (operands == 2)
        word(two, 0, n);
      else if (operands > 2)
        word(many, static_cast<std::uint32_t>(operands), n);
      depth_ -= static_cast<int>(operands) - 1;
      pending = 1;
    }
  }
  void push(int k) {
    depth_ += k;
    max_ = std::max(max_, depth_);
  }
  static std::uint64_t bits(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }
  std::uint32_t constant(double v) {
    auto it = index_.find(bits(v));
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(consts_.size());
    consts_.push_back(v);
    index_[bits(v)] = id;
    return id;
  }
  void word(Op op, std::uint32_t arg, const Node& n) {
    check(arg, n);
    code_.push_back(encode(op, arg));
  }
  // The binary operation `op` with the leaf `l` as its left or right argument.
  void operand(Op op, const Node& l, bool left, const Node& n) {
    const std::uint32_t arg = leaf_arg(l);
    check(arg, n);
    code_.push_back(encode_operand(op, l.op, left, arg));
  }
  std::uint32_t leaf_arg(const Node& l) {
    return l.op == PUSH_CONST ? constant(l.value) : l.op == PUSH_TIME ? 0 : l.index;
  }
  static void check(std::uint32_t arg, const Node& n) {
    if (arg > kMaxOperand)
      node_error(n, fmt::format("operand {} exceeds the bytecode limit {}", arg, kMaxOperand));
  }

  std::vector<double>& consts_;
  std::vector<std::uint32_t>& code_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  int depth_ = 0, max_ = 0;
};

void collect_vars(const Node& n, std::size_t n_alg, std::vector<const Node*>& reads) {
  if (n.op == PUSH_VAR && n.index < n_alg) reads.push_back(&n);
  for (const auto& a : n.args) collect_vars(*a, n_alg, reads);
}

}  // namespace

int emit_equation(const Node& expr, Op store, std::uint32_t target, std::vector<double>& consts,
                  std::vector<std::uint32_t>& code) {
  Emitter e(consts, code);
  e.emit(expr);
  e.store(store, target, expr);
  return e.max_depth();
}

std::vector<std::size_t> topological_order(const FlatModel& model) {
  const std::size_t n_alg = model.n_alg;
  std::vector<std::size_t> eq_of(n_alg, SIZE_MAX);
  for (std::size_t i = 0; i < model.equations.size(); ++i)
    if (!model.equations[i].derivative) eq_of[model.equations[i].target] = i;
  std::vector<std::vector<const Node*>> reads(n_alg);
  for (std::size_t v = 0; v < n_alg; ++v)
    if (eq_of[v] != SIZE_MAX) collect_vars(*model.equations[eq_of[v]].expr, n_alg, reads[v]);
  // Iterative depth-first search; colour 1 = on the path, 2 = done.
  std::vector<int> colour(n_alg, 0);
  std::vector<std::size_t> order;
  order.reserve(n_alg);
  std::vector<std::pair<std::size_t, std::size_t>> stack;
  for (std::size_t root = 0; root < n_alg; ++root) {
    if (colour[root] || eq_of[root] == SIZE_MAX) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next < reads[v].size()) {
        const std::size_t w = reads[v][next++]->index;
        if (colour[w] == 1) {
          // Report the cycle at the read that closes it, naming every variable on it.
          std::string path;
          std::size_t k = 0;
          while (stack[k].first != w) ++k;
          for (std::size_t j = k; j < stack.size(); ++j)
            path += model.var_names[stack[j].first] + " -> ";
          path += model.var_names[w];
          const std::size_t from = stack.back().first;
          node_error(*reads[from][stack.back().second - 1],
                     fmt::format("algebraic cycle: {} (algebraic variables may not depend on "
                                 "themselves; make one of them a state)",
                                 path));
        }
        if (colour[w] == 0 && eq_of[w] != SIZE_MAX) {
          colour[w] = 1;
          stack.push_back({w, 0});
        }
      } else {
        colour[v] = 2;
        order.push_back(eq_of[v]);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::string disassemble(const std::vector<std::uint32_t>& code, std::size_t begin,
                        std::size_t len) {
  std::string s;
  for (std::size_t i = begin; i < begin + len; ++i) {
    const Op op = op_of(code[i]);
    s += fmt::format("{:4}  {}", i - begin, op_name(op));
    if (word_has_operand(code[i]))
      s += fmt::format(" {}{} {}", operand_is_left(code[i]) ? "left " : "",
                       op_name(operand_leaf(code[i])), arg_of(code[i]));
    else if (is_leaf(op) || op == ADDN || op == MULN || op == POWI || word_pushes(code[i]) == 0)
      s += fmt::format(" {}", arg_of(code[i]));
    s += "\n";
  }
  return s;
}

namespace {

struct Task {
  std::vector<std::size_t> eqs;
  std::vector<std::uint32_t> code;
  std::vector<std::uint32_t> key;  // opcode sequence with leaf and store operands masked
};

std::uint32_t key_word(std::uint32_t w) {
  if (word_has_operand(w)) return w & ((1u << kArgShift) - 1);
  switch (op_of(w)) {
    case PUSH_CONST:
    case PUSH_STATE:
    case PUSH_VAR:
    case ASSIGN_ALG:
    case ASSIGN_DERIV:
      return encode(op_of(w), 0);
    default:
      return w;
  }
}

std::size_t hamming(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  std::size_t d = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) d += a[i] != b[i];
  return d;
}

// Length first, then identical sequences together, then a greedy nearest-neighbour walk by
// Hamming distance so that neighbouring warps differ in as few opcodes as possible.
void similarity_order(std::vector<std::size_t>& phase, const std::vector<Task>& tasks) {
  std::stable_sort(phase.begin(), phase.end(), [&](std::size_t a, std::size_t b) {
    if (tasks[a].code.size() != tasks[b].code.size())
      return tasks[a].code.size() < tasks[b].code.size();
    return tasks[a].key < tasks[b].key;
  });
  std::vector<std::size_t> out;
  out.reserve(phase.size());
  for (std::size_t begin = 0; begin < phase.size();) {
    std::size_t end = begin;
    while (end < phase.size() && tasks[phase[end]].code.size() == tasks[phase[begin]].code.size())
      ++end;
    // Runs of identical keys move as blocks; blocks are chained by distance.
    std::vector<std::pair<std::size_t, std::size_t>> blocks;
    for (std::size_t i = begin; i < end;) {
      std::size_t j = i;
      while (j < end && tasks[phase[j]].key == tasks[phase[i]].key) ++j;
      blocks.push_back({i, j});
      i = j;
    }
    std::vector<bool> used(blocks.size(), false);
    std::size_t cur = 0;
    for (std::size_t n = 0; n < blocks.size(); ++n) {
      used[cur] = true;
      for (std::size_t i = blocks[cur].first; i < blocks[cur].second; ++i) out.push_back(phase[i]);
      std::size_t best = SIZE_MAX, best_d = SIZE_MAX;
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        if (used[b]) continue;
        const std::size_t d =
            hamming(tasks[phase[blocks[cur].first]].key, tasks[phase[blocks[b].first]].key);
        if (d < best_d) best_d = d, best = b;
      }
      if (best == SIZE_MAX) break;
      cur = best;
    }
    begin = end;
  }
  phase = std::move(out);
}

// Bin of every task: tasks joined by a dependency (or sharing a merged stream) form a component;
// components in model order (cells of a network in instance order, so that the same equation of
// neighbouring cells shares a bin and unifies) are cut into `parts` contiguous runs of about equal
// instruction count.
// `comp` receives every task's component (the index of its first equation's root).
std::vector<std::size_t> partition(const std::vector<Task>& tasks,
                                   const std::vector<std::vector<std::size_t>>& phases,
                                   const std::vector<std::vector<std::size_t>>& deps,
                                   std::size_t n_eq, int parts, std::vector<std::size_t>& comp) {
  std::vector<std::size_t> bin(tasks.size(), 0);
  comp.assign(tasks.size(), 0);
  parts = std::max(parts, 1);
  std::vector<std::size_t> parent(n_eq);
  std::iota(parent.begin(), parent.end(), std::size_t(0));
  const std::function<std::size_t(std::size_t)> find = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const auto join = [&](std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the root is the first equation
  };
  std::size_t total = 0;
  for (const auto& phase : phases)
    for (std::size_t t : phase) {
      total += tasks[t].code.size();
      for (std::size_t e : tasks[t].eqs) {
        join(tasks[t].eqs[0], e);
        for (std::size_t d : deps[e]) join(e, d);
      }
    }
  for (const auto& phase : phases)
    for (std::size_t t : phase) comp[t] = find(tasks[t].eqs[0]);
  if (parts == 1) return bin;
  std::vector<std::size_t> weight(n_eq, 0);
  for (const auto& phase : phases)
    for (std::size_t t : phase) weight[find(tasks[t].eqs[0])] += tasks[t].code.size();
  std::vector<std::size_t> part_of(n_eq, 0);
  std::size_t before = 0;
  for (std::size_t root = 0; root < n_eq; ++root) {
    if (weight[root] == 0) continue;
    // The component goes where its midpoint falls.
    const double mid =
        (double(before) + 0.5 * double(weight[root])) / double(std::max<std::size_t>(total, 1));
    part_of[root] = std::min<std::size_t>(std::size_t(mid * parts), std::size_t(parts - 1));
    before += weight[root];
  }
  for (const auto& phase : phases)
    for (std::size_t t : phase) bin[t] = part_of[find(tasks[t].eqs[0])];
  return bin;
}

// The whole model as one stream in dependency order (the fused ensemble kernel's program). With
// `inline_single_use`, an algebraic variable read by exactly one expression is evaluated where it
// is read instead of being stored and loaded: the same operations in the same order, so the same
// values, with one store and one load fewer and no storage for it. If an expression would then
// need more than the evaluation stack, nothing is inlined. The variables the stream still uses
// are renumbered densely (Program::serial_vars), so a member's working set holds only those.
void build_serial(const FlatModel& model, const std::vector<NodePtr>& final_expr,
                  const std::vector<std::size_t>& eq_of, const std::vector<std::size_t>& order,
                  bool inline_single_use, Program& prog) {
  const std::size_t n_alg = model.n_alg;
  std::vector<int> uses(n_alg, 0);
  for (std::size_t i : order) {
    std::vector<const Node*> reads;
    collect_vars(*final_expr[i], n_alg, reads);
    for (const Node* r : reads) ++uses[r->index];
  }
  std::vector<bool> inlined(n_alg, false);
  if (inline_single_use)
    for (std::size_t i : order)
      if (!model.equations[i].derivative && uses[model.equations[i].target] == 1)
        inlined[model.equations[i].target] = true;
  std::function<NodePtr(const Node&)> expand = [&](const Node& n) -> NodePtr {
    if (n.op == PUSH_VAR && n.index < n_alg && inlined[n.index])
      return expand(*final_expr[eq_of[n.index]]);
    NodePtr c = n.copy_fields();
    for (const auto& a : n.args) c->args.push_back(expand(*a));
    return c;
  };
  std::vector<std::uint32_t> code;
  bool fits = true;
  for (std::size_t i : order) {
    const Equation& e = model.equations[i];
    if (!e.derivative && inlined[e.target]) continue;
    const NodePtr x = expand(*final_expr[i]);
    fits = fits && emit_equation(*x, e.derivative ? ASSIGN_DERIV : ASSIGN_ALG, e.target,
                                 prog.consts, code) <= kMaxStack;
  }
  if (!fits) {
    code.clear();
    for (std::size_t i : order) {
      const Equation& e = model.equations[i];
      emit_equation(*final_expr[i], e.derivative ? ASSIGN_DERIV : ASSIGN_ALG, e.target, prog.consts,
                    code);
    }
  }
  // Dense variable slots, in order of first use.
  std::unordered_map<std::uint32_t, std::uint32_t> slot;
  const auto renumber = [&](std::uint32_t v) {
    auto [it, fresh] = slot.try_emplace(v, static_cast<std::uint32_t>(prog.serial_vars.size()));
    if (fresh) prog.serial_vars.push_back(static_cast<std::int32_t>(v));
    return it->second;
  };
  for (std::uint32_t& w : code) {
    const Op op = op_of(w);
    if (op == PUSH_VAR || op == ASSIGN_ALG)
      w = encode(op, renumber(arg_of(w)));
    else if (word_has_operand(w) && operand_leaf(w) == PUSH_VAR)
      w = with_operand(w, PUSH_VAR, renumber(arg_of(w)));
  }
  prog.serial = std::move(code);
}

}  // namespace

Program compile(const FlatModel& model, const CompilerOptions& options) {
  Program prog;
  prog.pair_leaves = options.pair_leaves;
  prog.inline_single_use = options.inline_single_use;
  prog.place = options.place;
  prog.n_states = model.n_states();
  prog.n_vars = model.n_vars();
  prog.n_alg = model.n_alg;
  const std::vector<std::size_t> alg_order = topological_order(model);
  const std::size_t n_eq = model.equations.size();

  // Fold in dependency order; an algebraic variable that folds to a constant becomes a constant
  // of every expression reading it and leaves the schedule (its value is stored once).
  std::vector<std::size_t> all_order = alg_order;
  for (std::size_t i = 0; i < n_eq; ++i)
    if (model.equations[i].derivative) all_order.push_back(i);
  std::vector<NodePtr> final_expr(n_eq);
  std::vector<bool> constant(n_eq, false);
  std::vector<double> var_value(model.n_alg, 0.0);
  std::vector<bool> var_const(model.n_alg, false);
  std::function<void(Node&)> substitute = [&](Node& n) {
    if (n.op == PUSH_VAR && n.index < model.n_alg && var_const[n.index]) {
      n.op = PUSH_CONST;
      n.value = var_value[n.index];
      return;
    }
    for (auto& a : n.args) substitute(*a);
  };
  for (std::size_t i : all_order) {
    const Equation& e = model.equations[i];
    NodePtr folded = e.expr->clone();
    if (options.fold) substitute(*folded);
    folded = fold(std::move(folded));  // rejects division by a constant zero either way
    if (options.fold && !e.derivative && folded->is_const()) {
      constant[i] = true;
      var_const[e.target] = true;
      var_value[e.target] = folded->value;
      prog.constant_vars.push_back({e.target, folded->value});
    }
    final_expr[i] = options.fold ? std::move(folded) : e.expr->clone();
  }

  // Bytecode per equation.
  std::vector<std::vector<std::uint32_t>> eq_code(n_eq);
  for (std::size_t i = 0; i < n_eq; ++i) {
    if (constant[i]) continue;
    const Equation& e = model.equations[i];
    const int depth = emit_equation(*final_expr[i], e.derivative ? ASSIGN_DERIV : ASSIGN_ALG,
                                    e.target, prog.consts, eq_code[i]);
    if (depth > kMaxStack) {
      const std::string what =
          e.derivative ? "d(" + model.state_names[e.target] + ")/dt" : model.var_names[e.target];
      node_error(*e.expr,
                 fmt::format("the expression for {} needs an evaluation stack of {} values, more "
                             "than the {} available: split it into algebraic variables",
                             what, depth, kMaxStack));
    }
    prog.max_stack = std::max(prog.max_stack, depth);
    prog.n_instructions += eq_code[i].size();
    ++prog.n_equations;
  }

  // Level scheduling: an equation runs one phase after the latest equation it reads.
  std::vector<std::size_t> eq_of(model.n_alg, SIZE_MAX);
  for (std::size_t i = 0; i < n_eq; ++i)
    if (!model.equations[i].derivative) eq_of[model.equations[i].target] = i;
  std::vector<std::vector<std::size_t>> deps(n_eq);
  for (std::size_t i = 0; i < n_eq; ++i) {
    std::vector<const Node*> reads;
    collect_vars(*final_expr[i], model.n_alg, reads);
    for (const Node* r : reads)
      if (!constant[eq_of[r->index]]) deps[i].push_back(eq_of[r->index]);
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
  }
  all_order.erase(std::remove_if(all_order.begin(), all_order.end(),
                                 [&](std::size_t i) { return constant[i]; }),
                  all_order.end());
  std::vector<std::size_t> level(n_eq, 0);
  std::size_t n_levels = 0;
  for (std::size_t i : all_order) {
    for (std::size_t d : deps[i]) level[i] = std::max(level[i], level[d] + 1);
    n_levels = std::max(n_levels, level[i] + 1);
  }
  prog.n_levels = n_levels;

  std::vector<Task> tasks(n_eq);
  std::vector<std::vector<std::size_t>> phases(n_levels);
  std::vector<std::size_t> task_of(n_eq);
  for (std::size_t i = 0; i < n_eq; ++i) {
    tasks[i].eqs = {i};
    tasks[i].code = eq_code[i];
    task_of[i] = i;
  }
  for (std::size_t i : all_order) phases[level[i]].push_back(i);

  if (options.merge) {
    // Phases in order: a task whose latest dependencies lie in phase q joins the task it reads
    // there when that is the only one (appending its stream, within the length cap); otherwise
    // it moves up to phase q + 1, which merging upstream may have made earlier than its level.
    std::vector<std::size_t> phase_of(n_eq);
    for (std::size_t p = 0; p < phases.size(); ++p)
      for (std::size_t t : phases[p]) phase_of[t] = p;
    std::vector<std::size_t> longest(phases.size(), 0);
    for (std::size_t p = 0; p < phases.size(); ++p)
      for (std::size_t t : phases[p]) longest[p] = std::max(longest[p], tasks[t].code.size());
    for (std::size_t p = 1; p < phases.size(); ++p) {
      const std::vector<std::size_t> current = std::move(phases[p]);
      phases[p].clear();
      for (std::size_t b : current) {
        std::size_t q = 0;
        bool any = false;
        for (std::size_t e : tasks[b].eqs)
          for (std::size_t d : deps[e]) q = std::max(q, phase_of[task_of[d]]), any = true;
        std::set<std::size_t> in_q;
        if (any)
          for (std::size_t e : tasks[b].eqs)
            for (std::size_t d : deps[e])
              if (phase_of[task_of[d]] == q) in_q.insert(task_of[d]);
        const std::size_t cap = std::max<std::size_t>(longest[q], options.merge_max_length);
        const bool derivatives_only =
            std::all_of(tasks[b].eqs.begin(), tasks[b].eqs.end(),
                        [&](std::size_t e) { return model.equations[e].derivative; });
        const bool sink = options.sink_derivatives && any && derivatives_only && q + 1 < p &&
                          !phases[q + 1].empty();
        if (any && !sink && in_q.size() == 1 &&
            tasks[*in_q.begin()].code.size() + tasks[b].code.size() <= cap) {
          const std::size_t host = *in_q.begin();
          Task& a = tasks[host];
          a.code.insert(a.code.end(), tasks[b].code.begin(), tasks[b].code.end());
          for (std::size_t e : tasks[b].eqs) {
            a.eqs.push_back(e);
            task_of[e] = host;
          }
          tasks[b].eqs.clear();
          tasks[b].code.clear();
        } else {
          const std::size_t to = any ? q + 1 : 0;
          phases[to].push_back(b);
          phase_of[b] = to;
        }
      }
    }
    phases.erase(
        std::remove_if(phases.begin(), phases.end(), [](const auto& ph) { return ph.empty(); }),
        phases.end());
  }

  for (auto& t : tasks) {
    t.key.resize(t.code.size());
    std::transform(t.code.begin(), t.code.end(), t.key.begin(), key_word);
  }

  int parts = options.partitions;
  if (parts == 0) {
    // Auto: bins that each keep about kCopiesPerBin copies of the most repeated equation (the
    // same target name in every instance of a group), so a network of 100 cells gets 25 bins of
    // 4 cells. A team's step is the latency of its longest streams, not its throughput, so
    // teams of fewer cells on more multiprocessors run faster although their warps are mostly
    // idle lanes (measured on GPUs with LR-Line and the Rybak CPG, see docs/dev/decisions.md).
    constexpr std::size_t kCopiesPerBin = 4;
    std::map<std::string, std::size_t> copies;
    std::size_t most = 1;
    for (std::size_t i : all_order) {
      const Equation& e = model.equations[i];
      std::string name = e.derivative ? model.state_names[e.target] : model.var_names[e.target];
      const std::size_t open = name.find('['), close = name.find(']');
      if (open != std::string::npos && close != std::string::npos && close > open)
        name.erase(open, close - open + 1);
      most = std::max(most, ++copies[name]);
    }
    parts = static_cast<int>((most + kCopiesPerBin - 1) / kCopiesPerBin);
  }
  std::vector<std::size_t> comp;
  const std::vector<std::size_t> bin = partition(tasks, phases, deps, n_eq, parts, comp);
  prog.n_bins = static_cast<std::size_t>(std::max(parts, 1));
  std::vector<std::size_t> serial_order;
  for (auto& all : phases) {
    prog.n_tasks += all.size();
    for (std::size_t t : all)
      serial_order.insert(serial_order.end(), tasks[t].eqs.begin(), tasks[t].eqs.end());
  }
  // Warps of every phase, bin by bin (a task may sit in several bins: halo_program).
  const auto form_groups = [&](Program& out, const std::vector<std::vector<char>>& in_bin) {
    out.phase_begin.push_back(0);
    for (auto& all : phases) {
      // Split into warps of kWarp lanes, bin by bin; with padding a warp never mixes opcode
      // sequences.
      std::vector<std::vector<std::size_t>> warps;
      for (std::size_t b = 0; b < out.n_bins; ++b) {
        out.bin_begin.push_back(static_cast<std::int32_t>(out.n_groups() + warps.size()));
        std::vector<std::size_t> phase;
        for (std::size_t t : all)
          if (in_bin[b][t]) phase.push_back(t);
        if (options.reorder) similarity_order(phase, tasks);
        const std::size_t first = warps.size();
        for (std::size_t t : phase) {
          if (warps.size() == first || warps.back().size() == static_cast<std::size_t>(kWarp) ||
              (options.pad && tasks[warps.back().front()].key != tasks[t].key))
            warps.emplace_back();
          warps.back().push_back(t);
        }
      }
      for (const auto& w : warps) {
        const std::size_t g = out.n_groups();
        out.groups.resize(out.groups.size() + kGroupFields, 0);
        out.lane_code.resize(out.lane_code.size() + kWarp, 0);
        out.lane_len.resize(out.lane_len.size() + kWarp, 0);
        std::int32_t* rec = &out.groups[g * kGroupFields];
        rec[G_COUNT] = static_cast<std::int32_t>(w.size());
        const bool same = std::all_of(
            w.begin(), w.end(), [&](std::size_t t) { return tasks[t].key == tasks[w[0]].key; });
        if (options.unify && same) {
          rec[G_KIND] = GROUP_UNIFIED;
          rec[G_CODE] = static_cast<std::int32_t>(out.code.size());
          rec[G_LEN] = static_cast<std::int32_t>(tasks[w[0]].code.size());
          rec[G_ITAB] = static_cast<std::int32_t>(out.itab.size() / kWarp);
          rec[G_CTAB] = static_cast<std::int32_t>(out.ctab.size() / kWarp);
          std::uint32_t islots = 0, cslots = 0;
          for (std::size_t i = 0; i < tasks[w[0]].code.size(); ++i) {
            const std::uint32_t w0 = tasks[w[0]].code[i];
            const bool uniform = std::all_of(w.begin(), w.end(),
                                             [&](std::size_t t) { return tasks[t].code[i] == w0; });
            if (uniform) {
              out.code.push_back(w0);
              continue;
            }
            // What differs between lanes: a leaf, an operation's operand, or a store.
            const bool operand = word_has_operand(w0);
            const Op op = operand ? operand_leaf(w0) : op_of(w0);
            // Idle lanes repeat lane 0's operand: they never run, but the table stays dense.
            const auto lane_arg = [&](int l) {
              return arg_of(tasks[w[static_cast<std::size_t>(l) < w.size() ? l : 0]].code[i]);
            };
            const auto put = [&](Op ind, std::uint32_t slot) {
              out.code.push_back(operand ? with_operand(w0, ind, slot) : encode(ind, slot));
            };
            if (op == PUSH_CONST) {
              for (int l = 0; l < kWarp; ++l) out.ctab.push_back(out.consts[lane_arg(l)]);
              put(CONST_IND, cslots++);
            } else {
              for (int l = 0; l < kWarp; ++l)
                out.itab.push_back(static_cast<std::int32_t>(lane_arg(l)));
              const Op ind = op == PUSH_STATE   ? STATE_IND
                             : op == PUSH_VAR   ? VAR_IND
                             : op == ASSIGN_ALG ? ASSIGN_ALG_IND
                                                : ASSIGN_DERIV_IND;
              put(ind, islots++);
            }
          }
        } else {
          rec[G_KIND] = GROUP_PER_LANE;
          for (std::size_t l = 0; l < w.size(); ++l) {
            out.lane_code[g * kWarp + l] = static_cast<std::int32_t>(out.code.size());
            out.lane_len[g * kWarp + l] = static_cast<std::int32_t>(tasks[w[l]].code.size());
            out.code.insert(out.code.end(), tasks[w[l]].code.begin(), tasks[w[l]].code.end());
          }
        }
      }
      out.phase_begin.push_back(static_cast<std::int32_t>(out.n_groups()));
    }
    out.bin_begin.push_back(static_cast<std::int32_t>(out.n_groups()));
  };
  std::vector<std::vector<char>> in_bin(prog.n_bins, std::vector<char>(tasks.size(), 0));
  for (const auto& all : phases)
    for (std::size_t t : all) in_bin[bin[t]][t] = 1;
  form_groups(prog, in_bin);
  if (options.halo > 0 && prog.n_bins > 1) {
    // Halo: bin b also evaluates the components within `halo` rings of state reads around its
    // own (a ring adds the components that write a state the set reads). Its own states then
    // stay exact for halo + 1 sweeps without seeing any other bin: ring r goes stale one sweep
    // after ring r + 1 does. A set that reads nothing outside itself stays exact for ever.
    std::vector<std::size_t> writer(prog.n_states, SIZE_MAX);  // component of d(state)/dt
    prog.state_bin.assign(prog.n_states, -1);
    for (const auto& all : phases)
      for (std::size_t t : all)
        for (std::uint32_t w : tasks[t].code)
          if (op_of(w) == ASSIGN_DERIV) {
            writer[arg_of(w)] = comp[t];
            prog.state_bin[arg_of(w)] = static_cast<std::int32_t>(bin[t]);
          }
    std::vector<std::vector<std::size_t>> reads(n_eq);  // components a component reads from
    for (const auto& all : phases)
      for (std::size_t t : all)
        for (std::uint32_t w : tasks[t].code) {
          const bool operand = word_has_operand(w);
          if ((operand ? operand_leaf(w) : op_of(w)) != PUSH_STATE) continue;
          const std::size_t from = writer[arg_of(w)];
          if (from != SIZE_MAX && from != comp[t]) reads[comp[t]].push_back(from);
        }
    for (auto& r : reads) {
      std::sort(r.begin(), r.end());
      r.erase(std::unique(r.begin(), r.end()), r.end());
    }
    // Ring by ring for every bin at once: a program per halo width, up to the first that closes.
    std::vector<std::vector<char>> in(prog.n_bins, std::vector<char>(n_eq, 0));
    std::vector<std::vector<std::size_t>> set(prog.n_bins), frontier(prog.n_bins);
    for (const auto& all : phases)
      for (std::size_t t : all)
        if (!in[bin[t]][comp[t]]) {
          in[bin[t]][comp[t]] = 1;
          set[bin[t]].push_back(comp[t]);
          frontier[bin[t]].push_back(comp[t]);
        }
    for (int h = 1; h <= options.halo; ++h) {
      bool closed = true;
      std::vector<std::vector<char>> in_halo(prog.n_bins, std::vector<char>(tasks.size(), 0));
      for (std::size_t b = 0; b < prog.n_bins; ++b) {
        std::vector<std::size_t> next;
        for (std::size_t c : frontier[b])
          for (std::size_t from : reads[c])
            if (!in[b][from]) {
              in[b][from] = 1;
              next.push_back(from);
            }
        set[b].insert(set[b].end(), next.begin(), next.end());
        frontier[b] = std::move(next);
        for (std::size_t c : set[b])
          for (std::size_t from : reads[c]) closed = closed && in[b][from];
        for (const auto& all : phases)
          for (std::size_t t : all) in_halo[b][t] = in[b][comp[t]];
      }
      Program halo;
      halo.n_states = prog.n_states;
      halo.n_vars = prog.n_vars;
      halo.n_alg = prog.n_alg;
      halo.consts = prog.consts;
      halo.n_bins = prog.n_bins;
      halo.pair_leaves = prog.pair_leaves;
      halo.inline_single_use = prog.inline_single_use;
      halo.place = prog.place;
      form_groups(halo, in_halo);
      halo.halo = h;
      halo.halo_sweeps = closed ? 0 : h + 1;
      prog.halo_programs.push_back(std::make_shared<const Program>(std::move(halo)));
      if (closed) break;
    }
  }
  build_serial(model, final_expr, eq_of, serial_order, options.inline_single_use, prog);
  return prog;
}

}  // namespace hayate::ode
