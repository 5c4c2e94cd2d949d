// MD's style-independent kernels (binning, neighbor and ghost builds, the Ewald sum), compiled
// once for every enabled backend and both precisions; every other translation unit sees them
// declared extern (neighbor.hpp, ewald.hpp say why).
#define HAYATE_MD_DEFINE_SHARED_KERNELS
#include "md/ewald.hpp"
#include "md/neighbor.hpp"

namespace hayate::md {
#ifdef KOKKOS_ENABLE_SERIAL
HAYATE_MD_NEIGHBOR_SPACE(, Kokkos::Serial)
HAYATE_MD_EWALD_SPACE(, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
HAYATE_MD_NEIGHBOR_SPACE(, Kokkos::OpenMP)
HAYATE_MD_EWALD_SPACE(, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
HAYATE_MD_NEIGHBOR_SPACE(, Kokkos::Cuda)
HAYATE_MD_EWALD_SPACE(, Kokkos::Cuda)
#endif
}  // namespace hayate::md
