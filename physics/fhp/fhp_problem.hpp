#pragma once
#include "run/registry.hpp"

namespace hayate::fhp {
void register_problem(core::Registry& registry);
}
