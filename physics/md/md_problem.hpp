#pragma once
#include "config/config.hpp"
#include "run/problem.hpp"
#include "run/registry.hpp"

#include <memory>
#include <string>

namespace hayate::md {

void register_problem(core::Registry& registry);

// Whether this build compiled the problems of pair style `name` (CMake option HAYATE_MD_STYLES);
// false for an unknown name.
bool style_is_built(const std::string& name);

// The problem of one pair style and precision for the backend named, on its default instance.
// Defined in md_problem_impl.hpp and instantiated once per (style, precision) by CMake.
template <class Real, class Style>
std::unique_ptr<core::Problem> make_md_problem(const core::Config& config,
                                               const std::string& backend);

}  // namespace hayate::md
