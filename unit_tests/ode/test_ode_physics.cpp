// The bundled models reproduce their papers: Luo-Rudy 1991 action potential at 1 Hz pacing and
// the Wang-Buzsaki 1996 interneuron's rest and firing rate. Run by the serial reference
// interpreter.
#include "cli_runner.hpp"
#include "ode/compiler.hpp"
#include "ode/reference.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace hayate::ode {
namespace {

struct Trace {
  std::vector<double> t, v;
};

// Runs a model with the reference interpreter, recording state `name` every `every` steps.
Trace run(const FlatModel& model, const std::string& name, Method method, double dt, double t_end,
          int every, const std::vector<double>& params = {}) {
  CompilerOptions o;
  o.merge = o.reorder = o.pad = o.unify = true;
  const Program prog = compile(model, o);
  ReferenceInterpreter ref(prog, 1, method);
  ref.x() = model.state_init;
  std::copy(params.begin(), params.end(), ref.v.begin() + prog.n_alg);
  bool is_state = false;
  std::uint32_t index = 0;
  EXPECT_TRUE(model.find(name, is_state, index) && is_state);
  Trace tr;
  const auto steps = static_cast<std::int64_t>(std::llround(t_end / dt));
  for (std::int64_t n = 0; n < steps; n += every) {
    tr.t.push_back(double(n) * dt);
    tr.v.push_back(ref.x()[index]);
    ref.advance(n, every, dt);
  }
  return tr;
}

TEST(OdePhysics, LuoRudy1991AtOneHertz) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/lr91.model.yaml"));
  // Two beats (stimuli at 10 and 1010 ms); the second is measured.
  const Trace tr = run(model, "lr91.V", Method::Euler, 0.01, 2000.0, 5);
  const auto at = [&](double t) { return std::size_t(std::llround(t / 0.05)); };
  const double rest = tr.v[at(1009.0)];
  EXPECT_NEAR(rest, -84.0, 1.5);
  std::size_t peak = at(1010.0);
  for (std::size_t i = at(1010.0); i < at(1100.0); ++i)
    if (tr.v[i] > tr.v[peak]) peak = i;
  EXPECT_GE(tr.v[peak], 40.0);
  EXPECT_LE(tr.v[peak], 50.0);
  // APD90: from the upstroke (crossing -40 mV) to 90% repolarization.
  const double v90 = tr.v[peak] - 0.9 * (tr.v[peak] - rest);
  std::size_t up = at(1010.0), down = peak;
  while (tr.v[up] < -40.0) ++up;
  while (down < tr.v.size() && tr.v[down] > v90) ++down;
  ASSERT_LT(down, tr.v.size());
  const double apd90 = tr.t[down] - tr.t[up];
  EXPECT_GE(apd90, 300.0);
  EXPECT_LE(apd90, 400.0);
  // And it returns to rest before the next beat.
  EXPECT_NEAR(tr.v.back(), rest, 1.0);
}

int spikes_after(const Trace& tr, double t0, double& first, double& last) {
  int n = 0;
  for (std::size_t i = 1; i < tr.v.size(); ++i)
    if (tr.t[i] > t0 && tr.v[i - 1] < -20.0 && tr.v[i] >= -20.0) {
      if (n++ == 0) first = tr.t[i];
      last = tr.t[i];
    }
  return n;
}

TEST(OdePhysics, WangBuzsaki1996RestAndFiring) {
  ModelOptions mo;
  mo.swept = {"wb.I_app"};
  const FlatModel model = load_model_file(test::source_path("inputs/ode/wb96.model.yaml"), mo);
  const Trace rest = run(model, "wb.V", Method::RK4, 0.02, 300.0, 5, {0.0});
  EXPECT_NEAR(rest.v.back(), -64.0, 1.0);
  EXPECT_LT(*std::max_element(rest.v.begin() + 500, rest.v.end()), -60.0);  // silent
  const Trace fire = run(model, "wb.V", Method::RK4, 0.02, 600.0, 1, {1.0});
  double first = 0, last = 0;
  const int n = spikes_after(fire, 100.0, first, last);
  ASSERT_GE(n, 10);
  const double rate = 1000.0 * (n - 1) / (last - first);
  EXPECT_GE(rate, 55.0);
  EXPECT_LE(rate, 65.0);
  EXPECT_GT(*std::max_element(fire.v.begin(), fire.v.end()), 0.0);  // overshooting spikes
}

// The Rybak-style CPG alternates: spikes of the flexor and extensor rhythm generators, counted in
// 50 ms bins over the first second, are anticorrelated, and each side has active and silent bins.
TEST(OdePhysics, RybakHalfCentresBurstInAntiphase) {
  const FlatModel model = load_model_file(test::source_path("inputs/ode/rybak_cpg.model.yaml"));
  CompilerOptions o;
  o.merge = o.reorder = o.pad = o.unify = true;
  const Program prog = compile(model, o);
  ReferenceInterpreter ref(prog, 1, Method::RK4);
  ref.x() = model.state_init;
  std::vector<std::uint32_t> v[2];
  for (int side = 0; side < 2; ++side)
    for (int i = 0; i < 20; ++i) {
      bool is_state = false;
      std::uint32_t index = 0;
      ASSERT_TRUE(model.find(fmt::format("{}[{}].V", side ? "rge" : "rgf", i), is_state, index));
      v[side].push_back(index);
    }
  const double dt = 0.02;
  const int per_bin = 2500, bins = 20;  // 50 ms bins, 1 s
  std::vector<double> count[2] = {std::vector<double>(bins, 0), std::vector<double>(bins, 0)};
  std::vector<double> previous(ref.x());
  for (int b = 0; b < bins; ++b)
    for (int k = 0; k < per_bin; ++k) {
      ref.advance(std::int64_t(b) * per_bin + k, 1, dt);
      for (int side = 0; side < 2; ++side)
        for (std::uint32_t i : v[side])
          if (previous[i] < -20.0 && ref.x()[i] >= -20.0) ++count[side][b];
      previous = ref.x();
    }
  double mean[2] = {0, 0};
  int active[2] = {0, 0}, silent[2] = {0, 0};
  for (int side = 0; side < 2; ++side)
    for (int b = 0; b < bins; ++b) {
      mean[side] += count[side][b] / bins;
      active[side] += count[side][b] >= 20;  // at least one spike per neuron in the bin
      silent[side] += count[side][b] == 0;
    }
  double cov = 0, var0 = 0, var1 = 0;
  for (int b = 0; b < bins; ++b) {
    cov += (count[0][b] - mean[0]) * (count[1][b] - mean[1]);
    var0 += (count[0][b] - mean[0]) * (count[0][b] - mean[0]);
    var1 += (count[1][b] - mean[1]) * (count[1][b] - mean[1]);
  }
  ASSERT_GT(var0 * var1, 0.0);
  EXPECT_LT(cov / std::sqrt(var0 * var1), -0.6);
  for (int side = 0; side < 2; ++side) {
    EXPECT_GE(active[side], 4) << "side " << side;
    EXPECT_GE(silent[side], 4) << "side " << side;
  }
}

}  // namespace
}  // namespace hayate::ode
