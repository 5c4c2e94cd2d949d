// Validation of the bundled models against their papers and against cable and network theory
// (ctest -L validation; docs/user/ode.md, "Validation", cites each source). Run by the serial
// reference interpreter, which the device modes match step by step (test_ode_engine.cpp): on a
// loaded 2-core machine one core beats threads that wait for each other.
#include "cli_runner.hpp"
#include "ode/compiler.hpp"
#include "ode/reference.hpp"
#include "validation_output.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace hayate::ode {
namespace {

// The text of a bundled model with edits applied: variants (another ring length, a swept
// parameter) stay tied to the shipped equations, and an edit that no longer matches exactly
// once fails the test instead of silently testing something else.
std::string bundled_model(const std::string& name,
                          const std::vector<std::pair<std::string, std::string>>& edits = {}) {
  std::ifstream in(test::source_path("inputs/ode/" + name));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(text.empty()) << name;
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << name << " no longer contains: " << from;
    if (at == std::string::npos) continue;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << name << " contains twice: " << from;
    text.replace(at, from.size(), to);
  }
  return text;
}

FlatModel load(const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& edits = {},
               const ModelOptions& options = {}) {
  return load_model_string(bundled_model(name, edits), name, options);
}

// A model on the reference interpreter, one step at a time; states of ensemble member m are at
// x[state * members + m].
class Simulation {
 public:
  Simulation(const FlatModel& model, Method method, std::size_t members = 1,
             const std::vector<double>& swept = {})
      : model_(model),
        program_(compile(model, CompilerOptions{})),
        ref_(program_, members, method) {
    auto& x = ref_.x();
    for (std::size_t s = 0; s < model.n_states(); ++s)
      for (std::size_t m = 0; m < members; ++m) x[s * members + m] = model.state_init[s];
    // Swept parameters follow the algebraic variables, one value per member each.
    std::copy(swept.begin(), swept.end(),
              ref_.v.begin() + std::ptrdiff_t(program_.n_alg * members));
  }

  std::uint32_t state(const std::string& name) const {
    bool is_state = false;
    std::uint32_t index = 0;
    EXPECT_TRUE(model_.find(name, is_state, index) && is_state) << name;
    return index;
  }
  std::size_t members() const { return ref_.members(); }
  double t() const { return t_; }
  double x(std::uint32_t state, std::size_t member = 0) {
    return ref_.x()[state * ref_.members() + member];
  }
  void set(std::uint32_t state, double value, std::size_t member = 0) {
    ref_.x()[state * ref_.members() + member] = value;
  }

  // `steps` steps of `dt`, calling visit() after each.
  template <class Visit>
  void run(double dt, std::int64_t steps, Visit&& visit) {
    for (std::int64_t k = 0; k < steps; ++k) {
      ref_.advance(step_, 1, dt);
      t_ = double(++step_) * dt;
      visit();
    }
  }

 private:
  const FlatModel& model_;
  Program program_;
  ReferenceInterpreter ref_;
  std::int64_t step_ = 0;
  double t_ = 0;
};

// Upward crossings of a level, interpolated linearly between samples.
class Crossings {
 public:
  explicit Crossings(double level) : level_(level) {}
  void add(double t, double v) {
    if (primed_ && v_ < level_ && v >= level_)
      times.push_back(t_ + (t - t_) * (level_ - v_) / (v - v_));
    t_ = t;
    v_ = v;
    primed_ = true;
  }
  std::vector<double> times;

 private:
  double level_, t_ = 0, v_ = 0;
  bool primed_ = false;
};

// Least-squares slope of y against x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    sxy += (x[k] - mx) * (y[k] - my);
    sxx += (x[k] - mx) * (x[k] - mx);
  }
  return sxy / sxx;
}

// ---------------------------------------------------------------------------------------------
// Luo-Rudy 1991: the cell, the line (LR-Line) and the ring (LR-Ring).

constexpr double cell_length_cm = 0.01;  // 100 um per cell: g_gap = D / dx^2 (lr_line.model.yaml)
constexpr double activation_mV = -40.0;

