// Gravity benchmarks, per execution space: direct-summation throughput (interactions/s) for
// N = 2^10 ... 2^20 and every precision, back-to-back calls, a sweep of tuning.i_per_thread, one
// tree force evaluation (Plummer and the composite galaxy), the tree's key sort, and an FP32
// FMA-throughput probe giving the measured peak that "% of FP32 peak" is taken against. On GPUs
// the tree and the sort also run their portable paths: what the CUDA specializations must beat.
#include "algorithms/radix_sort.hpp"
#include "bench_util.hpp"
#include "exec/exec_traits.hpp"
#include "gravity/direct.hpp"
#include "gravity/initial_conditions.hpp"
#include "gravity/tree_solver.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace hayate::bench {
namespace {

using gravity::Body;
using gravity::DirectShape;

// Largest N per backend: host spaces stop where one evaluation takes seconds.
int max_log2_n(const std::string& backend) {
  if (core::backend_traits(backend).is_gpu) return 20;
  if (backend == "openmp") return 16;
  return 13;
}

// Registers `body(space, state)` for one backend only.
template <class Body>
benchmark::internal::Benchmark* register_on(const std::string& name, const std::string& backend,
                                            Body body) {
  auto* b = benchmark::RegisterBenchmark((name + "/" + backend).c_str(),
                                         [body, backend](benchmark::State& state) {
                                           core::dispatch_backend(backend, [&](auto space) {
                                             body(space, state);
                                             return 0;
                                           });
                                         });
  b->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  return b;
}

// A Plummer sphere packed as kernel sources, padded to the tile with zero masses.
template <class Space, class T>
Kokkos::View<Body<T>*, typename Space::memory_space> plummer_bodies(const Space& space, int n,
                                                                    int tile) {
  const gravity::HostParticles p = gravity::plummer(n, 1.0, 1.0, 1.0, 2026);
  const int padded = (n + tile - 1) / tile * tile;
  Kokkos::View<Body<T>*, typename Space::memory_space> bodies("hayate::bench::bodies", padded);
  auto h = Kokkos::create_mirror_view(bodies);
  for (int i = 0; i < padded; ++i)
    h(i) = i < n ? Body<T>{T(p.x[3 * i]), T(p.x[3 * i + 1]), T(p.x[3 * i + 2]), T(p.m[i])}
                 : Body<T>{T(0), T(0), T(0), T(0)};
  Kokkos::deep_copy(space, bodies, h);
  space.fence();
  return bodies;
}

// Times the force kernel for all N targets from N sources, in the default launch shape with
// IPT targets per thread and the automatic j-split. `calls` force evaluations run back to back
// inside one fenced region, as a time-step loop issues them (1: one fenced call, which includes
// the host's round trip).
template <class Space, class T, class Acc, int IPT>
void run_direct(const Space& space, benchmark::State& state, const int n, const int calls = 1) {
  using Policy = gravity::MonopolePolicy<T, Acc>;
  using Mem = typename Space::memory_space;
  DirectShape shape;
  shape.team_size = gravity::DirectDefaults<Space>::team_size;
  shape.tile = gravity::DirectDefaults<Space>::tile;
  const auto bodies = plummer_bodies<Space, T>(space, n, shape.tile);
  const int padded = int(bodies.extent(0));
  shape.splits = gravity::choose_splits(n, padded, shape.tile, IPT, space.concurrency(), 0);
  gravity::ForceOutput<Space> out{Kokkos::View<double* [3], Mem>("hayate::bench::acc", n), {}, {}};
  gravity::SplitPartial<Acc, Mem> partial;
  const Kokkos::View<const Body<T>*, Mem> src = bodies;
  const T eps2 = T(1e-4);
  auto launch = [&] {
    gravity::launch_direct<Space, Policy, false, IPT>(space, src, n, src, eps2, 1.0, shape, out,
                                                      partial);
  };
  try {
    launch();                          // warm-up: allocations, clocks
  } catch (const std::exception& e) {  // a shape the device cannot launch (registers, scratch)
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state)
    time_region(state, space, [&] {
      for (int c = 0; c < calls; ++c) launch();
    });
  const double interactions = double(calls) * double(n) * double(n);
  state.counters["interactions_per_second"] = rate(interactions);
  state.counters["flops_20_per_second"] = rate(interactions * gravity::flops_per_interaction_20);
  state.counters["flops_38_per_second"] = rate(interactions * gravity::flops_per_interaction_38);
  state.counters["n"] = n;
  state.counters["splits"] = shape.splits;
  state.counters["team_size"] = shape.team_size;
  state.counters["tile"] = shape.tile;
  state.counters["i_per_thread"] = IPT;
  state.counters["calls"] = calls;
}

// run_direct with `ipt` targets per thread (0: tuning.i_per_thread: auto).
template <class Space, class T, class Acc>
void run_direct_ipt(const Space& space, benchmark::State& state, const int n, int ipt,
                    const int calls = 1) {
  if (ipt == 0) ipt = gravity::DirectDefaults<Space>::auto_i_per_thread(n);
  switch (ipt) {
    case 1:
      run_direct<Space, T, Acc, 1>(space, state, n, calls);
      break;
    case 2:
      run_direct<Space, T, Acc, 2>(space, state, n, calls);
      break;
    case 4:
      run_direct<Space, T, Acc, 4>(space, state, n, calls);
      break;
    default:
      run_direct<Space, T, Acc, 8>(space, state, n, calls);
      break;
  }
}

// FP32 fused multiply-add throughput: 8 independent chains per work item.
template <class Space>
void run_fp32_peak(const Space& space, benchmark::State& state) {
  const int items = core::ExecTraits<Space>::is_gpu ? (1 << 21) : 64 * space.concurrency();
  const int rounds = 2048;
  Kokkos::View<float*, typename Space::memory_space> sink("hayate::bench::sink", items);
  auto launch = [&] {
    Kokkos::parallel_for(
        "hayate::gravity::fp32_peak", Kokkos::RangePolicy<Space>(space, 0, items),
        KOKKOS_LAMBDA(const int i) {
          const float y = 0.9999f, z = 1e-4f;
          float a[8];
          for (int k = 0; k < 8; ++k) a[k] = float(i + k) * 1e-6f;
          for (int r = 0; r < rounds; ++r)
            for (int k = 0; k < 8; ++k) a[k] = a[k] * y + z;
          float s = 0;
          for (int k = 0; k < 8; ++k) s += a[k];
          sink(i) = s;
        });
  };
  launch();
  for (auto _ : state) time_region(state, space, launch);
  state.counters["flops_per_second"] = rate(double(items) * rounds * 8 * 2);
}

// One tree force evaluation of all particles (keys, sort, build, moments, group walk; FP32,
// acceleration MAC at dacc = 2^-9 from accelerations of a first theta-MAC evaluation), with the
// space's walk primitives or the portable ones.
template <class Space>
void run_tree(const Space& space, benchmark::State& state, const int n, const bool galaxy,
              const gravity::WalkKernel kernel) {
  const gravity::HostParticles hp =
      galaxy ? gravity::galaxy(n, {0.05, 0.2, 0.1, 1.0, 0.1, 1.5, 1.0, 3.0, 10.0, false}, 1.0, 7)
             : gravity::plummer(n, 1.0, 1.0, 1.0, 2026);
  gravity::Particles<Space> p(space, n);
  auto x = Kokkos::create_mirror_view(p.x);
  auto m = Kokkos::create_mirror_view(p.m);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) x(i, c) = hp.x[3 * i + c];
    m(i) = hp.m[i];
  }
  Kokkos::deep_copy(space, p.x, x);
  Kokkos::deep_copy(space, p.m, m);
  space.fence();
  gravity::TreeParams params;
  params.rebuild_every = 1;  // every evaluation pays for its tree
  params.kernel = kernel;
  const double eps = galaxy ? 0.02 : 0.005;
  gravity::TreeForce<Space> tree(
      space, gravity::Precision::Float, params, 1.0, eps,
      gravity::DirectSolver<Space>(space, gravity::Precision::Float, {}, 1.0, eps));
  core::Timers timers;
  Kokkos::View<double* [3], typename Space::memory_space> acc("hayate::bench::acc", n);
  tree.accelerations(p, {{}, n}, false, {p.acc, {}, {}}, timers, false);  // theta first step
  auto evaluate = [&] { tree.accelerations(p, {{}, n}, false, {acc, {}, {}}, timers, false); };
  evaluate();
  for (auto _ : state) time_region(state, space, evaluate);
  state.counters["particles_per_second"] = rate(double(n));
  state.counters["n"] = n;
  state.counters["nodes"] = tree.tree().n_nodes();
}

