#pragma once
// Every difference between Kokkos 3.4 and 4.x that hayate touches lives here and nowhere else.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cmath>
#include <string>

namespace hayate::compat {

#if KOKKOS_VERSION >= 30700
#define HAYATE_KOKKOS_MATH_NS Kokkos
#else
#define HAYATE_KOKKOS_MATH_NS Kokkos::Experimental
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) {
  return HAYATE_KOKKOS_MATH_NS::sqrt(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) {
  return HAYATE_KOKKOS_MATH_NS::exp(x);
}
// e^x - 1 without the cancellation of exp(x) - 1 near 0.
template <class T>
KOKKOS_INLINE_FUNCTION T expm1(T x) {
  return HAYATE_KOKKOS_MATH_NS::expm1(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T log(T x) {
  return HAYATE_KOKKOS_MATH_NS::log(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T pow(T x, T y) {
  return HAYATE_KOKKOS_MATH_NS::pow(x, y);
}
template <class T>
KOKKOS_INLINE_FUNCTION T fabs(T x) {
  return HAYATE_KOKKOS_MATH_NS::fabs(x);
}
// x * y + z rounded once (Kokkos 3.4 has no fma of its own).
KOKKOS_INLINE_FUNCTION double fma(double x, double y, double z) {
#if defined(__CUDA_ARCH__)
  return ::fma(x, y, z);
#else
  return std::fma(x, y, z);
#endif
}
template <class T>
KOKKOS_INLINE_FUNCTION T floor(T x) {
  return HAYATE_KOKKOS_MATH_NS::floor(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T sin(T x) {
  return HAYATE_KOKKOS_MATH_NS::sin(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T cos(T x) {
  return HAYATE_KOKKOS_MATH_NS::cos(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T tan(T x) {
  return HAYATE_KOKKOS_MATH_NS::tan(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T tanh(T x) {
  return HAYATE_KOKKOS_MATH_NS::tanh(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION bool isfinite(T x) {
  return HAYATE_KOKKOS_MATH_NS::isfinite(x);
}

// 1/sqrt(x): the single-precision hardware instruction on CUDA, a plain division elsewhere.
// rsqrtf() compiles to the instruction plus a compare and two predicated multiplies that keep
// subnormal inputs exact; those three issue slots are a fifth of a softened gravity interaction.
// The flush-to-zero form is the bare instruction: inputs below 1.2e-38 read as 0 (result +inf),
// which no softened r^2 reaches.
KOKKOS_INLINE_FUNCTION float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.0f / HAYATE_KOKKOS_MATH_NS::sqrt(x);
#endif
}
KOKKOS_INLINE_FUNCTION double rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrt(x);
#else
  return 1.0 / HAYATE_KOKKOS_MATH_NS::sqrt(x);
#endif
}

// Kokkos 4 renamed ScatterView's contribution tags' home; 3.4 and 4.x both keep them here.
namespace scatter = Kokkos::Experimental;

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace hayate::compat

namespace hayate::compat {

// Kokkos::InitArguments (3.4) became Kokkos::InitializationSettings (3.7+).
// threads <= 0 and device < 0 keep Kokkos' own defaults (OMP_NUM_THREADS, device 0).
inline void initialize_kokkos(int threads, int device) {
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings settings;
  if (threads > 0) settings.set_num_threads(threads);
  if (device >= 0) settings.set_device_id(device);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments args;
  if (threads > 0) args.num_threads = threads;
  if (device >= 0) args.device_id = device;
  Kokkos::initialize(args);
#endif
}

}  // namespace hayate::compat