// Activation times (upward crossings of -40 mV) of every cell of an LR1991 network.
struct Activations {
  std::vector<Crossings> cells;
  std::vector<std::uint32_t> v;
  Activations(Simulation& sim, int n) {
    for (int i = 0; i < n; ++i) {
      v.push_back(sim.state(fmt::format("cell[{}].V", i)));
      cells.emplace_back(activation_mV);
    }
  }
  void record(Simulation& sim) {
    for (std::size_t i = 0; i < v.size(); ++i) cells[i].add(sim.t(), sim.x(v[i]));
  }
  double first(int i) const { return cells[i].times.empty() ? NAN : cells[i].times.front(); }
};

// Delay per cell (ms) of the front between cells lo and hi: a least-squares fit, away from the
// stimulated cells and the sealed end.
double delay_per_cell(const Activations& a, int lo, int hi) {
  std::vector<double> i, t;
  for (int k = lo; k <= hi; ++k) {
    i.push_back(k);
    t.push_back(a.first(k));
  }
  return slope(i, t);
}

// cm/s from ms per cell.
double velocity(double delay_ms) {
  return cell_length_cm / delay_ms * 1000.0;
}

// LR-Line's front, Euler with step dt, until the last cell has fired.
double line_delay(double dt) {
  const FlatModel model = load("lr_line.model.yaml");
  Simulation sim(model, Method::Euler);
  Activations a(sim, 100);
  sim.run(dt, std::llround(45.0 / dt), [&] { a.record(sim); });
  return delay_per_cell(a, 20, 80);
}

// Luo & Rudy (1991), abstract: the fast sodium current gives an upstroke of Vmax = 400 V/s.
TEST(OdeValidation, LuoRudy1991UpstrokeVelocity) {
  const FlatModel model = load("lr91.model.yaml");
  double vmax[2] = {0, 0};
  const double dts[2] = {0.01, 0.001};
  for (int k = 0; k < 2; ++k) {
    Simulation sim(model, Method::Euler);
    const std::uint32_t v = sim.state("lr91.V");
    double previous = sim.x(v);
    sim.run(dts[k], std::llround(20.0 / dts[k]), [&] {
      vmax[k] = std::max(vmax[k], (sim.x(v) - previous) / dts[k]);  // mV/ms = V/s
      previous = sim.x(v);
    });
  }
  std::printf("LR1991 Vmax: %.1f V/s at dt = 0.01 ms, %.1f V/s at dt = 0.001 ms (paper: 400)\n",
              vmax[0], vmax[1]);
  EXPECT_NEAR(vmax[1], 400.0, 20.0);
  EXPECT_NEAR(vmax[0], vmax[1], 0.05 * vmax[1]);  // the shipped step resolves the upstroke
}

// Forward Euler is first order: halving dt halves the change of the conduction velocity, and
// the shipped dt = 0.01 ms is within 2% of the Richardson limit.
TEST(OdeValidation, LuoRudyLineVelocityConvergesWithDt) {
  const double d1 = line_delay(0.01), d2 = line_delay(0.005), d4 = line_delay(0.0025);
  const double v1 = velocity(d1), v2 = velocity(d2), v4 = velocity(d4);
  const double limit = v4 + (v4 - v2);  // first order: the error halves with dt
  std::printf("LR-Line CV: %.2f / %.2f / %.2f cm/s at dt = 0.01 / 0.005 / 0.0025 ms, limit %.2f\n",
              v1, v2, v4, limit);
  EXPECT_NEAR((v2 - v1) / (v4 - v2), 2.0, 0.3);
  EXPECT_NEAR(v1, limit, 0.02 * limit);
  test::write_validation_csv("ode_lr_line_dt", {"dt", "velocity"},
                             {{0.01, v1}, {0.005, v2}, {0.0025, v4}});
}

