// The engine on an execution-space instance of its own: every kernel of every mode runs there.
// The GPU's rounding of p + q * r (backends/cuda/rounding.hpp) equals the portable expression's.
// The tuning: section's auto rules pick, for each backend and problem shape, a mode that runs it.
#include "compat/kokkos_compat.hpp"
#include "launch_log.hpp"
#include "ode/engine.hpp"
#include "ode/tuning.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace hayate::ode {
namespace {

template <class Space>
class OdeExec : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(OdeExec);

// Two coupled cells (so teams mode has bins and phases) with a rate function and a sum.
const char* two_cells = R"yaml(modules:
  cell:
    inputs: [I_c]
    parameters: {g: 0.3, E: -60.0}
    algebraics:
      a: "0.1*exp(-(V + 40)/10)"
    states:
      V: {init: -65.0, ddt: "-g*(V - E) - a*V + I_c"}
      m: {init: 0.1, ddt: "a*(1 - m) - 0.2*m"}
network:
  - {name: c, module: cell, count: 2}
connections:
  - {from: c, topology: line, input: I_c, term: "0.05*(pre.V - post.V)"}
)yaml";

TYPED_TEST(OdeExec, RunsOnTheGivenInstance) {
  using Space = TypeParam;
  compat::IndependentInstance<Space> inst;
  const Space& space = inst.space();
  const FlatModel model = load_model_string(two_cells, "two_cells.yaml");
  CompilerOptions o = all_passes();
  o.partitions = 0;
  const Program prog = compile(model, o);
  test::KernelLaunchLog log;
  struct Case {
    ExecMode mode;
    std::size_t members;
    Method method;
  };
  for (const auto& [mode, members, method] :
       {Case{ExecMode::Phases, 1, Method::Euler}, Case{ExecMode::Persistent, 3, Method::RK4},
        Case{ExecMode::Fused, 5, Method::RK4}, Case{ExecMode::Teams, 1, Method::Euler},
        Case{ExecMode::Teams, 1, Method::RK4}, Case{ExecMode::Phases, 2, Method::RK45}}) {
    Engine<Space> dev(space, prog, members, method, mode);
    std::vector<double> x(prog.n_states * members);
    for (std::size_t i = 0; i < prog.n_states; ++i)
      for (std::size_t m = 0; m < members; ++m) x[i * members + m] = model.state_init[i];
    dev.set_states(x);
    if (method == Method::RK45) {
      double h = 0.01;
      AdaptiveStats stats;
      dev.advance_adaptive(0.0, 0.1, h, 1e-6, 1e-8, stats);
    } else {
      dev.advance(0, 5, 0.01);
    }
    dev.evaluate(0.05);
    EXPECT_TRUE(std::isfinite(dev.states_host()[0]));
  }
  const auto kernels = log.hayate_kernels();
  EXPECT_FALSE(kernels.empty());
  const auto elsewhere = log.elsewhere(compat::tools_device_id(space));
  EXPECT_TRUE(elsewhere.empty()) << elsewhere.size() << " kernels elsewhere, the first "
                                 << (elsewhere.empty() ? std::string() : elsewhere.front());
  for (const char* label : {"hayate::ode::phase", "hayate::ode::persistent", "hayate::ode::fused",
                            "hayate::ode::teams_local", "hayate::ode::dp_error"}) {
    bool ran = false;
    for (const auto& k : kernels) ran = ran || k.first == label;
    EXPECT_TRUE(ran) << label;
  }
}

// Values where one rounding (a fused multiply-add) and two differ: q r = 1 - 2^-60 rounds to 1,
// so p + q r is 0 with the product rounded first and -2^-60 without.
template <class Space>
std::vector<double> add_products_on(const Space& space, const std::vector<double>& pqr) {
  const std::size_t n = pqr.size() / 3;
  Kokkos::View<double*, typename Space::memory_space> in("hayate_test::pqr", pqr.size()),
      out("hayate_test::sums", n);
  auto h_in = Kokkos::create_mirror_view(in);
  for (std::size_t i = 0; i < pqr.size(); ++i) h_in(i) = pqr[i];
  Kokkos::deep_copy(space, in, h_in);
  Kokkos::parallel_for(
      "hayate_test::add_product", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::size_t i) {
        out(i) = add_product_rounded<Space>(in(3 * i), in(3 * i + 1), in(3 * i + 2));
      });
  auto h_out = Kokkos::create_mirror_view(out);
  Kokkos::deep_copy(space, h_out, out);
  space.fence();
  return std::vector<double>(h_out.data(), h_out.data() + n);
}