// Stable sort of n (63-bit key, index) pairs, as the tree build sorts its keys: the sort the
// space runs, or the portable one.
template <class Space>
void run_sort(const Space& space, benchmark::State& state, const int n, const bool portable) {
  using Mem = typename Space::memory_space;
  Kokkos::View<std::uint64_t*, Mem> source("hayate::bench::keys", n),
      keys("hayate::bench::keys", n);
  Kokkos::View<int*, Mem> values("hayate::bench::values", n);
  auto h = Kokkos::create_mirror_view(source);
  std::uint64_t s = 88172645463325252ull;
  for (int i = 0; i < n; ++i) {  // xorshift64: any well-spread keys do
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    h(i) = s >> 1;
  }
  Kokkos::deep_copy(space, source, h);
  core::RadixSortBuffers<Space> buffers;
  auto reset = [&] {
    Kokkos::deep_copy(space, keys, source);
    Kokkos::parallel_for(
        "hayate::gravity::bench_iota", Kokkos::RangePolicy<Space>(space, 0, n),
        KOKKOS_LAMBDA(const int i) { values(i) = i; });
  };
  auto sort = [&] {
    if (portable)
      core::sort_pairs_portable(space, keys, values, n, 63, buffers);
    else
      core::sort_pairs(space, keys, values, n, 63, buffers);
  };
  reset();
  sort();
  for (auto _ : state) {
    reset();
    time_region(state, space, sort);
  }
  state.counters["pairs_per_second"] = rate(double(n));
  state.counters["n"] = n;
}

}  // namespace

