#pragma once
// Run guards: cheap device checks that a state is still fit to go on, and the failure they raise.
// A guard throws RuntimeFailure (exit 3) naming the step and the quantity; the driver keeps the
// last good checkpoint and what was written.
#include "compat/kokkos_compat.hpp"
#include "config/error.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace hayate::core {

// The reduction of first_non_finite: a functor, because a CUDA device lambda may not capture
// a variable first inside `if constexpr`.
template <class View>
struct FirstNonFiniteRow {
  View v;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, std::int64_t& m) const {
    bool ok = true;
    if constexpr (View::rank == 1) {
      ok = compat::isfinite(v(i));
    } else {
      for (std::size_t c = 0; c < v.extent(1); ++c) ok = ok && compat::isfinite(v(i, c));
    }
    if (!ok && i < m) m = i;
  }
};

// The first row of `view` (rank 1, or rank 2: a row is one item's components) holding a value
// that is not finite, or -1: one reduction on `space`.
template <class Space, class View>
std::int64_t first_non_finite(const Space& space, const View& view) {
  static_assert(View::rank == 1 || View::rank == 2, "first_non_finite: rank 1 or 2");
  const std::int64_t rows = std::int64_t(view.extent(0));
  const std::int64_t none = rows;
  std::int64_t first = none;
  Kokkos::parallel_reduce("hayate::guard::first_non_finite",
                          Kokkos::RangePolicy<Space>(space, 0, rows), FirstNonFiniteRow<View>{view},
                          Kokkos::Min<std::int64_t>(first));
  return first < none ? first : -1;
}

}  // namespace hayate::core
