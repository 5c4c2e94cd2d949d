#pragma once
// The space of the tests that run whole physical cases on the host (validation, long physics
// checks): Serial, because a loaded 2-core machine runs them faster than threads that wait for
// each other; the default host space where Serial is not enabled.
#include <Kokkos_Core.hpp>

namespace hayate::test {
#ifdef KOKKOS_ENABLE_SERIAL
using SerialSpace = Kokkos::Serial;
#else
using SerialSpace = Kokkos::DefaultHostExecutionSpace;
#endif
}  // namespace hayate::test
