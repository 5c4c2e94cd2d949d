#pragma once
// Special functions that one physics alone needs (Ewald's erfc, the MD tables' index), kept out
// of kokkos_compat.hpp, which every translation unit includes: a change here rebuilds only the
// code that uses them.
#include "compat/kokkos_compat.hpp"

#include <cstdint>
#include <cstring>

namespace hayate::compat {

// The complementary error function (Ewald's real-space term).
template <class T>
KOKKOS_INLINE_FUNCTION T erfc(T x) {
  return HAYATE_KOKKOS_MATH_NS::erfc(x);
}

// 1 / sqrt(x): one hardware estimate refined on a GPU, where a square root and a division are two
// refinements and a slow-path branch each.
template <class T>
KOKKOS_INLINE_FUNCTION T rsqrt(T x) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == sizeof(float))
    return ::rsqrtf(x);
  else
    return ::rsqrt(x);
#else
  return T(1) / HAYATE_KOKKOS_MATH_NS::sqrt(x);
#endif
}

// 1 / d for 1 <= d <= 3 (no zeros, infinities or subnormals): on a GPU in double, the
// hardware's estimate and two Newton steps (four FMAs, relative error ~1e-16), where a
// division adds a range check and a slow-path call that the compiler will not move loads across.
template <class T>
KOKKOS_INLINE_FUNCTION T reciprocal_1_to_3(T d) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == sizeof(double)) {
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(d));
    y = ::fma(y, ::fma(-d, y, 1.0), y);
    return ::fma(y, ::fma(-d, y, 1.0), y);
  }
#endif
  return T(1) / d;
}

// The interval [k, k + 1] of a table with intervals 0..last that holds x, clamped to 0..last
// (NaN gives 0), as an int and as a T (start). At an integer x, k may be x - 1 (x - start = 1):
// a linear interpolation gives the same value. From the rounding of additions, not conversions
// (on a GPU a conversion between double and int issues at a quarter of the FMA rate): adding
// 1.5 * 2^p (p the mantissa's width) rounds x - 1/2 to an integer, whose bits are then the
// low bits of start + 1.5 * 2^p. last must be below 2^21.
template <class T>
KOKKOS_INLINE_FUNCTION int table_interval(const T x, const T last, T& start) {
  constexpr bool is_double = sizeof(T) == sizeof(double);
  const T magic = is_double ? T(6755399441055744.0) : T(12582912.0f);  // 1.5 * 2^52 or 2^23
  const T nearest = ((x - T(0.5)) + magic) - magic;
  start = nearest > T(0) ? (nearest < last ? nearest : last) : T(0);
  const T shifted = start + magic;
  if constexpr (is_double) {
#ifdef __CUDA_ARCH__
    return __double2loint(shifted);
#else
    std::uint64_t bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    return int(std::uint32_t(bits));
#endif
  } else {
#ifdef __CUDA_ARCH__
    return __float_as_int(shifted) - 0x4B400000;
#else
    std::uint32_t bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    return int(bits - 0x4B400000u);
#endif
  }
}

// The positive numbers cut into segments by exponent and the top Bits mantissa bits, 2^Bits
// equal segments per octave, as MDGRAPE's function evaluator cuts r^2: a segment's number,
// start and width come from the bits alone (no conversion, no division), and its width is a
// fixed fraction of its start, so a table of them keeps the same relative accuracy over many
// octaves. For finite x > 0 whose exponent lies more than Bits above the smallest normal.
template <int Bits, class T>
struct ExponentSegments {
  static constexpr bool is_double = sizeof(T) == sizeof(double);
  static constexpr int mantissa = is_double ? 52 : 23;
  static constexpr int shift = mantissa - Bits;
  static_assert(Bits >= 0 && Bits <= 20, "the segment bits must stay in the high word");

  // (biased exponent << Bits) | top Bits of the mantissa: increases with x.
  KOKKOS_INLINE_FUNCTION static int index(const T x) {
    if constexpr (is_double) {
#ifdef __CUDA_ARCH__
      return __double2hiint(x) >> (shift - 32);
#else
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      return int(std::int64_t(bits) >> shift);
#endif
    } else {
#ifdef __CUDA_ARCH__
      return __float_as_int(x) >> shift;
#else
      std::int32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      return bits >> shift;
#endif
    }
  }

  // Where the segment `index` begins.
  KOKKOS_INLINE_FUNCTION static T start(const int index) {
    return from_high(index << (shift - low()));
  }

  // x's place in its segment `index` (= index(x)), in [0, 1), exactly: x - start has no
  // rounding (both share an exponent) and 1 / width is a power of two.
  KOKKOS_INLINE_FUNCTION static T fraction(const T x, const int index) {
    constexpr int bias = is_double ? 1023 : 127;
    const int exponent = index >> Bits;
    // 1 / width = 2^(Bits - (exponent - bias)), whose biased exponent is Bits + 2 bias - exponent.
    const T inverse_width = from_high((Bits + 2 * bias - exponent) << (mantissa - low()));
    return (x - start(index)) * inverse_width;
  }

