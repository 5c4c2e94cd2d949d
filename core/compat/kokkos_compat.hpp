#pragma once
// Every difference between Kokkos 3.4 and 4.x that hayate touches lives here and nowhere else.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

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

// ScatterView is still experimental in 3.4 and 4.x; code names it only through these aliases.
template <class DataType, class Layout, class Space, class Duplication, class Contribution>
using ScatterSumView =
    Kokkos::Experimental::ScatterView<DataType, Layout, Space, Kokkos::Experimental::ScatterSum,
                                      Duplication, Contribution>;
using ScatterDuplicated = Kokkos::Experimental::ScatterDuplicated;
using ScatterNonDuplicated = Kokkos::Experimental::ScatterNonDuplicated;
using ScatterAtomic = Kokkos::Experimental::ScatterAtomic;
using ScatterNonAtomic = Kokkos::Experimental::ScatterNonAtomic;

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

// The identifier Kokkos Tools callbacks receive for kernels launched on `space` (backend and
// instance).
template <class Space>
std::uint32_t tools_device_id(const Space& space) {
  return Kokkos::Tools::Experimental::device_id(space);
}

// An execution-space instance apart from the default one, where the backend can make one:
// Kokkos 4 partitions any space; Kokkos 3.4 only gives CUDA a second stream. Elsewhere this is
// the default instance and independent() is false.
template <class Space>
class IndependentInstance {
 public:
  IndependentInstance() {
#if KOKKOS_VERSION >= 40000
    space_ = Kokkos::Experimental::partition_space(Space(), 1)[0];
    independent_ = true;
#elif defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      // Non-blocking: Kokkos 3.4's default instance runs on the legacy default stream, with
      // which a plain stream would serialize.
      if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess) {
        space_ = Kokkos::Cuda(stream_);
        independent_ = true;
      }
    }
#endif
  }
  ~IndependentInstance() {
    space_.fence();
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
    space_ = Space();
    if (stream_) cudaStreamDestroy(stream_);
#endif
  }
  IndependentInstance(const IndependentInstance&) = delete;
  IndependentInstance& operator=(const IndependentInstance&) = delete;

  const Space& space() const {
    return space_;
  }
  bool independent() const {
    return independent_;
  }

 private:
  Space space_{};
  bool independent_ = false;
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream_ = nullptr;
#endif
};

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
