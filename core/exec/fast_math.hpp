#pragma once
// Math with a faster form on some backends: the device pass of a CUDA build takes the
// instruction in backends/cuda/fast_math.hpp, every other build the portable expression.
#include "compat/kokkos_compat.hpp"

#if defined(__CUDA_ARCH__)
#include "cuda/fast_math.hpp"
#endif

namespace hayate::core {

// 1/sqrt(x); in single precision on CUDA the flush-to-zero instruction (x >= 1.2e-38 assumed).
KOKKOS_INLINE_FUNCTION float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  return cuda::rsqrt_ftz(x);
#else
  return 1.0f / compat::sqrt(x);
#endif
}

KOKKOS_INLINE_FUNCTION double rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  return cuda::rsqrt(x);
#else
  return 1.0 / compat::sqrt(x);
#endif
}

}  // namespace hayate::core
