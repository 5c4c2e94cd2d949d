// Google Benchmark main with Kokkos alive for the whole run. Suites register themselves from
// functions listed in bench_suites.cpp so static-library linking never drops one.
#include "compat/kokkos_compat.hpp"

#include <benchmark/benchmark.h>

namespace hayate::bench {
void register_all_suites();
}

int main(int argc, char** argv) {
  hayate::compat::initialize_kokkos(0, -1);
  {
    hayate::bench::register_all_suites();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      Kokkos::finalize();
      return 2;
    }
    benchmark::AddCustomContext("kokkos", hayate::compat::kokkos_version_string());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  }
  Kokkos::finalize();
  return 0;
}
