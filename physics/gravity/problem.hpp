#pragma once
// The gravity problem (problem: gravity) on one execution space: collisionless and collisional
// N-body dynamics. Forces by direct summation or the tree, leapfrog with shared or block time
// steps or 4th-order Hermite; thermo.csv, XYZ snapshots, force_error.csv, bitwise checkpoints.
// The schema and the registration are in gravity_problem.cpp.
#include "gravity/diagnostics.hpp"
#include "gravity/force.hpp"
#include "gravity/force_error.hpp"
#include "gravity/initial_conditions.hpp"
#include "gravity/integrators.hpp"
#include "gravity/tree_solver.hpp"
#include "io/csv_writer.hpp"
#include "io/xyz.hpp"
#include "run/guard.hpp"
#include "run/problem.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace hayate::gravity {

enum class Integrator { Leapfrog, Block, Hermite };

// The largest relative energy error a run may reach before it is stopped as blown up.
inline constexpr double max_energy_error = 1.0;

inline Integrator parse_integrator(const std::string& name) {
  if (name == "block") return Integrator::Block;
  if (name == "hermite") return Integrator::Hermite;
  return Integrator::Leapfrog;
}

// While alive, phases go to a Timers of their own; at the end they are added to `timers`
// as setup_<phase> (also when an exception leaves the scope).
class SetupPhases {
 public:
  explicit SetupPhases(core::Timers& timers) : timers_(timers) { std::swap(own_, timers_); }
  SetupPhases(const SetupPhases&) = delete;
  SetupPhases& operator=(const SetupPhases&) = delete;
  ~SetupPhases() {
    std::swap(own_, timers_);
    // One add() per call, the whole time with the first, so calls and total both carry over.
    for (const auto& ph : own_.phases())
      for (std::int64_t c = 0; c < ph.calls; ++c)
        timers_.add("setup_" + ph.name, c == 0 ? ph.seconds : 0.0);
  }

 private:
  core::Timers& timers_;
  core::Timers own_;
};

// What a test can set beyond the input: reference code paths kept as C++ options only
// (TreeParams).
struct ProblemOptions {
  bool tree_reorder = true;  // keep the particles in the tree's order
};

// The targets per thread that tuning.i_per_thread names (0 = auto, DirectDefaults).
inline int parse_i_per_thread(const std::string& value) {
  return value == "auto" ? 0 : std::stoi(value);
}

// The tree's input keys (tree.*).
inline TreeParams tree_params(const core::Config& config) {
  TreeParams t;
  t.mac = config.string("tree.mac") == "theta" ? Mac::Theta : Mac::Acceleration;
  t.dacc = config.real("tree.dacc");
  t.theta = config.real("tree.theta");
  t.first_direct = config.string("tree.first_step") == "direct";
  t.leaf_size = int(config.integer("tree.leaf_size"));
  t.rebuild_every = int(config.integer("tree.rebuild_every"));
  t.quadrupole = config.boolean("tree.quadrupole");
  return t;
}

// The particle count of the input: 2 for kepler, a particle file's count, else system.n; and the
// key that sets it.
inline std::pair<std::int64_t, std::string> input_particles(const core::Config& config) {
  const std::string type = config.string("initial.type");
  if (type == "kepler") return {2, "initial.type"};
  if (type == "file") return {make_initial_conditions(config).size(), "initial.file"};
  return {config.integer("system.n"), "system.n"};
}

