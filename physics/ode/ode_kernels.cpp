// The ODE engine's kernel lambda, compiled once for every enabled backend
// (exec/instantiate.hpp says why).
#define HAYATE_ODE_DEFINE_KERNELS
#include "ode/engine.hpp"

namespace hayate::ode {
HAYATE_FOR_EACH_SPACE(HAYATE_ODE_ENGINE_KERNELS, )
}  // namespace hayate::ode
