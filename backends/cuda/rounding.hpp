#pragma once
// Arithmetic rounded one operation at a time on the CUDA device. nvcc contracts a multiply and a
// dependent add into one fused multiply-add (one rounding instead of two) unless told otherwise;
// code whose results must equal those of the two operations done apart asks for these.
#include <Kokkos_Core.hpp>

namespace hayate::cuda {

// p + q * r with the product rounded before the sum. A template, so that only code that
// instantiates it for a CUDA space compiles its body; the host pass of a CUDA build (where host
// compilers round as written) takes the plain expression.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T add_product_rn(T p, T q, T r) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(p, __dmul_rn(q, r));
#else
  return p + q * r;
#endif
}

}  // namespace hayate::cuda
