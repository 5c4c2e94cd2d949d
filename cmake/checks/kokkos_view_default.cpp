// Exits 0 when a default-constructed View is an empty, untracked handle: assigning to it
// must not touch an allocation record. GCC 12.2 to 12.4 miscompile the constexpr default
// constructor of the tracker in Kokkos' mdspan-based View, and this program then crashes.
#include <Kokkos_Core.hpp>

int main() {
  double data[4] = {1, 2, 3, 4};
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> unmanaged(
      data, 4);
  Kokkos::View<double*, Kokkos::HostSpace> view;
  view = unmanaged;
  return view.data() == data ? 0 : 1;
}