// Cable theory for a chain of cells: in the foot of the action potential, where the sodium
// current has not yet switched on, V - V_rest = A exp(t / tau) travels with a delay d per cell,
// and C dV_i/dt = g (V_{i+1} - 2 V_i + V_{i-1}) - g_m (V_i - V_rest) gives
//   1 / tau + g_m / C = 2 g (cosh(d / tau) - 1),
// the discrete form of Hodgkin and Huxley's (1952) theta^2 = D / tau_foot. The measured foot
// time constant must agree with the one this predicts from the measured delay.
TEST(OdeValidation, LuoRudyLineFootObeysTheCableEquation) {
  const FlatModel model = load("lr_line.model.yaml");
  const double dt = 0.0025, g = 5.0;  // g_gap / C, 1/ms
  Simulation sim(model, Method::Euler);
  Activations a(sim, 100);
  const std::uint32_t v50 = sim.state("cell[50].V");
  const double rest = sim.x(v50);
  std::vector<double> t_foot, log_foot;
  sim.run(dt, std::llround(45.0 / dt), [&] {
    a.record(sim);
    const double rise = sim.x(v50) - rest;
    if (rise > 0.5 && rise < 10.0 && std::isnan(a.first(50))) {
      t_foot.push_back(sim.t());
      log_foot.push_back(std::log(rise));
    }
  });
  ASSERT_GT(t_foot.size(), 20u);
  const double tau = 1.0 / slope(t_foot, log_foot);
  const double d = delay_per_cell(a, 20, 80);
  // The membrane's resting slope conductance g_m / C: -d(dV/dt)/dV of one resting cell.
  double gm = 0;
  {
    const FlatModel cell = load("lr91.model.yaml");
    Simulation one(cell, Method::Euler);
    const std::uint32_t v = one.state("lr91.V");
    const double v0 = one.x(v);
    std::vector<double> rate;
    for (const double dv : {-0.5, 0.5}) {
      Simulation probe(cell, Method::Euler);
      probe.set(v, v0 + dv);
      probe.run(1e-6, 1, [] {});
      rate.push_back((probe.x(v) - (v0 + dv)) / 1e-6);
    }
    gm = -(rate[1] - rate[0]) / 1.0;
  }
  // Solve 1/tau + gm = 2 g (cosh(d/tau) - 1) for tau by bisection on x = d / tau.
  double lo = 1e-3, hi = 5.0;
  for (int k = 0; k < 200; ++k) {
    const double x = 0.5 * (lo + hi);
    (x / d + gm > 2 * g * (std::cosh(x) - 1) ? lo : hi) = x;
  }
  const double predicted = d / (0.5 * (lo + hi));
  std::printf(
      "LR-Line foot: tau %.4f ms measured, %.4f ms from the cable equation (delay %.4f "
      "ms/cell, g_m %.3f /ms)\n",
      tau, predicted, d, gm);
  EXPECT_NEAR(tau, predicted, 0.03 * predicted);
}

