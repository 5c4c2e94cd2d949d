#pragma once
// STREAM (McCalpin) memory-bandwidth kernels. They calibrate the "% of bandwidth bound" that
// the bandwidth-limited solvers (FHP, MD neighbor builds) report, on every backend. Every kernel
// runs on the execution-space instance the arrays were made with.
#include "exec/instantiate.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hayate::stream {

enum class Kernel { Copy, Scale, Add, Triad };
inline constexpr Kernel all_kernels[] = {Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad};

inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::Copy:
      return "copy";
    case Kernel::Scale:
      return "scale";
    case Kernel::Add:
      return "add";
    case Kernel::Triad:
      return "triad";
  }
  return "?";
}

// Arrays read plus arrays written per element.
inline int arrays_touched(Kernel k) {
  return k == Kernel::Copy || k == Kernel::Scale ? 2 : 3;
}

// `tuning.unroll` (elements per thread): auto is 4 on every backend. Four independent loads in
// flight per thread reached the device-to-device copy ceiling on GPUs where one did not;
// host backends were not measured and take the same (see docs/dev/decisions.md).
inline constexpr int default_unroll = 4;
inline int parse_unroll(const std::string& value) {
  return value == "auto" ? default_unroll : std::stoi(value);
}

template <class Space, class Real>
struct StreamArrays {
  using View = Kokkos::View<Real*, typename Space::memory_space>;
  Space space;
  View a, b, c;

  StreamArrays(const Space& instance, std::int64_t n)
      : space(instance),
        a(Kokkos::view_alloc(std::string("hayate::stream::a"), Kokkos::WithoutInitializing), n),
        b(Kokkos::view_alloc(std::string("hayate::stream::b"), Kokkos::WithoutInitializing), n),
        c(Kokkos::view_alloc(std::string("hayate::stream::c"), Kokkos::WithoutInitializing), n) {}

  std::int64_t size() const { return static_cast<std::int64_t>(a.extent(0)); }
  std::int64_t bytes(Kernel k) const {
    return arrays_touched(k) * size() * std::int64_t(sizeof(Real));
  }

  // STREAM's initial values, written by the device so first touch places pages (OpenMP).
  void fill() const;

  // Launches one kernel (asynchronously on devices). `unroll` elements per thread, with all
  // loads issued before the first store, so several independent loads are in flight per thread.
  void run(Kernel k, Real s, int unroll = default_unroll) const;

  // The four kernels as (value at i, where it goes): the semantics written once.
  struct Copy {
    View a, c;
    KOKKOS_INLINE_FUNCTION Real value(std::int64_t i) const { return a(i); }
    KOKKOS_INLINE_FUNCTION void store(std::int64_t i, Real v) const { c(i) = v; }
  };
  struct Scale {
    View b, c;
    Real s;
    KOKKOS_INLINE_FUNCTION Real value(std::int64_t i) const { return s * c(i); }
    KOKKOS_INLINE_FUNCTION void store(std::int64_t i, Real v) const { b(i) = v; }
  };
  struct Add {
    View a, b, c;
    KOKKOS_INLINE_FUNCTION Real value(std::int64_t i) const { return a(i) + b(i); }
    KOKKOS_INLINE_FUNCTION void store(std::int64_t i, Real v) const { c(i) = v; }
  };
  struct Triad {
    View a, b, c;
    Real s;
    KOKKOS_INLINE_FUNCTION Real value(std::int64_t i) const { return b(i) + s * c(i); }
    KOKKOS_INLINE_FUNCTION void store(std::int64_t i, Real v) const { a(i) = v; }
  };

  // Thread t handles i = t, t + m, t + 2m, ...: each of the U accesses is coalesced across a warp.
  template <int U, class Op>
  void launch(const char* label, const Op op) const {
    const std::int64_t n = size();
    const std::int64_t m = (n + U - 1) / U;
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<Space>(space, 0, m), KOKKOS_LAMBDA(const std::int64_t t) {
          Real v[U];
          for (int u = 0; u < U; ++u) {
            const std::int64_t i = t + u * m;
            v[u] = i < n ? op.value(i) : Real(0);
          }
          for (int u = 0; u < U; ++u) {
            const std::int64_t i = t + u * m;
            if (i < n) op.store(i, v[u]);
          }
        });
  }

  template <int U>
  void run_unrolled(Kernel k, Real s) const {
    switch (k) {
      case Kernel::Copy:
        return launch<U>("hayate::stream::copy", Copy{a, c});
      case Kernel::Scale:
        return launch<U>("hayate::stream::scale", Scale{b, c, s});
      case Kernel::Add:
        return launch<U>("hayate::stream::add", Add{a, b, c});
      case Kernel::Triad:
        return launch<U>("hayate::stream::triad", Triad{a, b, c, s});
    }
  }

  // Largest relative deviation of any element from the values (ea, eb, ec) it should hold.
  double max_relative_error(Real ea, Real eb, Real ec) const;
};

template <class Space, class Real>
void StreamArrays<Space, Real>::fill() const {
  const View a_ = a, b_ = b, c_ = c;
  Kokkos::parallel_for(
      "hayate::stream::fill", Kokkos::RangePolicy<Space>(space, 0, size()),
      KOKKOS_LAMBDA(const std::int64_t i) {
        a_(i) = Real(1);
        b_(i) = Real(2);
        c_(i) = Real(0);
      });
}

template <class Space, class Real>
void StreamArrays<Space, Real>::run(Kernel k, Real s, int unroll) const {
  switch (unroll) {
    case 1:
      return run_unrolled<1>(k, s);
    case 2:
      return run_unrolled<2>(k, s);
    case 4:
      return run_unrolled<4>(k, s);
    case 8:
      return run_unrolled<8>(k, s);
    default:
      throw std::invalid_argument("stream: unroll must be 1, 2, 4 or 8");
  }
}

template <class Space, class Real>
double StreamArrays<Space, Real>::max_relative_error(Real ea, Real eb, Real ec) const {
  const View a_ = a, b_ = b, c_ = c;
  double worst = 0;
  Kokkos::parallel_reduce(
      "hayate::stream::verify", Kokkos::RangePolicy<Space>(space, 0, size()),
      KOKKOS_LAMBDA(const std::int64_t i, double& w) {
        const double da = (double(a_(i)) - double(ea)) / double(ea);
        const double db = (double(b_(i)) - double(eb)) / double(eb);
        const double dc = (double(c_(i)) - double(ec)) / double(ec);
        const double m = da * da > db * db ? da * da : db * db;
        const double e = m > dc * dc ? m : dc * dc;
        if (e > w) w = e;
      },
      Kokkos::Max<double>(worst));
  return std::sqrt(worst);
}

// The values every element must hold after `rounds` rounds of copy, scale, add, triad from the
// initial state, computed the same way in the same precision (STREAM's own check).
template <class Real>
void expected_values(std::int64_t rounds, Real s, Real& a, Real& b, Real& c) {
  a = 1;
  b = 2;
  c = 0;
  for (std::int64_t r = 0; r < rounds; ++r) {
    c = a;
    b = s * c;
    c = a + b;
    a = b + s * c;
  }
}

// Compiled once, in stream_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_STREAM_KERNELS(EXTERN, S)         \
  EXTERN template struct StreamArrays<S, float>; \
  EXTERN template struct StreamArrays<S, double>;
#ifndef HAYATE_STREAM_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_STREAM_KERNELS, extern)
#endif

}  // namespace hayate::stream
