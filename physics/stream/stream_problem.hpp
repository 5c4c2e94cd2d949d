#pragma once
#include "run/registry.hpp"

namespace hayate::stream {
void register_problem(core::Registry& registry);
}
