// Every physics compiled into this binary, in the order `hayate info` lists them.
#include "fhp/fhp_problem.hpp"
#include "gravity/gravity_problem.hpp"
#include "md/md_problem.hpp"
#include "ode/ode_problem.hpp"
#include "run/registry.hpp"
#include "stream/stream_problem.hpp"

namespace hayate::core {

void register_builtin_problems(Registry& registry) {
  if (!registry.names().empty()) return;  // idempotent: tests and main may both call it
  gravity::register_problem(registry);
  md::register_problem(registry);
  fhp::register_problem(registry);
  ode::register_problem(registry);
  stream::register_problem(registry);
}

}  // namespace hayate::core