// Checks a checkpoint against the input, entry by entry, on the host and before anything is
// allocated from it: the particle count, integrator, solver, G, softening, dt and block levels
// must be the input's; the step within run.steps, the time the step's; every real finite,
// masses positive, levels within time.max_level, ids a permutation; the tree solver's entries
// (check_tree_solver_checkpoint). Throws InputError at the mismatching key, or naming the entry.
inline void check_checkpoint(const core::Config& config, const core::CheckpointReader& cp) {
  const auto [n, n_key] = input_particles(config);
  const auto saved_n = cp.get<std::int64_t>("n", 0, std::numeric_limits<std::int32_t>::max());
  if (saved_n != n)
    core::checkpoint_mismatch(config, n_key, cp,
                              fmt::format("holds {} particles, the input {}", saved_n, n));
  for (const auto& [entry, key] :
       {std::pair<const char*, const char*>{"integrator", "time.integrator"},
        {"solver", "solver"}}) {
    const std::string saved = cp.get_string(entry, 64);
    if (saved != config.string(key))
      core::checkpoint_mismatch(config, key, cp,
                                "was written with " + core::quoted(saved) +
                                    ", the input asks for " + core::quoted(config.string(key)));
  }
  for (const auto& [entry, key] : {std::pair<const char*, const char*>{"G", "system.G"},
                                   {"softening", "system.softening"},
                                   {"dt", "time.dt"}}) {
    const double saved = cp.get<double>(entry);
    if (saved != config.real(key))
      core::checkpoint_mismatch(config, key, cp,
                                fmt::format("was written with {} = {}, the input gives {}", key,
                                            saved, config.real(key)));
  }
  const auto max_level = std::int32_t(config.integer("time.max_level"));
  const auto saved_level = cp.get<std::int32_t>("max_level", 0, 30);
  if (saved_level != max_level)
    core::checkpoint_mismatch(config, "time.max_level", cp,
                              fmt::format("was written with time.max_level = {}", saved_level));
  const std::int64_t steps = config.integer("run.steps");
  const auto step = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
  if (step > steps)
    core::checkpoint_mismatch(config, "run.steps", cp,
                              fmt::format("is at step {}, beyond run.steps = {}", step, steps));
  // The time is the step's (dt added step by step, so to rounding): not another run's clock.
  const double time = cp.get<double>("time");
  const double expected = double(step) * config.real("time.dt");
  if (!(std::fabs(time - expected) <=
        (1e-9 + 1e-15 * double(step)) * std::max(1.0, std::fabs(expected))))
    cp.fail("time", fmt::format("holds {}, but step {} of dt = {} is at {}", time, step,
                                config.real("time.dt"), expected));
  cp.get<double>("e0");
  cp.get<bool>("have_e0");
  const auto count = std::size_t(n);
  for (const char* entry : {"x", "v", "acc", "jerk"}) cp.check_reals<double>(entry, 3 * count);
  cp.check_reals<double>("m", count, true);
  cp.get_vector<std::int32_t>("level", count, 0, max_level);
  const auto id = cp.raw_vector<std::int32_t>("id", count);
  const std::size_t bad = core::first_non_permutation(id);
  if (bad != core::CheckpointReader::npos)
    cp.fail("id", fmt::format("is not a permutation of the {} particles", n), bad);
  if (config.string("solver") == "tree")
    check_tree_solver_checkpoint(cp, int(n), tree_params(config));
}

// The gravity problem on one execution-space instance: every kernel, copy and reduction of the
// run (initial-condition upload, force solvers, integrators, diagnostics, force-error samples)
// goes to `space`.
template <class Space>
class GravityProblem final : public core::Problem {
 public:
  using Vec = typename Particles<Space>::Vec;
  using Scalar = typename Particles<Space>::Scalar;

  GravityProblem(const core::Config& config, const Space& space, const ProblemOptions& options = {})
      : space_(space),
        config_(config),
        integrator_(parse_integrator(config.string("time.integrator"))),
        G_(config.real("system.G")),
        eps_(config.real("system.softening")),
        dt_(config.real("time.dt")),
        eta_(config.real("time.eta")),
        max_level_(int(config.integer("time.max_level"))),
        steps_(config.integer("run.steps")),
        every_(config.integer("output.every")),
        snapshot_every_(config.integer("output.snapshot_every")),
        force_error_every_(config.integer("output.force_error_every")),
        force_error_sample_(config.integer("output.force_error_sample")) {
    DirectShape shape;
    shape.i_per_thread = parse_i_per_thread(config.string("tuning.i_per_thread"));
    const Precision precision = parse_precision(config.string("precision"));
    DirectSolver<Space> direct(space_, precision, shape, G_, eps_);
    if (config.string("solver") == "tree") {
      TreeParams t = tree_params(config);
      t.reorder = options.tree_reorder;
      solver_ = std::make_unique<TreeForce<Space>>(space_, precision, t, G_, eps_, direct);
    } else {
      direct_ = std::make_unique<DirectForce<Space>>(direct);
    }
  }

