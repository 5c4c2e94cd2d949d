#pragma once
// Execution-space names and the one place where a runtime backend name becomes a template
// argument: physics factories call dispatch_backend with a generic lambda.
#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::core {

template <class Space>
std::string space_name() {
#ifdef KOKKOS_ENABLE_SERIAL
  if (std::is_same<Space, Kokkos::Serial>::value) return "serial";
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (std::is_same<Space, Kokkos::OpenMP>::value) return "openmp";
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Space, Kokkos::Cuda>::value) return "cuda";
#endif
  return Space::name();
}

// Every backend compiled into this build, fastest first.
inline std::vector<std::string> enabled_backends() {
  std::vector<std::string> names;
#ifdef KOKKOS_ENABLE_CUDA
  names.push_back("cuda");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  names.push_back("openmp");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  names.push_back("serial");
#endif
  return names;
}

inline std::string default_backend() {
  return space_name<Kokkos::DefaultExecutionSpace>();
}

// The type of an execution space, without an instance of it (usable before Kokkos starts).
template <class Space>
struct SpaceType {
  using type = Space;
};

// Calls f(SpaceType<Space>{}) for the named backend; needs no initialized Kokkos.
template <class F>
auto dispatch_backend_type(const std::string& name, F&& f) {
#ifdef KOKKOS_ENABLE_CUDA
  if (name == "cuda") return f(SpaceType<Kokkos::Cuda>{});
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (name == "openmp") return f(SpaceType<Kokkos::OpenMP>{});
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  if (name == "serial") return f(SpaceType<Kokkos::Serial>{});
#endif
  throw std::logic_error("backend '" + name + "' is not enabled in this build");
}

// Calls f(Space{}) for the named backend; the name must be one of enabled_backends().
template <class F>
auto dispatch_backend(const std::string& name, F&& f) {
#ifdef KOKKOS_ENABLE_CUDA
  if (name == "cuda") return f(Kokkos::Cuda());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (name == "openmp") return f(Kokkos::OpenMP());
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  if (name == "serial") return f(Kokkos::Serial());
#endif
  throw std::logic_error("backend '" + name + "' is not enabled in this build");
}

}  // namespace hayate::core
