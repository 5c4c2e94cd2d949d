#pragma once
// Everything hayate knows about an execution space, in one place. Physics code asks these traits
// (is it a GPU, how wide is a vector loop, how many multiprocessors) and never tests a backend by
// name; each physics derives its default tuning choices from them. CUDA facts come from
// backends/cuda/device_info.hpp.
#include "exec/dispatch.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

#ifdef KOKKOS_ENABLE_CUDA
#include "cuda/device_info.hpp"
#endif

namespace hayate::core {

// Host backends (Serial, OpenMP): a team is a few host threads, a vector loop is a plain loop.
template <class Space>
struct ExecTraits {
  static constexpr bool is_gpu = false;
  // Lanes of a ThreadVectorRange that run in lockstep (a warp on CUDA).
  static constexpr int vector_length = 1;
  // Threads per team that teams-based kernels use by default.
  static constexpr int team_size = 1;
  // Teams that run at once in a grid-synchronized kernel: host backends run them one after
  // another, so a kernel needing co-resident teams gets one.
  static int multiprocessors(const Space&) { return 1; }
  // Fast on-chip memory of one multiprocessor; host backends have none to share.
  static std::size_t shared_memory_per_multiprocessor(const Space&) { return 0; }
  // Level-0 scratch a team may take.
  static std::size_t team_scratch_max() {
    return std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(0));
  }
};

#ifdef KOKKOS_ENABLE_CUDA
template <>
struct ExecTraits<Kokkos::Cuda> {
  static constexpr bool is_gpu = true;
  static constexpr int vector_length = 32;
  static constexpr int team_size = 256;
  static int multiprocessors(const Kokkos::Cuda& space) {
    return cuda::device_info(space).multiprocessors;
  }
  static std::size_t shared_memory_per_multiprocessor(const Kokkos::Cuda& space) {
    return cuda::device_info(space).shared_memory_per_multiprocessor;
  }
  static std::size_t team_scratch_max() {
    return std::size_t(Kokkos::TeamPolicy<Kokkos::Cuda>::scratch_size_max(0));
  }
};
#endif

// The same facts for a backend named at run time (input validation, auto choices in host code);
// needs no initialized Kokkos.
struct BackendTraits {
  std::string name;
  bool is_gpu = false;
  int vector_length = 1;
};

inline BackendTraits backend_traits(const std::string& backend) {
  return dispatch_backend_type(backend, [&](auto space_type) {
    using Traits = ExecTraits<typename decltype(space_type)::type>;
    return BackendTraits{backend, Traits::is_gpu, Traits::vector_length};
  });
}

}  // namespace hayate::core