  void initialize(core::RunContext& ctx) override {
    HostParticles hp;
    {
      auto scope = ctx.timers.scope("initial_conditions");
      hp = make_initial_conditions(ctx.config);
    }
    allocate(hp.size());
    auto x = Kokkos::create_mirror_view(p_.x);
    auto v = Kokkos::create_mirror_view(p_.v);
    auto m = Kokkos::create_mirror_view(p_.m);
    for (int i = 0; i < p_.n; ++i) {
      for (int c = 0; c < 3; ++c) {
        x(i, c) = hp.x[3 * i + c];
        v(i, c) = hp.v[3 * i + c];
      }
      m(i) = hp.m[i];
    }
    Kokkos::deep_copy(space_, p_.x, x);
    Kokkos::deep_copy(space_, p_.v, v);
    Kokkos::deep_copy(space_, p_.m, m);
    space_.fence();  // before the host copies go
    step_ = 0;
    time_ = 0;
    have_e0_ = false;
    {
      // The first evaluation's phases are recorded as setup_<phase>: its tree builds pay
      // one-off costs (first launches, allocations, permuting the initial conditions' random
      // order) that vary a lot between runs, and counted with the steps' phases they would blur
      // the per-step costs.
      SetupPhases setup(ctx.timers);
      if (integrator_ == Integrator::Hermite) {
        hermite_forces(p_.acc, p_.jerk, ctx);
      } else {
        prepare(ctx, 0);
        all_forces(ctx);
      }
    }
    open_output(ctx, std::nullopt);
  }

  void restore(const core::CheckpointReader& cp, core::RunContext& ctx) override {
    check_checkpoint(ctx.config, cp);  // nothing below is sized or indexed unchecked
    const auto n = cp.get<std::int64_t>("n", 0, std::numeric_limits<std::int32_t>::max());
    allocate(int(n));
    step_ = cp.get<std::int64_t>("step", 0, steps_);
    time_ = cp.get<double>("time");
    e0_ = cp.get<double>("e0");
    have_e0_ = cp.get<bool>("have_e0");
    cp.get_view("x", p_.x);
    cp.get_view("v", p_.v);
    cp.get_view("acc", p_.acc);
    cp.get_view("jerk", p_.jerk);
    cp.get_view("m", p_.m);
    cp.get_view("level", p_.level, 0, max_level_);
    cp.get_view("id", p_.id, 0, int(n) - 1);
    solver().restore(cp, p_.n);
    open_output(ctx, step_);
  }

  void save(core::CheckpointWriter& cp) const override {
    cp.put<std::int64_t>("n", p_.n);
    cp.put_string("integrator", config_.string("time.integrator"));
    cp.put_string("solver", config_.string("solver"));
    cp.put<double>("G", G_);
    cp.put<double>("softening", eps_);
    cp.put<double>("dt", dt_);
    cp.put<std::int32_t>("max_level", max_level_);
    cp.put<std::int64_t>("step", step_);
    cp.put<double>("time", time_);
    cp.put<double>("e0", e0_);
    cp.put<bool>("have_e0", have_e0_);
    // Every rank holds every particle; each saves an even block of them as its part, so the
    // ranks share the writing and a restart may take any number of ranks.
    const core::RowSlab block = core::row_slab(p_.n, 1, world_.size(), world_.rank());
    const auto put = [&](const char* name, const auto& view) {
      cp.put_distributed_view(name, view, std::size_t(block.first), std::size_t(block.count));
    };
    put("x", p_.x);
    put("v", p_.v);
    put("acc", p_.acc);
    put("jerk", p_.jerk);
    put("m", p_.m);
    put("level", p_.level);
    put("id", p_.id);
    solver_or_direct().save(cp);
  }

  std::int64_t current_step() const override { return step_; }
  std::int64_t total_steps() const override { return steps_; }

  void advance(core::RunContext& ctx) override {
    advancing_ = true;
    switch (integrator_) {
      case Integrator::Leapfrog:
        leapfrog_step(ctx);
        break;
      case Integrator::Block:
        block_step(ctx);
        break;
      case Integrator::Hermite:
        hermite_step(ctx);
        break;
    }
    ++step_;
    advancing_ = false;
  }