// Action potential duration along a uniform line: the single cell's APD90 everywhere, shortened
// a little along the direction of propagation by the electrotonic load of the cells that fired
// later, so that repolarization sweeps the line faster than activation did.
TEST(OdeValidation, LuoRudyLineActionPotentialDuration) {
  const double dt = 0.01;
  const int cells[] = {5, 25, 50, 75, 95};
  const auto apd90 = [&](const std::vector<double>& v) {  // samples every 0.1 ms
    const double rest = v[90];                            // t = 9 ms, before the stimulus
    const auto peak = std::max_element(v.begin(), v.end()) - v.begin();
    const double v90 = v[peak] - 0.9 * (v[peak] - rest);
    std::size_t up = 0, down = std::size_t(peak);
    while (v[up + 1] < activation_mV) ++up;
    while (down + 1 < v.size() && v[down + 1] > v90) ++down;
    const double t_up = 0.1 * (up + (activation_mV - v[up]) / (v[up + 1] - v[up]));
    const double t_down = 0.1 * (down + (v90 - v[down]) / (v[down + 1] - v[down]));
    return std::make_pair(t_up, t_down);
  };
  const FlatModel single = load("lr91.model.yaml");
  Simulation one(single, Method::Euler);
  std::vector<double> v_one{one.x(one.state("lr91.V"))};
  one.run(dt, 45000, [&] {
    if (std::llround(one.t() / dt) % 10 == 0) v_one.push_back(one.x(one.state("lr91.V")));
  });
  const auto [up1, down1] = apd90(v_one);
  const double apd_cell = down1 - up1;

  const FlatModel model = load("lr_line.model.yaml");
  Simulation sim(model, Method::Euler);
  std::vector<std::vector<double>> v(5);
  std::vector<std::uint32_t> index;
  for (int k = 0; k < 5; ++k) {
    index.push_back(sim.state(fmt::format("cell[{}].V", cells[k])));
    v[k].push_back(sim.x(index[k]));
  }
  sim.run(dt, 45000, [&] {
    if (std::llround(sim.t() / dt) % 10 == 0)
      for (int k = 0; k < 5; ++k) v[k].push_back(sim.x(index[k]));
  });
  std::vector<double> apd, up, down;
  for (int k = 0; k < 5; ++k) {
    const auto [u, d] = apd90(v[k]);
    up.push_back(u);
    down.push_back(d);
    apd.push_back(d - u);
    std::printf("LR-Line cell %d: activation %.2f ms, APD90 %.1f ms (single cell %.1f)\n", cells[k],
                u, d - u, apd_cell);
    EXPECT_NEAR(apd.back(), apd_cell, 0.03 * apd_cell) << "cell " << cells[k];
  }
  for (int k = 1; k < 5; ++k) EXPECT_LT(apd[k], apd[k - 1]) << "cell " << cells[k];
  EXPECT_LT(down[4] - down[0], up[4] - up[0]);
  std::vector<std::vector<double>> table;
  for (int k = 0; k < 5; ++k) table.push_back({double(cells[k]), up[k], apd[k], apd_cell});
  test::write_validation_csv("ode_lr_line", {"cell", "activation", "apd90", "apd90_cell"}, table);
}

// The ring of lr_ring.model.yaml as shipped: stimulated around cell 0, two fronts run both ways
// at the line's velocity and meet at the opposite cell, where they annihilate (each runs into
// the other's refractory tail): every cell fires exactly once and the ring returns to rest.
TEST(OdeValidation, LuoRudyRingWavesCollideAndAnnihilate) {
  const double d_line = line_delay(0.01);
  const FlatModel model = load("lr_ring.model.yaml");
  Simulation sim(model, Method::Euler);
  const int n = 80;
  Activations a(sim, n);
  sim.run(0.01, 50000, [&] { a.record(sim); });
  int last = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(a.cells[i].times.size(), 1u) << "cell " << i;
    if (a.first(i) > a.first(last)) last = i;
  }
  const double d_ring = delay_per_cell(a, 10, 30);
  std::printf("LR-Ring: fronts at %.4f ms/cell (line %.4f) meet at cell %d at %.2f ms\n", d_ring,
              d_line, last, a.first(last));
  EXPECT_NEAR(d_ring, d_line, 0.03 * d_line);
  EXPECT_NEAR(last, n / 2, 1);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(sim.x(a.v[i]), -84.4, 1.0) << "cell " << i;
}

// A ring with a unidirectional block: five cells stimulated at t = 0 while the 10 cells on one
// side of them start with inactivated sodium channels (h = j = 0), so only the front going the
// other way survives. It returns to where it started after the ring's length over the velocity;
// if by then the tissue there has recovered, it goes on circulating: re-entry, as in Mines' (1913)
// rings of heart muscle, with the period length / velocity, and only in rings longer than the
// wavelength (velocity x refractory period; Wiener & Rosenblueth 1946). LR1991's refractory
// period, about its APD of ~370 ms, at 44 cm/s makes a wavelength of ~16 cm, ~1600 cells of
// 100 um: the shipped 80-cell ring sees one lap, and 1800 cells (a lap of 410 ms) circulate.
std::vector<std::pair<std::string, std::string>> ring_with_block(int n) {
  return {{"count: 80", fmt::format("count: {}", n)},
          {"stim_start: 10.0", "stim_start: 0.0"},
          {"      stim_amplitude: \"if(i < 3 || i >= n - 2, -80, 0)\"\n",
           "      stim_amplitude: \"if(i < 5, -80, 0)\"\n"
           "    init:\n"
           "      h: \"if(i >= n - 10, 0, 0.982660523699656)\"\n"
           "      j: \"if(i >= n - 10, 0, 0.989108212766685)\"\n"}};
}

