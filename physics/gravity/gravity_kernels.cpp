// Gravity's kernels (integrators, particle reordering, the tree and both force solvers),
// compiled once for every enabled backend; every other translation unit sees them declared
// extern (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_DEFINE_KERNELS
#include "gravity/direct_solver.hpp"
#include "gravity/integrators.hpp"
#include "gravity/state.hpp"
#include "gravity/tree.hpp"
#include "gravity/tree_solver.hpp"

namespace hayate::gravity {
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_STATE_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_INTEGRATOR_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_TREE_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_TREE_SOLVER_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_DIRECT_KERNELS, )
}  // namespace hayate::gravity