  void output(core::RunContext& ctx, bool final) override {
    if (step_ % every_ == 0 || final) thermo_row(ctx);
    if ((snapshot_every_ > 0 && step_ % snapshot_every_ == 0) || final) snapshot(ctx);
    if (force_error_every_ > 0 && (step_ % force_error_every_ == 0 || final)) force_error(ctx);
  }

  // Before a checkpoint: finite particles and a bounded energy error (one energy evaluation).
  void check_state(core::RunContext& ctx) override {
    check_finite();
    guard_energy(measure(ctx));
  }

 private:
  void allocate(int n) {
    p_ = Particles<Space>(space_, n);
    tmp_acc_ = Vec("hayate::gravity::tmp_acc", n);
    tmp_jerk_ = Vec("hayate::gravity::tmp_jerk", n);
    if (integrator_ == Integrator::Hermite) {
      x0_ = Vec("hayate::gravity::x0", n);
      v0_ = Vec("hayate::gravity::v0", n);
    }
    if (integrator_ == Integrator::Block) {
      active_ = Kokkos::View<int*, typename Space::memory_space>("hayate::gravity::active", n);
      row_ = Kokkos::View<int*, typename Space::memory_space>("hayate::gravity::active_row", n);
    }
  }

  ForceSolver<Space>& solver() {
    return direct_ ? static_cast<ForceSolver<Space>&>(*direct_) : *solver_;
  }
  const ForceSolver<Space>& solver_or_direct() const {
    return direct_ ? static_cast<const ForceSolver<Space>&>(*direct_) : *solver_;
  }

  void all_forces(core::RunContext& ctx) {
    solver().accelerations(p_, {{}, p_.n}, false, {p_.acc, {}, {}}, ctx.timers, false);
  }

  // Accelerations of a fixed sample of particles from the run's solver against double-precision
  // direct summation: percentiles of |da| / |a| into force_error.csv.
  void force_error(core::RunContext& ctx) {
    auto scope = ctx.timers.scope("force_error");
    const int count = int(std::min<std::int64_t>(force_error_sample_, p_.n));
    Kokkos::View<int*, typename Space::memory_space> index("hayate::gravity::sample", count);
    sample_rows(space_, p_, count, index);
    Vec approx("hayate::gravity::sample_acc", count), exact("hayate::gravity::sample_ref", count);
    solver().accelerations(p_, {index, count}, false, {approx, {}, {}}, ctx.timers, true);
    DirectSolver<Space> reference(space_, Precision::Double, {}, G_, eps_);
    reference.compute(p_.x, p_.m, p_.n, {index, count}, false, {exact, {}, {}});
    const auto a = on_host(space_, approx);
    const auto r = on_host(space_, exact);
    const ForceErrorStats s = force_error_stats(a, r, count);
    if (world_.root())
      force_errors_.row({step_, time_, std::int64_t(count), s.p50, s.p90, s.p99, s.max});
  }

  void hermite_forces(const Vec& acc, const Vec& jerk, core::RunContext& ctx) {
    // The constructor only builds the direct solver for Hermite (the factory checks it).
    check_finite(p_.x, "position");
    direct_->hermite(p_, {acc, {}, jerk}, ctx.timers);
  }

  void leapfrog_step(core::RunContext& ctx) {
    {
      auto scope = ctx.timers.scope("integrate");
      kick(space_, p_, 0.5 * dt_);
      drift(space_, p_, dt_);
    }
    prepare(ctx, 0);
    all_forces(ctx);
    auto scope = ctx.timers.scope("integrate");
    kick(space_, p_, 0.5 * dt_);
    time_ += dt_;
  }

  void hermite_step(core::RunContext& ctx) {
    {
      auto scope = ctx.timers.scope("integrate");
      hermite_predict(space_, p_, x0_, v0_, dt_);
    }
    hermite_forces(tmp_acc_, tmp_jerk_, ctx);
    auto scope = ctx.timers.scope("integrate");
    hermite_correct(space_, p_, x0_, v0_, tmp_acc_, tmp_jerk_, dt_);
    time_ += dt_;
  }