void register_gravity_suite() {
  for (const auto& backend : core::enabled_backends()) {
    const int top = max_log2_n(backend);
    const bool gpu = core::backend_traits(backend).is_gpu;
    register_on("gravity/fp32_peak", backend,
                [](auto space, benchmark::State& state) { run_fp32_peak(space, state); });
    // The headline: default shape, automatic j-split and targets per thread, every precision.
    struct Prec {
      const char* name;
      int top;
    };
    for (const Prec prec : {Prec{"float", top}, Prec{"mixed", top}, Prec{"double", top - 2}}) {
      const std::string p = prec.name;
      auto* b =
          register_on("gravity/direct/" + p, backend, [p](auto space, benchmark::State& state) {
            using Space = decltype(space);
            const int n = int(state.range(0));
            if (p == "float") run_direct_ipt<Space, float, float>(space, state, n, 0);
            if (p == "mixed") run_direct_ipt<Space, float, double>(space, state, n, 0);
            if (p == "double") run_direct_ipt<Space, double, double>(space, state, n, 0);
          });
      for (int e = 10; e <= prec.top; ++e) b->Arg(1 << e);
    }
    // Throughput of back-to-back calls (16 per fenced region): the rate a time-step loop sees,
    // without the host round trip that a single fenced call pays.
    auto* stream = register_on(
        "gravity/direct_stream/float", backend, [](auto space, benchmark::State& state) {
          using Space = decltype(space);
          run_direct_ipt<Space, float, float>(space, state, int(state.range(0)), 0, 16);
        });
    for (int e = 10; e <= std::min(top, 18); e += (e < 14 ? 1 : 4)) stream->Arg(1 << e);
    // tuning.i_per_thread (FP32) at a large and a small N: the data its auto rule comes from.
    for (const int n : {1 << std::min(top, 18), 1 << 12})
      for (const int ipt : {1, 2, 4, 8})
        register_on(
            "gravity/direct_sweep/float/n:" + std::to_string(n) + "/ipt:" + std::to_string(ipt),
            backend, [n, ipt](auto space, benchmark::State& state) {
              using Space = decltype(space);
              run_direct_ipt<Space, float, float>(space, state, n, ipt);
            });
    // Tree: a full evaluation per iteration, Plummer and the composite galaxy; on GPUs also
    // with the portable walk primitives.
    for (const char* model : {"plummer", "galaxy"}) {
      const bool galaxy = std::string(model) == "galaxy";
      for (const bool portable : gpu ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
        const gravity::WalkKernel kernel =
            portable ? gravity::WalkKernel::Portable : gravity::WalkKernel::Auto;
        auto* t = register_on(
            std::string("gravity/tree/") + model + (portable ? "/group_portable" : "/group"),
            backend, [galaxy, kernel](auto space, benchmark::State& state) {
              run_tree(space, state, int(state.range(0)), galaxy, kernel);
            });
        for (int e = gpu ? 16 : 12; e <= (gpu ? 20 : top); e += 2) t->Arg(1 << e);
      }
    }
    // The tree's key sort: the portable radix sort, and on GPUs the backend's (CUB on CUDA).
    for (const bool portable : gpu ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
      auto* t = register_on(std::string("gravity/sort/") + (portable ? "portable" : "backend"),
                            backend, [portable](auto space, benchmark::State& state) {
                              run_sort(space, state, int(state.range(0)), portable);
                            });
      for (int e = 16; e <= (gpu ? 23 : 20); e += gpu ? 1 : 2) t->Arg(1 << e);
    }
  }
}

}  // namespace hayate::bench
