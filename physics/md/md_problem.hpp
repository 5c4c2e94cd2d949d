#pragma once
#include "config/config.hpp"
#include "run/problem.hpp"
#include "run/registry.hpp"

#include <memory>
#include <string>

namespace hayate::md {

void register_problem(core::Registry& registry);

// The problem of one pair style and precision for the backend named, on its default instance.
// Defined in md_problem_impl.hpp and instantiated once per (style, precision) by CMake.
template <class Real, class Style>
std::unique_ptr<core::Problem> make_md_problem(const core::Config& config,
                                               const std::string& backend);

}  // namespace hayate::md
