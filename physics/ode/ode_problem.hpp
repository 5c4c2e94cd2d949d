#pragma once
#include "ode/compiler.hpp"
#include "ode/model.hpp"
#include "ode/tuning.hpp"
#include "run/registry.hpp"

#include <string>
#include <vector>

namespace hayate::ode {

void register_problem(core::Registry& registry);

// The model file named by an input: relative paths are taken from the input file's folder
// first, then from the working directory.
std::string resolve_model_path(const core::Config& config);

// The compiler options of a run in the mode `tuning` resolved: every pass, and in teams mode the
// automatic bins and the halo.
CompilerOptions compiler_options(const Tuning& tuning);

// Full names of the states and variables that `pattern` selects ('*' matches any text).
bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace hayate::ode
