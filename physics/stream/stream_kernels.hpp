#pragma once
// STREAM (McCalpin) memory-bandwidth kernels. They calibrate the "% of bandwidth bound" that
// the bandwidth-limited solvers (FHP, MD neighbor builds) report, on every backend.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace hayate::stream {

enum class Kernel { Copy, Scale, Add, Triad };
inline constexpr Kernel all_kernels[] = {Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad};

inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::Copy: return "copy";
    case Kernel::Scale: return "scale";
    case Kernel::Add: return "add";
    case Kernel::Triad: return "triad";
  }
  return "?";
}

// Arrays read plus arrays written per element.
inline int arrays_touched(Kernel k) { return k == Kernel::Copy || k == Kernel::Scale ? 2 : 3; }

template <class Space, class Real>
struct StreamArrays {
  using View = Kokkos::View<Real*, typename Space::memory_space>;
  View a, b, c;

  explicit StreamArrays(std::int64_t n)
      : a(Kokkos::view_alloc(std::string("hayate::stream::a"), Kokkos::WithoutInitializing), n),
        b(Kokkos::view_alloc(std::string("hayate::stream::b"), Kokkos::WithoutInitializing), n),
        c(Kokkos::view_alloc(std::string("hayate::stream::c"), Kokkos::WithoutInitializing), n) {}

  std::int64_t size() const { return static_cast<std::int64_t>(a.extent(0)); }
  std::int64_t bytes(Kernel k) const { return arrays_touched(k) * size() * std::int64_t(sizeof(Real)); }

  // STREAM's initial values, written by the device so first touch places pages (OpenMP).
  void fill() const {
    const View a_ = a, b_ = b, c_ = c;
    Kokkos::parallel_for("hayate::stream::fill", Kokkos::RangePolicy<Space>(0, size()),
                         KOKKOS_LAMBDA(const std::int64_t i) {
                           a_(i) = Real(1);
                           b_(i) = Real(2);
                           c_(i) = Real(0);
                         });
  }

  // Launches one kernel (asynchronously on devices).
  void run(Kernel k, Real s) const {
    const View a_ = a, b_ = b, c_ = c;
    const Kokkos::RangePolicy<Space> range(0, size());
    switch (k) {
      case Kernel::Copy:
        Kokkos::parallel_for("hayate::stream::copy", range,
                             KOKKOS_LAMBDA(const std::int64_t i) { c_(i) = a_(i); });
        break;
      case Kernel::Scale:
        Kokkos::parallel_for("hayate::stream::scale", range,
                             KOKKOS_LAMBDA(const std::int64_t i) { b_(i) = s * c_(i); });
        break;
      case Kernel::Add:
        Kokkos::parallel_for("hayate::stream::add", range,
                             KOKKOS_LAMBDA(const std::int64_t i) { c_(i) = a_(i) + b_(i); });
        break;
      case Kernel::Triad:
        Kokkos::parallel_for("hayate::stream::triad", range,
                             KOKKOS_LAMBDA(const std::int64_t i) { a_(i) = b_(i) + s * c_(i); });
        break;
    }
  }
};

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

}  // namespace hayate::stream
