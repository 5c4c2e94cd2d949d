// FHP's kernels (the engines, initial states, field and row sums), compiled once for every
// enabled backend; every other translation unit sees them declared extern
// (exec/instantiate.hpp says why).
#define HAYATE_FHP_DEFINE_KERNELS
#include "fhp/fhp_kernels.hpp"
#include "fhp/fhp_fields.hpp"
#include "fhp/fhp_init.hpp"

namespace hayate::fhp {
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_ENGINE_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_INIT_KERNELS, )
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_FIELD_KERNELS, )
}  // namespace hayate::fhp
