#pragma once
// Google Benchmark helpers: one registration per enabled execution space, manual timing
// between fences, rates as counters.
#include "exec/dispatch.hpp"

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace hayate::bench {

// Registers `body(space, state)` as "<name>/<backend>" for every enabled backend. The body
// must report the timed region with time_region() so the fence is always inside the timing.
template <class Body>
void register_for_each_space(const std::string& name, Body body,
                             void (*configure)(benchmark::internal::Benchmark*) = nullptr) {
  for (const auto& backend : core::enabled_backends()) {
    auto* b = benchmark::RegisterBenchmark((name + "/" + backend).c_str(),
                                           [body, backend](benchmark::State& state) {
                                             core::dispatch_backend(backend, [&](auto space) {
                                               body(space, state);
                                               return 0;
                                             });
                                           });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (configure) configure(b);
  }
}

// Times `work` (which launches device work) between fences; records it as the iteration time.
template <class Space, class Work>
double time_region(benchmark::State& state, const Space& space, Work&& work) {
  space.fence();
  const auto start = std::chrono::steady_clock::now();
  work();
  space.fence();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.SetIterationTime(seconds);
  return seconds;
}

// A per-second rate counter ("interactions/s", "bytes/s").
inline benchmark::Counter rate(double per_iteration) {
  return benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace hayate::bench
