// FHP site updates per second for each kernel, model and backend, over lattice sizes from the
// source's 416 x 256 up to 32768 x 32768. The bits kernel needs a multiple of 64 columns, so
// it runs the source's lattice transposed (256 x 416); the byte kernels run both shapes.
// Sizes above HAYATE_FHP_BENCH_MAX_SITES (default 2^24 sites) are not registered, so a laptop
// run stays short; raise it on a GPU for the large ones.
// bytes_per_update is the DRAM traffic of one site update if every word is read and written
// once: multiply by site_updates_per_second and divide by stream/copy's bytes_per_second for
// the fraction of the bandwidth bound.
#include "bench_util.hpp"
#include "fhp/fhp_init.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace hayate::bench {
namespace {

std::int64_t max_sites() {
  const char* env = std::getenv("HAYATE_FHP_BENCH_MAX_SITES");
  return env ? std::atoll(env) : (std::int64_t(1) << 24);
}

// Lattices up to max_sites(); rows of 64-site words only when the kernel needs them.
void add_sizes(benchmark::internal::Benchmark* b, bool words_of_64) {
  const std::int64_t limit = max_sites();
  const std::int64_t sizes[][2] = {{416, 256},   {256, 416},   {1024, 1024},   {2048, 2048},
                                   {4096, 4096}, {8192, 8192}, {16384, 16384}, {32768, 32768}};
  for (const auto& s : sizes)
    if (s[0] * s[1] <= limit && (!words_of_64 || s[0] % 64 == 0)) b->Args({s[0], s[1]});
  b->ArgNames({"nx", "ny"});
}
void byte_sizes(benchmark::internal::Benchmark* b) {
  add_sizes(b, false);
}
void bit_sizes(benchmark::internal::Benchmark* b) {
  add_sizes(b, true);
}

// Times the engine of `kernel` for `model` on `space`.
template <class Space>
void run_fhp(const Space& space, benchmark::State& state, fhp::Kernel kernel, fhp::Model model) {
  const fhp::LatticeShape shape{int(state.range(0)), int(state.range(1))};
  auto engine = fhp::make_engine(space, kernel, model, shape, fhp::StepParams{1, 0});
  {
    fhp::SiteBytes<Space> sites("hayate::fhp::bench_sites", shape.sites()), none("none", 0);
    fhp::InitialFlow flow;
    flow.density = model == fhp::Model::fhp1 ? 1.8 : 2.1;
    flow.ux = 0.1;
    fhp::initialize_sites(space, sites, shape, model, flow, none);
    engine->load(sites);
    space.fence();
  }
  // Enough steps per timed region that launch latency does not dominate small lattices.
  const std::int64_t steps =
      std::clamp<std::int64_t>((std::int64_t(1) << 26) / shape.sites(), 1, 200);
  std::int64_t step = 0;
  engine->advance(step++);  // warm-up: page placement, clocks
  for (auto _ : state)
    time_region(state, space, [&] {
      for (std::int64_t s = 0; s < steps; ++s) engine->advance(step++);
    });
  const double updates = double(shape.sites()) * double(steps);
  state.counters["site_updates_per_second"] = rate(updates);
  state.counters["bytes_per_second"] = rate(updates * engine->bytes_per_update());
  state.counters["bytes_per_update"] = engine->bytes_per_update();
  state.counters["sites"] = double(shape.sites());
}

}  // namespace

void register_fhp_suite() {
  const fhp::Kernel kernels[] = {fhp::Kernel::bytes_wide, fhp::Kernel::bytes_sliced,
                                 fhp::Kernel::bits};
  for (const fhp::Kernel kernel : kernels)
    for (const fhp::Model model : {fhp::Model::fhp3, fhp::Model::fhp1})
      register_for_each_space(
          "fhp/" + fhp::kernel_name(kernel) + "/" + fhp::model_name(model),
          [kernel, model](auto space, benchmark::State& state) {
            run_fhp(space, state, kernel, model);
          },
          kernel == fhp::Kernel::bits ? bit_sizes : byte_sizes);
}

}  // namespace hayate::bench