TEST(OdeValidation, LuoRudyRingShorterThanTheWavelengthSeesOneLap) {
  const int n = 80, blocked = n - 10;
  const FlatModel model = load("lr_ring.model.yaml", ring_with_block(n));
  Simulation sim(model, Method::Euler);
  Activations a(sim, n);
  sim.run(0.01, 50000, [&] { a.record(sim); });
  // One way round: from cell 5 on, every cell fires in order, the blocked cells too once the
  // front reaches them from the far side. The two blocked cells next to the stimulated ones are
  // dragged above -40 mV at once through the gap junctions, without sodium current and without
  // a front: it dies out within them. The front dies where it meets the stimulated cells, still
  // refractory, and the ring returns to rest.
  for (int i = 6; i < n - 2; ++i) EXPECT_GT(a.first(i), a.first(i - 1)) << "cell " << i;
  for (int i = 0; i < n; ++i) {
    const auto& t = a.cells[i].times;
    ASSERT_FALSE(t.empty()) << "cell " << i;
    EXPECT_LE(t.size(), i >= n - 2 ? 2u : 1u) << "cell " << i;
    EXPECT_LT(t.back(), a.first(n - 3) + 1.0) << "cell " << i << " fired after the lap";
    if (i >= blocked && i < n - 2) EXPECT_GT(t.front(), a.first(blocked - 1)) << "cell " << i;
    EXPECT_NEAR(sim.x(a.v[i]), -84.4, 1.0) << "cell " << i;
  }
  std::printf(
      "LR-Ring of %d cells with a block: one lap, from cell 5 at %.2f ms to cell %d at "
      "%.2f ms, then rest\n",
      n, a.first(5), n - 3, a.first(n - 3));
}

TEST(OdeValidation, LuoRudyRingLongerThanTheWavelengthReenters) {
  const int n = 1800;
  const double d_line = line_delay(0.01);
  const FlatModel model = load("lr_ring.model.yaml", ring_with_block(n));
  Simulation sim(model, Method::Euler);
  Activations a(sim, n);
  // Until the returning front has passed cell 50 a second time.
  sim.run(0.01, std::llround((n + 60) * d_line / 0.01), [&] { a.record(sim); });
  const double expected = n * d_line;
  std::vector<std::vector<double>> table;  // activation time against the path the front ran
  for (int i = 5; i < n; i += 25) table.push_back({double(i), a.first(i), 1});
  for (const int i : {0, 25, 50}) {
    ASSERT_EQ(a.cells[i].times.size(), 2u) << "cell " << i << " should fire once per lap";
    const double period = a.cells[i].times[1] - a.cells[i].times[0];
    std::printf(
        "LR-Ring of %d cells: cell %d fires at %.2f and %.2f ms: period %.2f ms, "
        "length / velocity %.2f ms\n",
        n, i, a.cells[i].times[0], a.cells[i].times[1], period, expected);
    EXPECT_NEAR(period, expected, 0.01 * expected) << "cell " << i;
    table.push_back({double(n + i), a.cells[i].times[1], 2});
  }
  test::write_validation_csv("ode_ring_reentry", {"path_cells", "time", "lap"}, table);
}

// ---------------------------------------------------------------------------------------------
// Networks of spiking neurons: spikes are upward crossings of -20 mV.

constexpr double spike_mV = -20.0;

// Spike times of the neurons `names` of every ensemble member over the run.
struct Spikes {
  std::vector<std::uint32_t> v;
  std::vector<std::vector<Crossings>> cells;  // [member][neuron]
  Spikes(Simulation& sim, const std::vector<std::string>& names) {
    for (const auto& name : names) v.push_back(sim.state(name));
    cells.assign(sim.members(), std::vector<Crossings>(names.size(), Crossings(spike_mV)));
  }
  void record(Simulation& sim) {
    for (std::size_t m = 0; m < cells.size(); ++m)
      for (std::size_t i = 0; i < v.size(); ++i) cells[m][i].add(sim.t(), sim.x(v[i], m));
  }
};

