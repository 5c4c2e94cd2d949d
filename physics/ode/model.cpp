#include "ode/model.hpp"

#include "config/error.hpp"
#include "config/schema.hpp"
#include "io/input_file.hpp"
#include "util/random.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace hayate::ode {

bool FlatModel::find(const std::string& name, bool& is_state, std::uint32_t& index) const {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == name) return is_state = true, index = static_cast<std::uint32_t>(i), true;
  for (std::size_t i = 0; i < var_names.size(); ++i)
    if (var_names[i] == name) return is_state = false, index = static_cast<std::uint32_t>(i), true;
  return false;
}

namespace {

using core::InputError;
using core::SourceLocation;

// Bounds on what one model file may expand to once instances and connections are flattened;
// far above the shipped networks (wb_net: about 1e5 nodes), far below what exhausts memory.
constexpr std::size_t kMaxModelNodes = std::size_t(1) << 21;  // expression nodes, all equations
constexpr std::size_t kMaxInstances = std::size_t(1) << 20;   // module instances, all groups
constexpr std::size_t kMaxEquations = std::size_t(1) << 20;   // states and variables, all groups
constexpr std::size_t kMaxPairs = std::size_t(1) << 24;       // candidate pairs of a connection
// Levels of an expression once parameters are substituted into it: the passes that walk it
// recurse this deep.
constexpr int kMaxResolvedHeight = 2 * kMaxExprHeight;

// Terms of the sum at `n` that compute something; a + b + c may arrive as (a + b) + c. Terms
// that are bare reads (I_Na + I_K + ... of a cell's currents) cost a word or half a word each,
// and cutting them only adds a phase between the currents and the sum, so they do not count.
std::size_t computed_terms(const Node& n) {
  if (n.op != ADD || n.args.empty()) return 0;
  std::size_t count =
      n.args[0]->op == ADD ? computed_terms(*n.args[0]) : std::size_t(!n.args[0]->args.empty());
  for (std::size_t i = 1; i < n.args.size(); ++i) count += !n.args[i]->args.empty();
  return count;
}

// Cuts every sum with more than `max_terms` computed terms into partial sums, each a new algebraic
// variable named after the equation that held it ("cell[3].I_syn.part0", "cell[3].V.ddt.part0"),
// and sums the partial sums where the long sum was. A sum of n terms is one chain of n dependent
// operations in one lane; its parts are independent equations that the level schedule runs
// side by side in other lanes (wb_net's 99-synapse input). The new variables come after the
// model's algebraic variables and before its swept parameters, whose indices move up. Sums run
// left to right inside each part and over the parts, so every evaluator of the model sees the
// same order.
void split_long_sums(FlatModel& m, int max_terms) {
  if (max_terms < 2) return;
  const std::uint32_t n_alg = static_cast<std::uint32_t>(m.n_alg);
  const std::uint32_t n_vars = static_cast<std::uint32_t>(m.n_vars());
  std::vector<Equation> parts;  // provisional targets n_vars, n_vars + 1, ...
  std::vector<std::string> names;
  std::function<void(NodePtr&, const std::string&, int&)> split =
      [&](NodePtr& n, const std::string& owner, int& serial) {
        // a + b + c may arrive as (a + b) + c: the leading operand's terms come first, in order.
        while (n->op == ADD && !n->args.empty() && n->args[0]->op == ADD) {
          std::vector<NodePtr> flat = std::move(n->args[0]->args);
          for (std::size_t i = 1; i < n->args.size(); ++i) flat.push_back(std::move(n->args[i]));
          n->args = std::move(flat);
        }
        for (auto& a : n->args) split(a, owner, serial);
        if (n->op != ADD) return;
        const std::size_t count = n->args.size();
        if (computed_terms(*n) <= std::size_t(max_terms)) return;
        const std::size_t k = (count + max_terms - 1) / max_terms;  // parts of balanced sizes
        std::vector<NodePtr> sums;
        std::size_t begin = 0;
        for (std::size_t p = 0; p < k; ++p) {
          const std::size_t end = count * (p + 1) / k;
          std::vector<NodePtr> chunk;
          for (std::size_t i = begin; i < end; ++i) chunk.push_back(std::move(n->args[i]));
          const int pos = chunk.front()->pos;
          const ExprSource* src = chunk.front()->src;
          NodePtr part = chunk.size() == 1 ? std::move(chunk.front())
                                           : make_op(ADD, std::move(chunk), pos, src);
          const auto target = static_cast<std::uint32_t>(n_vars + parts.size());
          names.push_back(fmt::format("{}.part{}", owner, serial++));
          parts.push_back(Equation{false, target, std::move(part)});
          NodePtr read = make_const(0, pos, src);
          read->op = PUSH_VAR;
          read->index = target;
          sums.push_back(std::move(read));
          begin = end;
        }
        n->args = std::move(sums);
      };
  std::vector<std::size_t> whole;  // algebraic equations that were one long sum
  for (std::size_t i = 0; i < m.equations.size(); ++i) {
    Equation& e = m.equations[i];
    int serial = 0;
    split(e.expr, e.derivative ? m.state_names[e.target] + ".ddt" : m.var_names[e.target], serial);
    if (!e.derivative && serial > 0 && e.expr->op == ADD &&
        std::all_of(e.expr->args.begin(), e.expr->args.end(),
                    [&](const NodePtr& a) { return a->op == PUSH_VAR && a->index >= n_vars; }))
      whole.push_back(i);
  }
  if (parts.empty()) return;
  const auto added = static_cast<std::uint32_t>(parts.size());
  // Parts take the indices after the algebraic variables; swept parameters move up.
  std::function<void(Node&)> renumber = [&](Node& n) {
    if (n.op == PUSH_VAR && n.index >= n_alg)
      n.index = n.index >= n_vars ? n_alg + (n.index - n_vars) : n.index + added;
    for (auto& a : n.args) renumber(*a);
  };
  for (auto& e : m.equations) renumber(*e.expr);
  for (auto& e : parts) {
    renumber(*e.expr);
    e.target = n_alg + (e.target - n_vars);
  }
  m.var_names.insert(m.var_names.begin() + n_alg, names.begin(), names.end());
  m.n_alg += added;
  // Algebraic equations by target, then the derivatives, as the loader orders them (the
  // equations in `whole` keep their places).
  const auto first_derivative = std::find_if(m.equations.begin(), m.equations.end(),
                                             [](const Equation& e) { return e.derivative; });
  m.equations.insert(first_derivative, std::make_move_iterator(parts.begin()),
                     std::make_move_iterator(parts.end()));
  // A variable that was one long sum (a connection input) is read where it was read as the sum
  // of its parts, so its readers stay at their level of the schedule: a reader of the variable
  // itself would wait a level for it, and a phase merge would stop there. The variable keeps
  // its equation for output; with the same operations in the same order it has the same value.
  std::vector<int> readers(m.n_alg, 0);
  std::vector<std::vector<std::uint32_t>> eq_reads(m.equations.size());
  std::function<void(const Node&, std::vector<std::uint32_t>&)> reads =
      [&](const Node& n, std::vector<std::uint32_t>& seen) {
        if (n.op == PUSH_VAR && n.index < m.n_alg) seen.push_back(n.index);
        for (const auto& a : n.args) reads(*a, seen);
      };
  for (std::size_t i = 0; i < m.equations.size(); ++i) {
    std::vector<std::uint32_t>& seen = eq_reads[i];
    reads(*m.equations[i].expr, seen);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (std::uint32_t v : seen) ++readers[v];
  }
  std::vector<const Equation*> inlined(m.n_alg, nullptr);  // by target: read as its parts
  for (std::size_t i : whole)
    if (readers[m.equations[i].target] <= 2)  // not copied into many readers
      inlined[m.equations[i].target] = &m.equations[i];
  // Replaces every read of a variable with an entry in `table` by a copy of its expression (which
  // may read another such variable).
  const auto read_in_place = [&](const std::vector<const Equation*>& table) {
    std::function<void(NodePtr&)> visit = [&](NodePtr& n) {
      if (n->op == PUSH_VAR && n->index < m.n_alg && table[n->index])
        n = table[n->index]->expr->clone();
      for (auto& a : n->args) visit(a);
    };
    for (auto& e : m.equations) visit(e.expr);
  };
  read_in_place(inlined);
  // One step further: an algebraic variable that read such a sum and has one reader (Rybak
  // CPG's I_SynE = (g_drive + G_E)*(V - E_SynE), read by dV/dt) is read in place too. It would
  // otherwise wait a level for the parts, and a reader that also reads other tasks of that
  // level (I_SynI) one more. It keeps its equation, as the sum does.
  std::vector<const Equation*> carried(m.n_alg, nullptr);
  for (std::size_t i = 0; i < m.equations.size(); ++i) {
    const Equation& e = m.equations[i];
    if (e.derivative || inlined[e.target] || readers[e.target] != 1) continue;
    if (std::any_of(eq_reads[i].begin(), eq_reads[i].end(),
                    [&](std::uint32_t v) { return inlined[v] != nullptr; }))
      carried[e.target] = &e;
  }
  read_in_place(carried);
}

struct ModuleDef {
  std::string name;
  YAML::Node node;
  std::vector<std::string> params, inputs, algs, states;
  std::map<std::string, YAML::Node> param_node, alg_node, ddt_node, init_node, input_node;
  std::map<std::string, NodePtr> param_expr, alg_expr, ddt_expr;
  std::map<std::string, double> param_value;  // parameters given as numbers
  std::map<std::string, double> init_value;