  // One dt_max cycle of power-of-two block steps (kick-drift-kick per particle). All particles
  // are synchronised, with valid accelerations, at the start and the end of the cycle; ticks
  // with no particle due are skipped.
  void block_step(core::RunContext& ctx) {
    const std::int64_t ticks = std::int64_t(1) << max_level_;
    const double dt_min = dt_ / double(ticks);
    {
      auto scope = ctx.timers.scope("integrate");
      block_open(space_, p_, dt_, eta_, eps_, max_level_);
    }
    std::int64_t tick = 0;
    while (tick < ticks) {
      int count = 0;
      int coarsest_due = 0;
      {
        auto scope = ctx.timers.scope("integrate");
        const LevelRange levels = block_levels(space_, p_, level_work_);
        const std::int64_t stride = ticks >> levels.finest;
        const std::int64_t next = (tick / stride + 1) * stride;
        drift(space_, p_, double(next - tick) * dt_min);
        tick = next;
        // Levels at or above max_level - (trailing zeros of tick) are due; 0 when all are.
        int zeros = 0;
        while (zeros < max_level_ && (tick >> zeros & 1) == 0) ++zeros;
        coarsest_due = max_level_ - zeros <= levels.coarsest ? 0 : max_level_ - zeros;
      }
      // May reorder the particles: select after it.
      prepare(ctx, coarsest_due);
      {
        auto scope = ctx.timers.scope("integrate");
        count = block_select(space_, p_, tick, max_level_, active_, row_, select_work_);
      }
      solver().accelerations(p_, {active_, count, row_}, false, {tmp_acc_, {}, {}}, ctx.timers,
                             false);
      auto scope = ctx.timers.scope("integrate");
      block_kick(space_, p_, active_, count, tmp_acc_, tick, dt_, eta_, eps_, max_level_);
      force_evaluations_ += count;
    }
    time_ += dt_;
  }

  // Every force evaluation (and the tree build before it) sees finite positions only.
  void prepare(core::RunContext& ctx, int coarsest_due) {
    check_finite(p_.x, "position");
    solver().prepare(p_, ctx.timers, coarsest_due);
  }

  void check_finite() const {
    check_finite(p_.x, "position");
    check_finite(p_.v, "velocity");
  }

  void check_finite(const Vec& view, const char* what) const {
    const std::int64_t row = core::first_non_finite(space_, view);
    if (row < 0) return;
    const int id = on_host(space_, Kokkos::subview(p_.id, row))();
    // On several ranks every rank holds every particle and finds the same.
    throw core::CollectiveFailure(
        fmt::format("gravity: the {} of particle {} is not finite {} step {}; reduce time.dt or "
                    "raise system.softening",
                    what, id, advancing_ ? "in" : "at", advancing_ ? step_ + 1 : step_));
  }

  Thermo measure(core::RunContext& ctx) {
    solver().accelerations(p_, {{}, p_.n}, true, {tmp_acc_, p_.pot, {}}, ctx.timers, true);
    auto scope = ctx.timers.scope("diagnostics");
    Thermo t = measure_thermo(space_, p_);
    // The first rank's sums decide for all: ranks of other thread counts may round them apart.
    world_.broadcast(&t, sizeof t);
    return t;
  }

  // The relative energy error (absolute when the initial energy is 0).
  double energy_error(double e) const { return e0_ != 0 ? (e - e0_) / std::fabs(e0_) : e - e0_; }

  // A run whose energy is not finite, or has moved by more than its own size, has blown up.
  void guard_energy(const Thermo& t) const {
    const double e = t.etotal();
    if (!std::isfinite(e))
      throw core::CollectiveFailure(fmt::format(
          "gravity: the energy is not finite at step {} (time {}); reduce time.dt or raise "
          "system.softening",
          step_, time_));
    if (have_e0_ && !(std::fabs(energy_error(e)) <= max_energy_error))
      throw core::CollectiveFailure(fmt::format(
          "gravity: the energy error is {:.3g} at step {} (time {}), beyond {}: the integration "
          "has blown up; reduce time.dt (block steps: time.eta) or raise system.softening",
          energy_error(e), step_, time_, max_energy_error));
  }

