// The kernels of MD's exchanges between ranks (md/domain.hpp), compiled once for every enabled
// backend and both precisions; every other translation unit sees them declared extern. A unit
// of their own: in shared_kernels.cpp their code changed how the compiler inlined the neighbor
// search of one rank.
#define HAYATE_MD_DEFINE_SHARED_KERNELS
#include "md/domain.hpp"

namespace hayate::md {
HAYATE_FOR_EACH_SPACE(HAYATE_MD_DOMAIN_SPACE, )
}  // namespace hayate::md