  std::vector<std::string> all_names() const {
    std::vector<std::string> v = params;
    v.insert(v.end(), inputs.begin(), inputs.end());
    v.insert(v.end(), algs.begin(), algs.end());
    v.insert(v.end(), states.begin(), states.end());
    return v;
  }
};

struct Instance {
  const ModuleDef* mod = nullptr;
  std::string group, prefix;  // prefix: "cell" or "cell[3]"
  int index = 0, count = 1;
  std::map<std::string, double> param_value;  // per-instance overrides
  std::map<std::string, std::uint32_t> state_index, var_index;
  std::map<std::string, double> init_value;
};

struct Group {
  std::string name;
  const ModuleDef* mod = nullptr;
  std::size_t first = 0, count = 0;  // instances [first, first + count)
  YAML::Node node;
};

class Loader {
 public:
  Loader(std::string file, const std::string& text, const ModelOptions& options, FlatModel& out)
      : file_(std::move(file)), options_(options), out_(out) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  void load(const YAML::Node& root) {
    if (!root.IsMap())
      fail(root,
           "a model file is a mapping with 'modules' (and optionally 'network', 'connections')");
    const Context ctx(*this, root);
    unique_keys(root);
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (key != "modules" && key != "network" && key != "connections" && key != "description")
        fail(it->first,
             fmt::format(
                 "unknown model key '{}' (expected modules, network, connections, description)",
                 key));
    }
    const YAML::Node modules = root["modules"];
    if (!modules || !modules.IsMap() || modules.size() == 0)
      fail(modules ? modules : root,
           "'modules' must be a non-empty mapping of module names to definitions");
    unique_keys(modules);
    for (auto it = modules.begin(); it != modules.end(); ++it) parse_module(it->first, it->second);
    build_instances(root["network"], modules);
    check_swept();
    number_everything();
    std::vector<NodePtr> alg_eq(out_.n_alg);
    for (auto& inst : instances_) instance_equations(inst, alg_eq);
    connections(root["connections"], alg_eq);
    for (std::size_t v = 0; v < out_.n_alg; ++v) {
      if (!alg_eq[v]) continue;
      out_.equations.push_back(
          Equation{false, static_cast<std::uint32_t>(v), std::move(alg_eq[v])});
    }
    std::sort(out_.equations.begin(), out_.equations.end(),
              [](const Equation& a, const Equation& b) { return a.target < b.target; });
    for (auto& d : derivative_eq_) out_.equations.push_back(std::move(d));
    split_long_sums(out_, options_.split_sums);
  }

