#pragma once
#include "run/registry.hpp"

namespace hayate::md {
void register_problem(core::Registry& registry);
}
