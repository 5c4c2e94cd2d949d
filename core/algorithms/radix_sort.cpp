// The portable radix sort's pass, compiled once for every enabled backend (exec/instantiate.hpp
// says why).
#define HAYATE_DEFINE_RADIX_KERNELS
#include "algorithms/radix_sort.hpp"

namespace hayate::core {
HAYATE_FOR_EACH_SPACE(HAYATE_RADIX_KERNELS, )
}  // namespace hayate::core
