// MD's style-independent kernels (binning, neighbor and ghost builds, the Ewald sum), compiled
// once for every enabled backend and both precisions; every other translation unit sees them
// declared extern (exec/instantiate.hpp says why).
#define HAYATE_MD_DEFINE_SHARED_KERNELS
#include "md/ewald.hpp"
#include "md/neighbor.hpp"

namespace hayate::md {
HAYATE_FOR_EACH_SPACE(HAYATE_MD_NEIGHBOR_SPACE, )
HAYATE_FOR_EACH_SPACE(HAYATE_MD_EWALD_SPACE, )
}  // namespace hayate::md
