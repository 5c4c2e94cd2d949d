#pragma once
#include "run/registry.hpp"

namespace hayate::gravity {
void register_problem(core::Registry& registry);
}
