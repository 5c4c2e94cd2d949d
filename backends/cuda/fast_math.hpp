#pragma once
// Single instructions for math the portable path writes out in full.
#if defined(__CUDA_ARCH__)
namespace hayate::cuda {

// 1/sqrt(x) as the bare hardware instruction with flush-to-zero: rsqrtf() adds a compare and
// two predicated multiplies that keep subnormal inputs exact, three issue slots that are a fifth
// of a softened gravity interaction. Inputs below 1.2e-38 read as 0 (result +inf), which no
// softened r^2 reaches.
__device__ __forceinline__ float rsqrt_ftz(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ double rsqrt(double x) {
  return ::rsqrt(x);
}

}  // namespace hayate::cuda
#endif