  void thermo_row(core::RunContext& ctx) {
    const Thermo t = measure(ctx);
    auto scope = ctx.timers.scope("output");
    guard_energy(t);
    const double e = t.etotal();
    if (!have_e0_) {
      e0_ = e;
      have_e0_ = true;
    }
    if (!world_.root()) return;
    thermo_.row({step_, time_, t.ke, t.pe, e, t.p[0], t.p[1], t.p[2], t.l[0], t.l[1], t.l[2],
                 t.virial_ratio(), energy_error(e), force_evaluations_});
  }

  void snapshot(core::RunContext& ctx) {
    if (!world_.root()) return;
    auto scope = ctx.timers.scope("output");
    const auto x = on_host(space_, p_.x);
    const auto v = on_host(space_, p_.v);
    const auto m = on_host(space_, p_.m);
    const auto id = on_host(space_, p_.id);
    core::XyzFrame f;
    f.species.assign(p_.n, "P");
    core::XyzColumn mass{"mass", 1, {}}, pos{"pos", 3, {}}, vel{"velo", 3, {}};
    mass.values.resize(p_.n);
    pos.values.resize(3 * std::size_t(p_.n));
    vel.values.resize(3 * std::size_t(p_.n));
    for (int i = 0; i < p_.n; ++i) {  // in the initial conditions' order
      const std::size_t j = std::size_t(id(i));
      mass.values[j] = m(i);
      for (int c = 0; c < 3; ++c) {
        pos.values[3 * j + c] = x(i, c);
        vel.values[3 * j + c] = v(i, c);
      }
    }
    f.columns = {std::move(mass), std::move(pos), std::move(vel)};
    f.info = {{"Time", fmt::format("{}", time_)}, {"Step", fmt::format("{}", step_)}};
    snapshots_.write(f);
  }

  // Fresh series, or (resume_after: the checkpoint's step) the folder's series continued;
  // the first rank writes them.
  void open_output(core::RunContext& ctx, std::optional<std::int64_t> resume_after) {
    if (!world_.root()) return;
    thermo_ = core::CsvWriter(ctx.outputs, ctx.path("thermo.csv"),
                              {"step", "time", "ke", "pe", "etotal", "px", "py", "pz", "lx", "ly",
                               "lz", "virial_ratio", "energy_error", "force_evaluations"},
                              resume_after);
    snapshots_ = core::XyzWriter(ctx.outputs, ctx.path("snapshots.xyz"), resume_after);
    if (force_error_every_ > 0)
      force_errors_ =
          core::CsvWriter(ctx.outputs, ctx.path("force_error.csv"),
                          {"step", "time", "samples", "p50", "p90", "p99", "max"}, resume_after);
    if (!ctx.quiet)
      spdlog::info("gravity: {} particles, {} solver, {} precision, {} integrator", p_.n,
                   config_.string("solver"), config_.string("precision"),
                   config_.string("time.integrator"));
  }

  Space space_;
  const core::Config& config_;
  const core::Comm& world_ = core::Comm::world();
  Integrator integrator_;
  double G_, eps_, dt_, eta_;
  int max_level_;
  std::int64_t steps_, every_, snapshot_every_, force_error_every_, force_error_sample_;
  std::unique_ptr<DirectForce<Space>> direct_;  // solver: direct (and Hermite)
  std::unique_ptr<ForceSolver<Space>> solver_;  // solver: tree
  Particles<Space> p_;
  Vec tmp_acc_, tmp_jerk_, x0_, v0_;
  Kokkos::View<int*, typename Space::memory_space> active_;
  Kokkos::View<int*, typename Space::memory_space> row_;  // active_'s inverse (Targets::row)
  Kokkos::View<int*, typename Space::memory_space> select_work_;  // block_select's chunk counts
  Kokkos::View<int*, typename Space::memory_space> level_work_;   // block_levels' chunk ranges
  std::int64_t step_ = 0;
  double time_ = 0;
  double e0_ = 0;
  bool have_e0_ = false;
  bool advancing_ = false;              // inside advance(): a failure is in step step_ + 1
  std::int64_t force_evaluations_ = 0;  // targets evaluated by block steps (this run segment)
  core::CsvWriter thermo_;
  core::XyzWriter snapshots_;
  core::CsvWriter force_errors_;
};

}  // namespace hayate::gravity
