// STREAM kernels on every backend: the bandwidth ceiling other suites report against. And the
// launch floor: what a fenced call costs with no work in it, per kind of launch, which bounds
// every small problem (direct N-body at small N, one ODE step).
#include "bench_util.hpp"
#include "stream/stream_kernels.hpp"

namespace hayate::bench {
namespace {

// The launch floor's one item of work (functors: generic lambdas cannot hold device lambdas).
template <class Space>
struct TouchOne {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  Kokkos::View<int*, typename Space::memory_space> sink;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { sink(i) += 1; }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    if (team.team_rank() == 0) sink(0) += 1;
  }
};

}  // namespace

void register_stream_suite() {
  for (const auto kernel : stream::all_kernels) {
    register_for_each_space(
        std::string("stream/") + stream::kernel_name(kernel),
        [kernel](auto space, benchmark::State& state) {
          using Space = decltype(space);
          const std::int64_t n = state.range(0);
          const int unroll = static_cast<int>(state.range(1));
          stream::StreamArrays<Space, double> arrays(space, n);
          arrays.fill();
          arrays.run(kernel, 0.5, unroll);  // warm-up: page placement, clocks
          for (auto _ : state) time_region(state, space, [&] { arrays.run(kernel, 0.5, unroll); });
          state.counters["bytes_per_second"] = rate(double(arrays.bytes(kernel)));
          state.counters["n"] = double(n);
        },
        [](benchmark::internal::Benchmark* b) {
          b->ArgNames({"n", "unroll"});
          for (std::int64_t n : {1 << 20, 1 << 24, 1 << 27})
            for (int unroll : {1, 2, 4, 8}) b->Args({n, unroll});
        });
  }
  // One launch of one item per iteration, fenced: fence alone, a range launch, a team launch,
  // and a team launch with level-0 scratch (the direct N-body kernel's kind).
  for (const char* kind : {"fence", "range", "team", "team_scratch"}) {
    const std::string k = kind;
    register_for_each_space(
        std::string("launch/") + kind, [k](auto space, benchmark::State& state) {
          using Space = decltype(space);
          const TouchOne<Space> touch{Kokkos::View<int*, typename Space::memory_space>("sink", 1)};
          auto call = [&] {
            if (k == "range") {
              Kokkos::parallel_for("hayate::bench::launch_range",
                                   Kokkos::RangePolicy<Space>(space, 0, 1), touch);
            } else if (k != "fence") {
              Kokkos::TeamPolicy<Space> policy(space, 1, Kokkos::AUTO);
              if (k == "team_scratch") policy.set_scratch_size(0, Kokkos::PerTeam(4096));
              Kokkos::parallel_for("hayate::bench::launch_team", policy, touch);
            }
          };
          call();
          for (auto _ : state) time_region(state, space, call);
          state.counters["calls_per_second"] = rate(1.0);
        });
  }
}

}  // namespace hayate::bench