std::vector<std::string> group(const std::string& name, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(fmt::format("{}[{}].V", name, i));
  return names;
}

// Wang & Buzsaki's (1996) coherence: time in [t0, t1) cut into bins of tau, X_i(l) = 1 where
// neuron i fired in bin l, kappa_ij = sum_l X_i X_j / sqrt(sum_l X_i sum_l X_j), averaged over
// all pairs (0 for a pair with a silent neuron).
double coherence(const std::vector<Crossings>& cells, double t0, double t1, double tau) {
  const auto bins = std::size_t((t1 - t0) / tau);
  std::vector<std::vector<char>> x(cells.size(), std::vector<char>(bins, 0));
  for (std::size_t i = 0; i < cells.size(); ++i)
    for (const double t : cells[i].times)
      if (t >= t0 && t < t1 && std::size_t((t - t0) / tau) < bins)
        x[i][std::size_t((t - t0) / tau)] = 1;
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < cells.size(); ++i)
    for (std::size_t j = i + 1; j < cells.size(); ++j, ++pairs) {
      double both = 0, ni = 0, nj = 0;
      for (std::size_t l = 0; l < bins; ++l) {
        both += x[i][l] && x[j][l];
        ni += x[i][l];
        nj += x[j][l];
      }
      if (ni > 0 && nj > 0) sum += both / std::sqrt(ni * nj);
    }
  return sum / pairs;
}

// Mean firing rate (Hz) of the neurons that fire in [t0, t1).
double mean_rate(const std::vector<Crossings>& cells, double t0, double t1) {
  double spikes = 0;
  int active = 0;
  for (const auto& c : cells) {
    const auto k =
        std::count_if(c.times.begin(), c.times.end(), [&](double t) { return t >= t0 && t < t1; });
    spikes += double(k);
    active += k > 0;
  }
  return active ? 1000.0 * spikes / active / (t1 - t0) : 0.0;
}

// Upward crossings of -20 mV by one Wang-Buzsaki cell at 1 uA/cm^2 (RK4, 500 ms): the spike
// rate from the first to the last spike after 100 ms.
double wb_cell_rate(double dt) {
  ModelOptions options;
  options.swept = {"wb.I_app"};
  const FlatModel model = load("wb96.model.yaml", {}, options);
  Simulation sim(model, Method::RK4, 1, {1.0});
  Crossings spikes(spike_mV);
  const std::uint32_t v = sim.state("wb.V");
  sim.run(dt, std::llround(500.0 / dt), [&] { spikes.add(sim.t(), sim.x(v)); });
  std::vector<double> t;
  std::copy_if(spikes.times.begin(), spikes.times.end(), std::back_inserter(t),
               [](double x) { return x > 100.0; });
  return 1000.0 * double(t.size() - 1) / (t.back() - t.front());
}