 private:
  // A key that is absent has no position of its own: the mapping being read (context_) stands
  // in for it, so every message has a line and column.
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const {
    YAML::Mark m = YAML::Mark::null_mark();
    if (n.IsDefined()) m = n.Mark();
    if (m.line < 0 && context_.IsDefined()) m = context_.Mark();
    throw InputError(
        SourceLocation{file_, m.line >= 0 ? m.line + 1 : 1, m.line >= 0 ? m.column + 1 : 1},
        message);
  }

  // Sets the mapping that stands in for the position of its absent keys while it is read.
  struct Context {
    Context(const Loader& loader, const YAML::Node& n) : loader_(loader), saved_(loader.context_) {
      loader_.context_.reset(n);
    }
    ~Context() { loader_.context_.reset(saved_); }
    const Loader& loader_;
    YAML::Node saved_;
  };

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n) fail(n, fmt::format("missing {}", what));
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a single value", what));
    return n.Scalar();
  }

  // yaml-cpp keeps both entries of a key given twice and lookups see the first: every mapping
  // the loader reads is checked, so a repeated key is an error at its second occurrence.
  void unique_keys(const YAML::Node& map) const {
    if (!map.IsMap()) return;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, "expected a plain name as a key");
      if (!seen.insert(it->first.Scalar()).second)
        fail(it->first, fmt::format("duplicate key '{}'", it->first.Scalar()));
    }
  }

  // A seed: an integer in [0, 2^53] (a double holds it exactly).
  std::uint64_t seed(const YAML::Node& n, const std::string& what) const {
    const double v = number(n, what);
    if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v))
      fail(n, fmt::format("{} must be an integer in [0, 2^53], got '{}'", what, n.Scalar()));
    return static_cast<std::uint64_t>(v);
  }

  static bool parse_number(const std::string& s, double& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v) &&
           s.find_first_of("xXnNiI") == std::string::npos;
  }

  double number(const YAML::Node& n, const std::string& what) const {
    double v = 0;
    if (!parse_number(scalar(n, what), v))
      fail(n, fmt::format("{} must be a number, got '{}'", what, n.Scalar()));
    return v;
  }

  // The expression text of a scalar and the file position of its first character.
  ExprSource* source(const YAML::Node& n, const std::string& owner) {
    if (!n) fail(n, fmt::format("{}: missing expression", owner));
    if (!n.IsScalar()) fail(n, fmt::format("{}: expected an expression (a string)", owner));
    auto src = std::make_unique<ExprSource>();
    src->file = file_;
    src->text = n.Scalar();
    src->owner = owner;
    const YAML::Mark m = n.Mark();
    src->line = m.line + 1;
    src->column = m.column + 1;
    if (m.line >= 0 && m.line < static_cast<int>(lines_.size())) {
      const std::string& line = lines_[m.line];
      const char c = m.column < static_cast<int>(line.size()) ? line[m.column] : ' ';
      if (c == '"' || c == '\'') {
        src->column += 1;  // the value starts after the quote
      } else if (c == '|' || c == '>') {
        // Block scalar: the text starts on the next line at its indentation.
        if (m.line + 1 < static_cast<int>(lines_.size())) {
          const std::string& next = lines_[m.line + 1];
          src->line += 1;
          src->column = static_cast<int>(next.find_first_not_of(' ')) + 1;
        }
      }
    }
    ExprSource* raw = src.get();
    out_.sources.push_back(std::move(src));
    return raw;
  }

  // Names of modules, instance groups, parameters, states and variables make up the full names
  // ("cell[3].V") that inputs and outputs use: letters, digits and '_' only.
  void valid_name(const YAML::Node& key, const std::string& name) const {
    const bool ok =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
        std::all_of(name.begin(), name.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!ok)
      fail(key,
           fmt::format("'{}' is not a valid name (letters, digits, '_'; not starting with a digit)",
                       name));
  }

  void check_name(const YAML::Node& key, const std::string& name, std::set<std::string>& used,
                  const std::string& module) const {
    valid_name(key, name);
    if (name == "t" || name == "pi" || name == "pre" || name == "post" || name == "n_pre")
      fail(key, fmt::format("'{}' is a reserved name", name));
    if (!used.insert(name).second)
      fail(key, fmt::format("'{}' is defined twice in module '{}'", name, module));
  }

  void parse_module(const YAML::Node& key, const YAML::Node& def) {
    auto mod = std::make_unique<ModuleDef>();
    mod->name = key.Scalar();
    valid_name(key, mod->name);
    mod->node = key;
    if (!def.IsMap())
      fail(def,
           fmt::format("module '{}' must be a mapping (parameters, inputs, algebraics, states)",
                       mod->name));
    const Context ctx(*this, def);
    unique_keys(def);
    std::set<std::string> used;
    for (auto it = def.begin(); it != def.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node v = it->second;
      if (k == "parameters") {
        if (!v.IsMap()) fail(v, "'parameters' must be a mapping name: value");
        for (auto p = v.begin(); p != v.end(); ++p) {
          const std::string name = p->first.Scalar();
          check_name(p->first, name, used, mod->name);
          mod->params.push_back(name);
          mod->param_node[name] = p->second;
          double x = 0;
          if (parse_number(scalar(p->second, "parameter '" + name + "'"), x))
            mod->param_value[name] = x;
          else
            mod->param_expr[name] = parse_expression(*source(p->second, mod->name + "." + name));
        }
      } else if (k == "inputs") {
        if (!v.IsSequence()) fail(v, "'inputs' must be a list of names");
        for (const YAML::Node n : v) {
          const std::string name = scalar(n, "an input name");
          check_name(n, name, used, mod->name);
          mod->inputs.push_back(name);
          mod->input_node[name] = n;
        }
      } else if (k == "algebraics") {
        if (!v.IsMap()) fail(v, "'algebraics' must be a mapping name: expression");
        for (auto p = v.begin(); p != v.end(); ++p) {
          const std::string name = p->first.Scalar();
          check_name(p->first, name, used, mod->name);
          mod->algs.push_back(name);
          mod->alg_node[name] = p->first;
          mod->alg_expr[name] = parse_expression(*source(p->second, mod->name + "." + name));
        }
      } else if (k == "states") {
        if (!v.IsMap()) fail(v, "'states' must be a mapping name: {init: value, ddt: expression}");
        for (auto p = v.begin(); p != v.end(); ++p) {
          const std::string name = p->first.Scalar();
          check_name(p->first, name, used, mod->name);
          const YAML::Node s = p->second;
          unique_keys(s);
          if (!s.IsMap() || !s["init"] || !s["ddt"])
            fail(s, fmt::format(
                        "state '{}' needs 'init' (initial value) and 'ddt' (its time derivative)",
                        name));
          for (auto q = s.begin(); q != s.end(); ++q)
            if (q->first.Scalar() != "init" && q->first.Scalar() != "ddt")
              fail(q->first, fmt::format("unknown key '{}' in state '{}' (expected init, ddt)",
                                         q->first.Scalar(), name));
          mod->states.push_back(name);
          mod->init_value[name] = number(s["init"], "the initial value of '" + name + "'");
          mod->ddt_node[name] = s["ddt"];
          mod->ddt_expr[name] =
              parse_expression(*source(s["ddt"], "d(" + mod->name + "." + name + ")/dt"));
        }
      } else if (k != "description") {
        fail(it->first, fmt::format("unknown key '{}' in module '{}' (expected parameters, inputs, "
                                    "algebraics, states, description)",
                                    k, mod->name));
      }
    }
    if (mod->states.empty()) fail(key, fmt::format("module '{}' has no states", mod->name));
    modules_[mod->name] = std::move(mod);
  }

  // Per-instance values: a number, a list (one per instance), an expression in i (0-based
  // index) and n (count), or {uniform: [lo, hi], seed: s}.
  std::vector<double> per_instance(const YAML::Node& spec, int count, const std::string& what) {
    std::vector<double> v(count);
    if (spec.IsSequence()) {
      if (static_cast<int>(spec.size()) != count)
        fail(spec,
             fmt::format("{}: the list has {} values for {} instances", what, spec.size(), count));
      for (int i = 0; i < count; ++i) v[i] = number(spec[i], what);
      return v;
    }
    if (spec.IsMap()) {
      unique_keys(spec);
      if (!spec["uniform"] || !spec["uniform"].IsSequence() || spec["uniform"].size() != 2)
        fail(spec, fmt::format("{}: expected {{uniform: [lo, hi], seed: s}}", what));
      const double lo = number(spec["uniform"][0], what), hi = number(spec["uniform"][1], what);
      const std::uint64_t s = spec["seed"] ? seed(spec["seed"], "'seed'") : 1;
      const std::uint64_t stream = std::hash<std::string>{}(what);
      for (int i = 0; i < count; ++i) v[i] = lo + (hi - lo) * util::uniform01(s, stream, i);
      return v;
    }
    double x = 0;
    if (parse_number(scalar(spec, what), x)) {
      std::fill(v.begin(), v.end(), x);
      return v;
    }
    const ExprSource* src = source(spec, what);
    const NodePtr expr = parse_expression(*src);
    for (int i = 0; i < count; ++i) {
      const NodePtr r = resolve(*expr, [&](const Node& s) -> NodePtr {
        if (s.name == "i") return make_const(i, s.pos, s.src);
        if (s.name == "n") return make_const(count, s.pos, s.src);
        if (s.name == "pi") return make_const(M_PI, s.pos, s.src);
        expr_error(
            *s.src, s.pos,
            fmt::format("unknown symbol '{}' (per-instance values may use i, n and pi)", s.name));
      });
      v[i] = evaluate_constant(*r);
    }
    return v;
  }

  static double evaluate_constant(const Node& n) {
    std::vector<double> none;
    return ode::evaluate(n, none.data(), none.data(), 0.0);
  }

  void build_instances(const YAML::Node& network, const YAML::Node& modules) {
    if (!network) {
      for (auto it = modules.begin(); it != modules.end(); ++it)
        add_group(it->first.Scalar(), *modules_.at(it->first.Scalar()), 1, YAML::Node(), it->first);
      return;
    }
    if (!network.IsSequence() || network.size() == 0)
      fail(network, "'network' must be a list of {name, module, count, parameters, init}");
    for (const YAML::Node g : network) {
      if (!g.IsMap())
        fail(g, "a network entry is a mapping {name, module, count, parameters, init}");
      const Context ctx(*this, g);
      unique_keys(g);
      for (auto it = g.begin(); it != g.end(); ++it) {
        const std::string k = it->first.Scalar();
        if (k != "name" && k != "module" && k != "count" && k != "parameters" && k != "init")
          fail(it->first, fmt::format("unknown key '{}' in a network entry (expected name, module, "
                                      "count, parameters, init)",
                                      k));
      }
      const std::string module = scalar(g["module"], "'module'");
      auto m = modules_.find(module);
      if (m == modules_.end()) {
        std::vector<std::string> names;
        for (const auto& kv : modules_) names.push_back(kv.first);
        const std::string near = core::nearest(module, names);
        fail(g["module"], fmt::format("unknown module '{}'{}", module,
                                      near.empty() ? "" : " (did you mean '" + near + "'?)"));
      }
      const std::string name = g["name"] ? scalar(g["name"], "'name'") : module;
      if (g["name"]) valid_name(g["name"], name);
      const double count = g["count"] ? number(g["count"], "'count'") : 1.0;
      if (count < 1 || count != std::floor(count) || count > double(kMaxInstances))
        fail(g["count"], fmt::format("'count' must be an integer in [1, {}]", kMaxInstances));
      for (const auto& grp : groups_)
        if (grp.name == name)
          fail(g["name"] ? g["name"] : g, fmt::format("instance name '{}' is used twice", name));
      add_group(name, *m->second, static_cast<int>(count), g, g["name"] ? g["name"] : g);
    }
  }

  void add_group(const std::string& name, const ModuleDef& mod, int count, const YAML::Node& g,
                 const YAML::Node& where) {
    if (instances_.size() + static_cast<std::size_t>(count) > kMaxInstances)
      fail(where, fmt::format("the network has more than {} instances in all", kMaxInstances));
    const std::size_t each = mod.states.size() + mod.inputs.size() + mod.algs.size();
    equations_ += each * static_cast<std::size_t>(count);
    if (equations_ > kMaxEquations)
      fail(where, fmt::format("the network has more than {} states and variables in all ({} "
                              "instances of '{}' with {} each)",
                              kMaxEquations, count, mod.name, each));
    Group grp{name, &mod, instances_.size(), static_cast<std::size_t>(count), g};
    std::vector<Instance> added(count);
    for (int i = 0; i < count; ++i) {
      Instance& inst = added[i];
      inst.mod = &mod;
      inst.group = name;
      inst.index = i;
      inst.count = count;
      inst.prefix = count == 1 ? name : fmt::format("{}[{}]", name, i);
      inst.init_value = mod.init_value;
    }
    if (g && g["parameters"]) {
      const YAML::Node p = g["parameters"];
      if (!p.IsMap()) fail(p, "'parameters' overrides must be a mapping name: value");
      unique_keys(p);
      for (auto it = p.begin(); it != p.end(); ++it) {
        const std::string pname = it->first.Scalar();
        if (!mod.param_node.count(pname))
          unknown_member(it->first, pname, mod.params, "parameter", mod.name);
        const auto values = per_instance(it->second, count, name + "." + pname);
        for (int i = 0; i < count; ++i) added[i].param_value[pname] = values[i];
      }
    }
    if (g && g["init"]) {
      const YAML::Node p = g["init"];
      if (!p.IsMap()) fail(p, "'init' overrides must be a mapping state: value");
      unique_keys(p);
      for (auto it = p.begin(); it != p.end(); ++it) {
        const std::string sname = it->first.Scalar();
        if (!mod.init_value.count(sname))
          unknown_member(it->first, sname, mod.states, "state", mod.name);
        const auto values = per_instance(it->second, count, name + "." + sname);
        for (int i = 0; i < count; ++i) added[i].init_value[sname] = values[i];
      }
    }
    for (auto& inst : added) instances_.push_back(std::move(inst));
    groups_.push_back(std::move(grp));
  }

  [[noreturn]] void unknown_member(const YAML::Node& at, const std::string& name,
                                   const std::vector<std::string>& known, const std::string& kind,
                                   const std::string& module) const {
    const std::string near = core::nearest(name, known);
    fail(at, fmt::format("module '{}' has no {} '{}'{}", module, kind, name,
                         near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }

  void check_swept() {
    for (const auto& name : options_.swept) {
      const auto dot = name.find('.');
      const Group* g = nullptr;
      for (const auto& grp : groups_)
        if (dot != std::string::npos && grp.name == name.substr(0, dot)) g = &grp;
      if (!g || !g->mod->param_node.count(name.substr(dot + 1)))
        throw std::invalid_argument(
            fmt::format("'{}' names no parameter of the model (expected group.parameter)", name));
    }
  }

  void number_everything() {
    for (auto& inst : instances_) {
      for (const auto& s : inst.mod->states) {
        inst.state_index[s] = static_cast<std::uint32_t>(out_.state_names.size());
        out_.state_names.push_back(inst.prefix + "." + s);
        out_.state_init.push_back(inst.init_value.at(s));
        out_.state_groups[inst.group + "." + s].push_back(inst.state_index[s]);
      }
      for (const auto& in : inst.mod->inputs) {
        inst.var_index[in] = static_cast<std::uint32_t>(out_.var_names.size());
        out_.var_names.push_back(inst.prefix + "." + in);
      }
      for (const auto& a : inst.mod->algs) {
        inst.var_index[a] = static_cast<std::uint32_t>(out_.var_names.size());
        out_.var_names.push_back(inst.prefix + "." + a);
      }
    }
    out_.n_alg = out_.var_names.size();
    for (const auto& name : options_.swept) {
      swept_index_[name] = static_cast<std::uint32_t>(out_.var_names.size());
      out_.var_names.push_back(name);
      const auto dot = name.find('.');
      for (const auto& grp : groups_)
        if (grp.name == name.substr(0, dot)) {
          const Instance& first = instances_[grp.first];
          const std::string p = name.substr(dot + 1);
          const auto it = first.param_value.find(p);
          double v = 0;
          if (it != first.param_value.end())
            v = it->second;
          else if (grp.mod->param_value.count(p))
            v = grp.mod->param_value.at(p);
          else
            v = evaluate_constant(*resolve(*grp.mod->param_expr.at(p),
                                           [&](const Node& s) { return lookup(first, s, 0); }));
          out_.param_values.push_back(v);
        }
    }
  }

  using Lookup = std::function<NodePtr(const Node&)>;

  // Resolution substitutes parameters (expressions themselves) for names: `level_` counts the
  // levels of the tree being built, through those substitutions, and `nodes_` every node built.
  NodePtr resolve(const Node& n, const Lookup& lookup) {
    struct Level {
      int& level;
      explicit Level(int& l) : level(++l) {}
      ~Level() { --level; }
    } const guard(level_);
    if (level_ > kMaxResolvedHeight)
      resolve_error(n, fmt::format("the expression nests more than {} levels deep once its "
                                   "parameters are substituted: split it into algebraic "
                                   "variables",
                                   kMaxResolvedHeight));
    if (++nodes_ > kMaxModelNodes)
      resolve_error(n, fmt::format("the model expands to more than {} expression nodes (instances "
                                   "times equations, plus one term per connection pair)",
                                   kMaxModelNodes));
    if (n.symbol) return lookup(n);
    NodePtr r = n.copy_fields();  // not a symbol: those were looked up above
    for (const auto& a : n.args) r->args.push_back(resolve(*a, lookup));
    return r;
  }

  [[noreturn]] void resolve_error(const Node& n, const std::string& message) const {
    if (n.src) expr_error(*n.src, n.pos, message);
    fail(context_, message);
  }

  // A name inside a module instance: its states, inputs, algebraics, parameters; t and pi.
  NodePtr lookup(const Instance& inst, const Node& s, int depth) {
    const std::string& name = s.name;
    if (auto it = inst.state_index.find(name); it != inst.state_index.end()) {
      auto n = make_const(0, s.pos, s.src);
      n->op = PUSH_STATE;
      n->index = it->second;
      return n;
    }
    if (auto it = inst.var_index.find(name); it != inst.var_index.end()) {
      auto n = make_const(0, s.pos, s.src);
      n->op = PUSH_VAR;
      n->index = it->second;
      return n;
    }
    if (inst.mod->param_node.count(name)) {
      if (auto it = swept_index_.find(inst.group + "." + name); it != swept_index_.end()) {
        auto n = make_const(0, s.pos, s.src);
        n->op = PUSH_VAR;
        n->index = it->second;
        return n;
      }
      if (auto it = inst.param_value.find(name); it != inst.param_value.end())
        return make_const(it->second, s.pos, s.src);
      if (auto it = inst.mod->param_value.find(name); it != inst.mod->param_value.end())
        return make_const(it->second, s.pos, s.src);
      if (depth > 64)
        expr_error(*s.src, s.pos,
                   fmt::format("parameter '{}' is defined in terms of itself", name));
      return resolve(*inst.mod->param_expr.at(name),
                     [&](const Node& q) { return lookup(inst, q, depth + 1); });
    }
    if (name == "t") {
      auto n = make_const(0, s.pos, s.src);
      n->op = PUSH_TIME;
      return n;
    }
    if (name == "pi") return make_const(M_PI, s.pos, s.src);
    auto names = inst.mod->all_names();
    names.push_back("t");
    const std::string near = core::nearest(name, names);
    expr_error(*s.src, s.pos,
               fmt::format("unknown symbol '{}' in module '{}'{}", name, inst.mod->name,
                           near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }

  void instance_equations(const Instance& inst, std::vector<NodePtr>& alg_eq) {
    const auto in_instance = [&](const Node& s) { return lookup(inst, s, 0); };
    for (const auto& a : inst.mod->algs)
      alg_eq[inst.var_index.at(a)] = resolve(*inst.mod->alg_expr.at(a), in_instance);
    for (const auto& s : inst.mod->states)
      derivative_eq_.push_back(
          Equation{true, inst.state_index.at(s), resolve(*inst.mod->ddt_expr.at(s), in_instance)});
  }

  const Group& group(const YAML::Node& n, const std::string& what) const {
    const std::string name = scalar(n, what);
    std::vector<std::string> names;
    for (const auto& g : groups_) {
      if (g.name == name) return g;
      names.push_back(g.name);
    }
    const std::string near = core::nearest(name, names);
    fail(n, fmt::format("no instance group named '{}'{}", name,
                        near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }

  void connections(const YAML::Node& list, std::vector<NodePtr>& alg_eq) {
    std::vector<std::vector<NodePtr>> terms(out_.n_alg);
    if (list) {
      if (!list.IsSequence()) fail(list, "'connections' must be a list");
      int ci = 0;
      for (const YAML::Node c : list) connection(c, ci++, terms);
    }
    for (const auto& inst : instances_)
      for (const auto& in : inst.mod->inputs) {
        const std::uint32_t v = inst.var_index.at(in);
        auto& t = terms[v];
        if (t.empty())
          alg_eq[v] = make_const(0.0, 0, nullptr);
        else if (t.size() == 1)
          alg_eq[v] = std::move(t[0]);
        else
          alg_eq[v] = make_op(ADD, std::move(t), 0, t.front() ? t.front()->src : nullptr);
      }
  }

  void connection(const YAML::Node& c, int ci, std::vector<std::vector<NodePtr>>& terms) {
    if (!c.IsMap())
      fail(c, "a connection is a mapping {from, to, topology, input, term, parameters}");
    const Context ctx(*this, c);
    unique_keys(c);
    for (auto it = c.begin(); it != c.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (k != "from" && k != "to" && k != "topology" && k != "input" && k != "term" &&
          k != "parameters" && k != "probability" && k != "seed" && k != "self")
        fail(it->first, fmt::format("unknown key '{}' in a connection (expected from, to, "
                                    "topology, input, term, parameters, probability, seed, self)",
                                    k));
    }
    for (const char* key : {"from", "topology", "input"})
      if (!c[key])
        fail(c, fmt::format("a connection needs '{}' (a connection is a mapping {{from, to, "
                            "topology, input, term, parameters}})",
                            key));
    const Group& from = group(c["from"], "'from'");
    const Group& to = c["to"] ? group(c["to"], "'to'") : from;
    const std::string topology = scalar(c["topology"], "'topology'");
    const std::string input = scalar(c["input"], "'input'");
    if (std::find(to.mod->inputs.begin(), to.mod->inputs.end(), input) == to.mod->inputs.end())
      unknown_member(c["input"], input, to.mod->inputs, "input", to.mod->name);
    std::map<std::string, double> params;
    if (c["parameters"]) {
      if (!c["parameters"].IsMap())
        fail(c["parameters"], "'parameters' must be a mapping name: number");
      unique_keys(c["parameters"]);
      for (auto it = c["parameters"].begin(); it != c["parameters"].end(); ++it)
        params[it->first.Scalar()] =
            number(it->second, "connection parameter '" + it->first.Scalar() + "'");
    }
    const bool same = &from == &to;
    bool self = false;
    if (c["self"]) {
      const std::string text = scalar(c["self"], "'self'");
      if (text != "true" && text != "false")
        fail(c["self"], fmt::format("'self' must be true or false, got '{}'", text));
      self = text == "true";
    }
    const std::size_t nf = from.count, nt = to.count;
    std::vector<std::vector<std::size_t>> pre(nt);  // presynaptic indices per target
    if (topology == "ring" || topology == "line") {
      if (!same)
        fail(c["topology"],
             fmt::format(
                 "topology '{}' connects a group to itself: 'from' and 'to' must be the same",
                 topology));
      for (std::size_t i = 0; i < nt; ++i) {
        if (nt == 1) break;
        if (topology == "ring") {
          pre[i].push_back((i + nt - 1) % nt);
          if (nt > 2) pre[i].push_back((i + 1) % nt);
        } else {
          if (i > 0) pre[i].push_back(i - 1);
          if (i + 1 < nt) pre[i].push_back(i + 1);
        }
      }
    } else if (topology == "all_to_all" || topology == "random") {
      const double p = topology == "random"
                           ? (c["probability"] ? number(c["probability"], "'probability'") : -1)
                           : 1.0;
      if (p < 0 || p > 1)
        fail(c["probability"] ? c["probability"] : c["topology"],
             "topology 'random' needs 'probability' in [0, 1]");
      const std::uint64_t seed = c["seed"] ? this->seed(c["seed"], "'seed'") : 1;
      if (double(nt) * double(nf) > double(kMaxPairs))
        fail(c["topology"],
             fmt::format("topology '{}' between groups of {} and {} instances tries {} pairs, more "
                         "than the {} accepted",
                         topology, nf, nt, double(nt) * double(nf), kMaxPairs));
      for (std::size_t i = 0; i < nt; ++i)
        for (std::size_t j = 0; j < nf; ++j) {
          if (same && i == j && !self) continue;
          if (topology == "random" && util::uniform01(seed, ci, i * nf + j) >= p) continue;
          pre[i].push_back(j);
        }
    } else if (topology == "one_to_one") {
      if (nf != nt)
        fail(c["topology"],
             fmt::format("topology 'one_to_one' needs groups of equal size ({} and {})", nf, nt));
      for (std::size_t i = 0; i < nt; ++i) pre[i].push_back(i);
    } else {
      fail(
          c["topology"],
          fmt::format("unknown topology '{}' (expected ring, line, all_to_all, one_to_one, random)",
                      topology));
    }
    const ExprSource* src =
        source(c["term"], fmt::format("connection {} -> {}.{}", from.name, to.name, input));
    const NodePtr term = parse_expression(*src);
    for (std::size_t i = 0; i < nt; ++i) {
      const Instance& post = instances_[to.first + i];
      const double n_pre = static_cast<double>(pre[i].size());
      for (std::size_t j : pre[i]) {
        const Instance& pre_inst = instances_[from.first + j];
        terms[post.var_index.at(input)].push_back(resolve(*term, [&](const Node& s) -> NodePtr {
          if (s.name.rfind("pre.", 0) == 0 || s.name.rfind("post.", 0) == 0) {
            const bool is_pre = s.name[1] == 'r';
            Node inner = Node();
            inner.symbol = true;
            inner.name = s.name.substr(is_pre ? 4 : 5);
            inner.pos = s.pos;
            inner.src = s.src;
            return lookup(is_pre ? pre_inst : post, inner, 0);
          }
          if (auto it = params.find(s.name); it != params.end())
            return make_const(it->second, s.pos, s.src);
          if (s.name == "n_pre") return make_const(n_pre, s.pos, s.src);
          if (s.name == "t") {
            auto n = make_const(0, s.pos, s.src);
            n->op = PUSH_TIME;
            return n;
          }
          if (s.name == "pi") return make_const(M_PI, s.pos, s.src);
          std::vector<std::string> names{"n_pre", "t"};
          for (const auto& kv : params) names.push_back(kv.first);
          const std::string near = core::nearest(s.name, names);
          expr_error(*s.src, s.pos,
                     fmt::format("unknown symbol '{}' in a connection term (use pre.NAME, "
                                 "post.NAME, n_pre, t or the connection's parameters){}",
                                 s.name, near.empty() ? "" : " (did you mean '" + near + "'?)"));
        }));
      }
    }
  }

  std::string file_;
  const ModelOptions& options_;
  FlatModel& out_;
  std::vector<std::string> lines_;
  std::map<std::string, std::unique_ptr<ModuleDef>> modules_;
  std::vector<Group> groups_;
  std::vector<Instance> instances_;
  std::vector<Equation> derivative_eq_;
  std::map<std::string, std::uint32_t> swept_index_;
  mutable YAML::Node context_;  // the mapping being read (see fail)
  int level_ = 0;               // see resolve
  std::size_t nodes_ = 0;
  std::size_t equations_ = 0;  // states and variables of the instances so far
};

}  // namespace

std::size_t longest_sum(const FlatModel& model) {
  std::size_t most = 0;
  std::function<void(const Node&)> visit = [&](const Node& n) {
    most = std::max(most, computed_terms(n));
    for (const auto& a : n.args) visit(*a);
  };
  for (const auto& e : model.equations) visit(*e.expr);
  return most;
}

FlatModel load_model_string(const std::string& text, const std::string& file_name,
                            const ModelOptions& options) {
  FlatModel model;
  model.file = file_name;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(core::yaml_error_location(file_name, e.mark), core::yaml_error_text(e));
  }
  try {
    Loader(file_name, text, options, model).load(root);
  } catch (const YAML::Exception& e) {
    // A shape the loader did not expect (a list where a mapping belongs): still the file's error.
    throw InputError(core::yaml_error_location(file_name, e.mark),
                     "unexpected structure: " + core::yaml_error_text(e));
  }
  return model;
}

FlatModel load_model_file(const std::string& path, const ModelOptions& options) {
  return load_model_string(core::read_input_file(path, "model file", core::max_input_file_bytes),
                           path, options);
}

}  // namespace hayate::ode
