// One main for every unit test: Kokkos lives for the whole test program.
#include "compat/kokkos_compat.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  hayate::compat::initialize_kokkos(0, -1);
  hayate::core::register_builtin_problems(hayate::core::Registry::instance());
  const int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
