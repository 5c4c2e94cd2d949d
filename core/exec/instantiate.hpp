#pragma once
// HAYATE_FOR_EACH_SPACE(M, EXTERN) expands M(EXTERN, Space) for every enabled backend. A kernel
// template that several translation units use is compiled in one: its header declares the
// instances `extern` (EXTERN = extern) and one source file defines them (EXTERN empty). nvcc
// gives each unit its own state for a __host__ __device__ lambda while the linker keeps one
// copy of the lambda wrapper's functions, so the same lambda compiled in two units can call
// through a null pointer (docs/dev/reliability.md); scripts/check_kernel_instances.py keeps
// the library and the test binary free of such duplicates.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_SERIAL
#define HAYATE_IF_SERIAL_(M, EXTERN) M(EXTERN, Kokkos::Serial)
#else
#define HAYATE_IF_SERIAL_(M, EXTERN)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define HAYATE_IF_OPENMP_(M, EXTERN) M(EXTERN, Kokkos::OpenMP)
#else
#define HAYATE_IF_OPENMP_(M, EXTERN)
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define HAYATE_IF_CUDA_(M, EXTERN) M(EXTERN, Kokkos::Cuda)
#else
#define HAYATE_IF_CUDA_(M, EXTERN)
#endif

#define HAYATE_FOR_EACH_SPACE(M, EXTERN) \
  HAYATE_IF_SERIAL_(M, EXTERN) HAYATE_IF_OPENMP_(M, EXTERN) HAYATE_IF_CUDA_(M, EXTERN)