// Wang & Buzsaki (1996) name the conditions of synchrony in their abstract: "(2) that the ratio
// between the synaptic decay time constant and the oscillation period be sufficiently large;
// (3) that the effects of heterogeneities be modest because of a steep frequency-current
// relationship", and "By changing the GABA_A synaptic maximal conductance, synaptic decay time
// constant, or the mean external excitatory drive to the network, the neuronal firing
// frequencies were gradually and monotonically varied. By contrast, the network
// synchronization was found to be high only within a frequency band coinciding with the gamma
// (20-80 Hz) range." Their coherence kappa is measured here as in the paper, with bins of a
// tenth of the period, over 200-400 ms after random initial potentials, for five networks of
// wb_net.model.yaml run side by side as an ensemble:
//   0: every cell driven by 1 uA/cm^2, decay 10 ms (the all-to-all network of their Fig. 3, as
//      in the authors' ModelDB code): synchrony;
//   1: the same with a decay of 2 ms, a fifth of the period: condition (2) fails;
//   2-4: the shipped drive, 1 +- 0.05 uA/cm^2 uniform (condition (3)), and the same spread
//        around 0.5 and 4 uA/cm^2: below and above the gamma band the coherence drops.
// RK4 at dt = 0.05 ms where the shipped input takes 0.02 ms: a cell's rate differs by less than
// 0.2% (checked first), and the network costs two fifths of the time.
TEST(OdeValidation, WangBuzsakiNetworkSynchronizesInTheGammaBand) {
  const double rate_05 = wb_cell_rate(0.05), rate_02 = wb_cell_rate(0.02);
  std::printf("WB cell at 1 uA/cm^2: %.3f Hz at dt = 0.05 ms, %.3f Hz at dt = 0.02 ms\n", rate_05,
              rate_02);
  EXPECT_NEAR(rate_05, rate_02, 0.002 * rate_02);

  ModelOptions options;
  options.swept = {"cell.beta_s", "cell.I_mean", "cell.I_spread"};
  // I_app keeps the shipped per-cell values in [0.95, 1.05]; the drive becomes
  // I_mean + I_spread (I_app - 1).
  const FlatModel model =
      load("wb_net.model.yaml",
           {{"      I_app: 1.0\n", "      I_app: 1.0\n      I_mean: 1.0\n      I_spread: 1.0\n"},
            {"- I_syn + I_app)/C", "- I_syn + I_mean + I_spread*(I_app - 1))/C"}},
           options);
  const std::vector<double> decay = {10, 2, 10, 10, 10}, drive = {1, 1, 0.5, 1, 4},
                            spread = {0, 0, 1, 1, 1};
  std::vector<double> swept;
  for (const double tau : decay) swept.push_back(1.0 / tau);
  swept.insert(swept.end(), drive.begin(), drive.end());
  swept.insert(swept.end(), spread.begin(), spread.end());
  Simulation sim(model, Method::RK4, decay.size(), swept);
  Spikes spikes(sim, group("cell", 100));
  const double t0 = 200.0, t1 = 400.0;
  sim.run(0.05, std::llround(t1 / 0.05), [&] { spikes.record(sim); });
  std::vector<std::vector<double>> table;
  std::vector<double> f, kappa;
  for (std::size_t m = 0; m < decay.size(); ++m) {
    f.push_back(mean_rate(spikes.cells[m], t0, t1));
    kappa.push_back(f.back() > 0 ? coherence(spikes.cells[m], t0, t1, 100.0 / f.back()) : 0.0);
    std::printf("WB network, decay %4.1f ms, drive %.1f +- %.2f uA/cm^2: %5.1f Hz, kappa %.3f\n",
                decay[m], drive[m], 0.05 * spread[m], f.back(), kappa.back());
    table.push_back({decay[m], drive[m], spread[m], f.back(), kappa.back()});
  }
  test::write_validation_csv("ode_wb_coherence",
                             {"decay_ms", "drive", "spread", "frequency", "kappa"}, table);
  // 0: gamma-band synchrony.
  EXPECT_GT(f[0], 20.0);
  EXPECT_LT(f[0], 80.0);
  EXPECT_GT(kappa[0], 0.9);
  // 1: a short decay makes the rhythm faster and loses most of the synchrony.
  EXPECT_GT(f[1], f[0]);
  EXPECT_LT(kappa[1], 0.6 * kappa[0]);
  // 3: heterogeneity of +-5% in the drive costs synchrony, the rhythm stays in the gamma band.
  EXPECT_GT(f[3], 20.0);
  EXPECT_LT(f[3], 80.0);
  EXPECT_LT(kappa[3], 0.7 * kappa[0]);
  // 2, 4: the frequency grows with the drive, and the synchrony is highest in the gamma band.
  EXPECT_LT(f[2], 20.0);
  EXPECT_GT(f[4], 80.0);
  EXPECT_LT(kappa[2], 0.6 * kappa[3]);
  EXPECT_LT(kappa[4], 0.8 * kappa[3]);
}

