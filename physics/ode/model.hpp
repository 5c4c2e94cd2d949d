#pragma once
// Model files: modules (parameters, inputs, algebraic variables, states with d/dt), instances of
// modules with per-instance overrides, and connections between instances. Loading flattens
// everything into one list of equations over numbered states and variables.
#include "ode/expr.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hayate::ode {

struct Equation {
  bool derivative = false;  // d(state[target])/dt = expr, else variable[target] = expr
  std::uint32_t target = 0;
  NodePtr expr;
};

struct FlatModel {
  std::string file;
  std::vector<std::string> state_names;  // "cell.V", or "cell[3].V" for groups of count > 1
  std::vector<double> state_init;
  // Algebraic variables (including connection inputs) first, then swept parameters.
  std::vector<std::string> var_names;
  std::size_t n_alg = 0;
  std::vector<double> param_values;  // model values of the swept parameters
  std::vector<Equation> equations;   // algebraic equations, then one per state
  // "group.name" -> the states of every instance of the group, for ensemble initial values.
  std::map<std::string, std::vector<std::uint32_t>> state_groups;
  std::vector<std::unique_ptr<ExprSource>> sources;  // owned: nodes point into them

  std::size_t n_states() const { return state_names.size(); }
  std::size_t n_vars() const { return var_names.size(); }
  // Index of a state or variable by its full name: {true, i} for states, {false, i} for variables.
  bool find(const std::string& name, bool& is_state, std::uint32_t& index) const;
};

inline constexpr int kDefaultSplitSums = 8;

struct ModelOptions {
  // Parameters kept as variables ("group.param"), one value per ensemble member.
  std::vector<std::string> swept;
  // Sums with more than this many computed terms (not bare reads) are cut into partial-sum
  // algebraic variables that run in parallel lanes (0 or 1: never). compiler.split_sums: auto
  // picks it per model in teams mode (choose_split_sums, ode/teams.hpp) and is this default in
  // the others.
  int split_sums = kDefaultSplitSums;
};

// The most computed terms (not bare reads) of any sum in the model's equations: a limit at or
// above it cuts nothing.
std::size_t longest_sum(const FlatModel& model);

FlatModel load_model_file(const std::string& path, const ModelOptions& options = {});
FlatModel load_model_string(const std::string& text, const std::string& file_name,
                            const ModelOptions& options = {});

}  // namespace hayate::ode
