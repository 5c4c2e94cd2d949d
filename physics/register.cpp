// Every physics compiled into this binary, in the order `hayate info` lists them.
#include "run/registry.hpp"
#include "ode/ode_problem.hpp"
#include "stream/stream_problem.hpp"

namespace hayate::core {

void register_builtin_problems(Registry& registry) {
  if (!registry.names().empty()) return;  // idempotent: tests and main may both call it
  stream::register_problem(registry);
  ode::register_problem(registry);
}

}  // namespace hayate::core