// Bursts of a population: 5 ms bins where its neurons fire at least twice, joined across gaps
// of up to 60 ms (the spikes of a burst come in volleys); (start, end) of each burst in ms.
std::vector<std::pair<double, double>> bursts(const std::vector<Crossings>& cells, double t_end) {
  const double bin = 5.0, gap = 60.0;
  std::vector<int> count(std::size_t(t_end / bin) + 1, 0);
  for (const auto& c : cells)
    for (const double t : c.times) ++count[std::size_t(t / bin)];
  std::vector<std::pair<double, double>> out;
  for (std::size_t l = 0; l < count.size(); ++l) {
    if (count[l] < 2) continue;
    const double t = double(l) * bin;
    if (!out.empty() && t - out.back().second <= gap)
      out.back().second = t + bin;
    else
      out.emplace_back(t, t + bin);
  }
  return out;
}

// The Rybak-style CPG (rybak_cpg.model.yaml; half-centre structure and neuron model after
// Rybak et al. 2006): the flexor and extensor rhythm generators burst in alternation. The two
// half-centres are the same circuit, so each takes half of the cycle: the extensor's bursts
// start half a period after the flexor's, a phase that must hold in every cycle. No period is
// compared with the paper's: the conductances are tuned, not the paper's (docs/user/ode.md).
TEST(OdeValidation, RybakHalfCentresAlternateWithAStablePhase) {
  const FlatModel model = load("rybak_cpg.model.yaml");
  Simulation sim(model, Method::RK4);
  Spikes flexor(sim, group("rgf", 20)), extensor(sim, group("rge", 20));
  const double t_end = 2400.0;
  sim.run(0.02, std::llround(t_end / 0.02), [&] {
    flexor.record(sim);
    extensor.record(sim);
  });
  const auto f = bursts(flexor.cells[0], t_end), e = bursts(extensor.cells[0], t_end);
  std::vector<std::vector<double>> table;
  std::vector<double> period;
  for (std::size_t k = 1; k < f.size(); ++k) {
    if (f[k - 1].first < 300.0) continue;  // the start-up from the initial states
    const double T = f[k].first - f[k - 1].first;
    const auto between = std::count_if(e.begin(), e.end(), [&](const auto& b) {
      return b.first > f[k - 1].first && b.first < f[k].first;
    });
    ASSERT_EQ(between, 1) << "extensor bursts between the flexor bursts at " << f[k - 1].first
                          << " and " << f[k].first << " ms";
    const auto ext =
        *std::find_if(e.begin(), e.end(), [&](const auto& b) { return b.first > f[k - 1].first; });
    const double phase = (ext.first - f[k - 1].first) / T;
    const double overlap = f[k - 1].second - ext.first;  // both sides firing at the switch
    std::printf(
        "Rybak CPG cycle at %.0f ms: period %.0f ms, flexor burst %.0f ms, extensor "
        "onset at phase %.3f, overlap %.0f ms\n",
        f[k - 1].first, T, f[k - 1].second - f[k - 1].first, phase, overlap);
    EXPECT_NEAR(phase, 0.5, 0.1) << "cycle at " << f[k - 1].first << " ms";
    EXPECT_LT(overlap, 0.1 * T) << "cycle at " << f[k - 1].first << " ms";
    period.push_back(T);
    table.push_back(
        {f[k - 1].first, T, phase, f[k - 1].second - f[k - 1].first, ext.second - ext.first});
  }
  ASSERT_GE(period.size(), 3u);
  const double mean = std::accumulate(period.begin(), period.end(), 0.0) / double(period.size());
  for (const double T : period) EXPECT_NEAR(T, mean, 0.25 * mean);
  std::printf("Rybak CPG: mean period %.0f ms (%.2f Hz) over %zu cycles\n", mean, 1000.0 / mean,
              period.size());
  test::write_validation_csv("ode_cpg_cycles",
                             {"onset_ms", "period_ms", "phase", "flexor_ms", "extensor_ms"}, table);
}

}  // namespace
}  // namespace hayate::ode
