#pragma once
// Typed tests over every enabled execution space (Serial alone with HAYATE_TEST_SERIAL_ONLY, the
// sanitizer preset's choice). Test names end in the backend name
// ("Suite/openmp.Case"), which CTest uses to register and label one test per backend.
#include "exec/dispatch.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <string>
#include <tuple>

namespace hayate::test {

template <class... Ts>
struct TupleToTypes;
template <class... Ts>
struct TupleToTypes<std::tuple<Ts...>> {
  using type = ::testing::Types<Ts...>;
};

#ifdef KOKKOS_ENABLE_SERIAL
using SerialSpaces = std::tuple<Kokkos::Serial>;
#else
using SerialSpaces = std::tuple<>;
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(HAYATE_TEST_SERIAL_ONLY)
using OpenMPSpaces = std::tuple<Kokkos::OpenMP>;
#else
using OpenMPSpaces = std::tuple<>;
#endif
#if defined(KOKKOS_ENABLE_CUDA) && !defined(HAYATE_TEST_SERIAL_ONLY)
using CudaSpaces = std::tuple<Kokkos::Cuda>;
#else
using CudaSpaces = std::tuple<>;
#endif

using EnabledSpaces =
    TupleToTypes<decltype(std::tuple_cat(CudaSpaces{}, OpenMPSpaces{}, SerialSpaces{}))>::type;

struct SpaceNames {
  template <class Space>
  static std::string GetName(int) {
    return core::space_name<Space>();
  }
};

}  // namespace hayate::test

// Declares a typed test suite that runs for every enabled execution space.
#define HAYATE_SPACE_TEST_SUITE(Suite) \
  TYPED_TEST_SUITE(Suite, ::hayate::test::EnabledSpaces, ::hayate::test::SpaceNames)
