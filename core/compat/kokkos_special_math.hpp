#pragma once
// Special functions that one physics alone needs (Ewald's erfc), kept out of kokkos_compat.hpp,
// which every translation unit includes: a change here rebuilds only the code that uses them.
#include "compat/kokkos_compat.hpp"

namespace hayate::compat {

// The complementary error function (Ewald's real-space term).
template <class T>
KOKKOS_INLINE_FUNCTION T erfc(T x) {
  return HAYATE_KOKKOS_MATH_NS::erfc(x);
}

}  // namespace hayate::compat