 private:
  // A double is built from its high 32 bits (the low ones zero), a float from all of them.
  KOKKOS_INLINE_FUNCTION static constexpr int low() {
    return is_double ? 32 : 0;
  }
  KOKKOS_INLINE_FUNCTION static T from_high(const int high) {
    if constexpr (is_double) {
#ifdef __CUDA_ARCH__
      return __hiloint2double(high, 0);
#else
      const std::uint64_t bits = std::uint64_t(std::uint32_t(high)) << 32;
      T out;
      std::memcpy(&out, &bits, sizeof out);
      return out;
#endif
    } else {
#ifdef __CUDA_ARCH__
      return __int_as_float(high);
#else
      T out;
      std::memcpy(&out, &high, sizeof out);
      return out;
#endif
    }
  }
};

// Two consecutive values from p, which is aligned to their pair (16 bytes in double, 8 in
// float): on a GPU one load through the read-only path, where element loads from a pointer the
// compiler cannot place would be two generic ones, each an L1 access of its own.
template <class T>
KOKKOS_INLINE_FUNCTION void load2_aligned(const T* p, T& a, T& b) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == sizeof(double)) {
    const double2 v = __ldg(reinterpret_cast<const double2*>(p));
    a = v.x, b = v.y;
  } else {
    const float2 v = __ldg(reinterpret_cast<const float2*>(p));
    a = v.x, b = v.y;
  }
#else
  a = p[0], b = p[1];
#endif
}

// Four consecutive values from p, which is 16-byte aligned: on a GPU in 16-byte loads
// through the read-only path (two in double, one in float), where element loads from a pointer
// the compiler cannot place would be four generic 8-byte ones, each an L1 access of its own.
template <class T>
KOKKOS_INLINE_FUNCTION void load4_aligned(const T* p, T& a, T& b, T& c, T& d) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == sizeof(double)) {
    const double2 lo = __ldg(reinterpret_cast<const double2*>(p));
    const double2 hi = __ldg(reinterpret_cast<const double2*>(p) + 1);
    a = lo.x, b = lo.y, c = hi.x, d = hi.y;
  } else {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p));
    a = v.x, b = v.y, c = v.z, d = v.w;
  }
#else
  a = p[0], b = p[1], c = p[2], d = p[3];
#endif
}

// Four floats stored at p (16-byte aligned) inside an array of another type: one 16-byte
// read-only load on a GPU; elsewhere a byte copy (no float access to the array's own objects).
KOKKOS_INLINE_FUNCTION void load4f_aligned(const void* p, float& a, float& b, float& c, float& d) {
#ifdef __CUDA_ARCH__
  const float4 v = __ldg(reinterpret_cast<const float4*>(p));
  a = v.x, b = v.y, c = v.z, d = v.w;
#else
  float v[4];
  std::memcpy(v, p, sizeof v);
  a = v[0], b = v[1], c = v[2], d = v[3];
#endif
}

// erfc(x) for x >= 0 from exp(-x^2), which Ewald's real-space force needs anyway:
// erfc(x) = exp(-x^2) P(t), t = 1 / (1 + p x), p = 0.3275911: one reciprocal and a polynomial
// instead of the library's second exponential and its branches. In float, P is Abramowitz &
// Stegun's 7.1.26 (absolute error below 1.5e-7); in double, a degree-15 fit of exp(x^2) erfc(x)
// in t over x in [0, 6] (absolute error below 2e-15, unit_tests/md/test_md_coulomb.cpp). x beyond
// 6 is taken as 6, an absolute error below erfc(6) = 2e-17.
template <class T>
KOKKOS_INLINE_FUNCTION T erfc_from_exp(T x, T exp_minus_x2) {
  const T t = reciprocal_1_to_3(T(1) + T(0.3275911) * (x < T(6) ? x : T(6)));
  T p;
  if constexpr (sizeof(T) == sizeof(float)) {
    p = t *
        (T(0.254829592) +
         t * (T(-0.284496736) + t * (T(1.421413741) + t * (T(-1.453152027) + t * T(1.061405429)))));
  } else {
    p = T(-0.010071658880400902);
    p = p * t + T(0.11011497064564664);
    p = p * t + T(-0.5388105930143706);
    p = p * t + T(1.5459643199995625);
    p = p * t + T(-2.8810337361842073);
    p = p * t + T(3.7142187660161308);
    p = p * t + T(-3.5419306169105575);
    p = p * t + T(2.5963333790034144);
    p = p * t + T(-1.3678440178830238);
    p = p * t + T(0.7059348676344782);
    p = p * t + T(-0.07438954763098454);
    p = p * t + T(0.2049316742529497);
    p = p * t + T(0.16589677494826172);
    p = p * t + T(0.18594482627778766);
    p = p * t + T(0.18473753344014018);
    p = p * t + T(3.0582851732571765e-06);
  }
  return p * exp_minus_x2;
}

}  // namespace hayate::compat
