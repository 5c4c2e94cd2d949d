// STREAM kernels on every backend: the bandwidth ceiling other suites report against.
#include "bench_util.hpp"
#include "stream/stream_kernels.hpp"

namespace hayate::bench {

void register_stream_suite() {
  for (const auto kernel : stream::all_kernels) {
    register_for_each_space(
        std::string("stream/") + stream::kernel_name(kernel),
        [kernel](auto space, benchmark::State& state) {
          using Space = decltype(space);
          const std::int64_t n = state.range(0);
          const int unroll = static_cast<int>(state.range(1));
          stream::StreamArrays<Space, double> arrays(n);
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
}

}  // namespace hayate::bench