TYPED_TEST(OdeExec, AddProductRoundsTheProductFirst) {
  const double e = std::ldexp(1.0, -30);
  const std::vector<double> pqr = {-1.0, 1.0 + e, 1.0 - e,    // 0, not -2^-60
                                   0.5,  3.0,     1.0 / 3.0,  // inexact product
                                   -0.0, 0.0,     1.0,        // signed zeros
                                   1.0,  1e308,   10.0,       // overflow
                                   2.0,  -0.0,    INFINITY};  // 0 * inf
  const auto got = add_products_on(TypeParam(), pqr);
  for (std::size_t i = 0; i < got.size(); ++i) {
    // The portable expression, with the product kept apart from the sum on the host too.
    volatile double product = pqr[3 * i + 1] * pqr[3 * i + 2];
    const double expected = pqr[3 * i] + product;
    const bool same = (std::isnan(got[i]) && std::isnan(expected)) ||
                      std::memcmp(&got[i], &expected, sizeof(double)) == 0;
    EXPECT_TRUE(same) << "case " << i << ": " << got[i] << " expected " << expected;
  }
  EXPECT_EQ(got[0], 0.0);
}

// tuning.mode auto never picks a mode the engine refuses: teams only for one member and a fixed
// step, rk45 only in phases; explicit values pass through.
TEST(OdeTuning, AutoRulesFollowTheBackendAndTheShape) {
  const core::BackendTraits gpu{"gpu", true, 32}, cpu{"cpu", false, 1};
  const TuningKeys automatic;
  struct Case {
    const core::BackendTraits* backend;
    std::size_t members;
    Method method;
    RunMode mode;
  };
  for (const auto& [backend, members, method, mode] :
       {Case{&gpu, 1, Method::Euler, RunMode::Teams}, Case{&gpu, 1, Method::RK4, RunMode::Teams},
        Case{&gpu, 1, Method::RK45, RunMode::Phases}, Case{&gpu, 64, Method::RK4, RunMode::Fused},
        Case{&gpu, 64, Method::RK45, RunMode::Phases},
        Case{&cpu, 1, Method::Euler, RunMode::Phases}, Case{&cpu, 1, Method::RK4, RunMode::Phases},
        Case{&cpu, 8, Method::Euler, RunMode::Fused},
        Case{&cpu, 8, Method::RK45, RunMode::Phases}}) {
    const Tuning t = resolve_tuning(automatic, *backend, members, method);
    EXPECT_EQ(t.mode, mode) << backend->name << " members " << members << " method " << int(method);
    EXPECT_TRUE(t.mode_auto);
    EXPECT_EQ(t.members_per_thread, 0);
    EXPECT_EQ(t.halo, backend->is_gpu ? 8 : 0);
    EXPECT_FALSE(t.host_halo);
  }
  const Tuning fixed = resolve_tuning(TuningKeys{"reference", "2", "4"}, cpu, 3, Method::RK4);
  EXPECT_EQ(fixed.mode, RunMode::Reference);
  EXPECT_FALSE(fixed.mode_auto);
  EXPECT_EQ(fixed.members_per_thread, 2);
  EXPECT_EQ(fixed.halo, 4);
  EXPECT_TRUE(fixed.host_halo);  // an explicit halo is used on CPU threads too
  EXPECT_FALSE(resolve_tuning(TuningKeys{"teams", "auto", "4"}, gpu, 1, Method::Euler).host_halo);
}

}  // namespace
}  // namespace hayate::ode
