// problem: gravity — collisionless and collisional N-body dynamics. Forces by direct summation
// (or the tree), leapfrog with shared or block time steps or 4th-order Hermite; thermo.csv,
// XYZ snapshots, bitwise checkpoints.
#include "gravity/gravity_problem.hpp"

#include "gravity/diagnostics.hpp"
#include "gravity/force.hpp"
#include "gravity/force_error.hpp"
#include "gravity/initial_conditions.hpp"
#include "gravity/integrators.hpp"
#include "gravity/tree_solver.hpp"
#include "io/csv_writer.hpp"
#include "io/xyz.hpp"
#include "exec/dispatch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <memory>
#include <utility>

namespace hayate::gravity {
namespace {

using core::CheckpointReader;
using core::CheckpointWriter;
using core::Config;
using core::RunContext;

enum class Integrator { Leapfrog, Block, Hermite };

Integrator parse_integrator(const std::string& name) {
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

template <class Space>
class GravityProblem final : public core::Problem {
 public:
  using Vec = typename Particles<Space>::Vec;
  using Scalar = typename Particles<Space>::Scalar;

  explicit GravityProblem(const Config& config)
      : config_(config),
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
    shape.team_size = int(config.integer("direct.team_size"));
    shape.tile = int(config.integer("direct.tile"));
    shape.splits = int(config.integer("direct.j_split"));
    shape.i_per_thread = int(config.integer("direct.i_per_thread"));
    if (shape.i_per_thread & (shape.i_per_thread - 1))
      config.fail("direct.i_per_thread", "targets per thread must be 0 (automatic), 1, 2, 4 or 8");
    const Precision precision = parse_precision(config.string("precision"));
    check_scratch(config, shape);
    DirectSolver<Space> direct(precision, shape, G_, eps_);
    if (config.string("solver") == "tree") {
      TreeParams t;
      t.mac = config.string("tree.mac") == "theta" ? Mac::Theta : Mac::Acceleration;
      t.dacc = config.real("tree.dacc");
      t.theta = config.real("tree.theta");
      t.first_direct = config.string("tree.first_step") == "direct";
      t.leaf_size = int(config.integer("tree.leaf_size"));
      t.group_cell = int(config.integer("tree.group_cell"));
      t.rebuild_every = int(config.integer("tree.rebuild_every"));
      t.quadrupole = config.boolean("tree.quadrupole");
      t.reorder = config.boolean("tree.reorder");
      t.walk = config.string("tree.walk") == "particle" ? Walk::Particle : Walk::Group;
      t.curve = config.string("tree.curve") == "morton" ? Curve::Morton : Curve::Hilbert;
      t.dear_first = config.string("tree.group_order") == "cost";
      solver_ = std::make_unique<TreeForce<Space>>(precision, t, G_, eps_, direct);
    } else {
      direct_ = std::make_unique<DirectForce<Space>>(direct);
    }
  }

  void initialize(RunContext& ctx) override {
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
    Kokkos::deep_copy(p_.x, x);
    Kokkos::deep_copy(p_.v, v);
    Kokkos::deep_copy(p_.m, m);
    step_ = 0;
    time_ = 0;
    have_e0_ = false;
    {
      // The first evaluation's phases are recorded as setup_<phase>: its tree builds pay
      // one-off costs (first launches, allocations, permuting the initial conditions' random
      // order) that vary by tens of ms between runs at 2^23 on the H100, and counted with the
      // steps' phases they blurred the per-step costs that the benchmarks difference.
      SetupPhases setup(ctx.timers);
      if (integrator_ == Integrator::Hermite) {
        hermite_forces(p_.acc, p_.jerk, ctx);
      } else {
        solver().prepare(p_, ctx.timers, 0);
        all_forces(ctx);
      }
    }
    open_output(ctx);
  }

  void restore(const CheckpointReader& cp, RunContext& ctx) override {
    const auto n = cp.get<std::int64_t>("n");
    if (cp.get_string("integrator") != ctx.config.string("time.integrator"))
      ctx.config.fail("time.integrator", "the checkpoint was written by the '" +
                                             cp.get_string("integrator") + "' integrator");
    allocate(int(n));
    step_ = cp.get<std::int64_t>("step");
    time_ = cp.get<double>("time");
    e0_ = cp.get<double>("e0");
    have_e0_ = cp.get<bool>("have_e0");
    cp.get_view("x", p_.x);
    cp.get_view("v", p_.v);
    cp.get_view("acc", p_.acc);
    cp.get_view("jerk", p_.jerk);
    cp.get_view("m", p_.m);
    cp.get_view("level", p_.level);
    if (cp.has("id")) cp.get_view("id", p_.id);  // absent from earlier versions' checkpoints
    solver().restore(cp, p_.n);
    open_output(ctx);
  }

  void save(CheckpointWriter& cp) const override {
    cp.put<std::int64_t>("n", p_.n);
    cp.put_string("integrator", config_.string("time.integrator"));
    cp.put<std::int64_t>("step", step_);
    cp.put<double>("time", time_);
    cp.put<double>("e0", e0_);
    cp.put<bool>("have_e0", have_e0_);
    cp.put_view("x", p_.x);
    cp.put_view("v", p_.v);
    cp.put_view("acc", p_.acc);
    cp.put_view("jerk", p_.jerk);
    cp.put_view("m", p_.m);
    cp.put_view("level", p_.level);
    cp.put_view("id", p_.id);
    solver_or_direct().save(cp);
  }

  std::int64_t current_step() const override { return step_; }
  std::int64_t total_steps() const override { return steps_; }

  void advance(RunContext& ctx) override {
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
  }

  void output(RunContext& ctx, bool final) override {
    if (step_ % every_ == 0 || final) thermo_row(ctx);
    if ((snapshot_every_ > 0 && step_ % snapshot_every_ == 0) || final) snapshot(ctx);
    if (force_error_every_ > 0 && (step_ % force_error_every_ == 0 || final)) force_error(ctx);
    if (final) {
      thermo_.commit();
      snapshots_.commit();
      if (force_errors_.is_open()) force_errors_.commit();
    }
  }

 private:
  void check_scratch(const Config& config, const DirectShape& shape) {
    const int tile = shape.tile > 0 ? shape.tile : DirectDefaults<Space>::tile;
    // Hermite sources in double are the largest tile entries (64 bytes).
    const std::size_t bytes = std::size_t(tile) * 64 + 64;
    const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
    if (bytes > limit)
      config.fail("direct.tile", fmt::format("a tile of {} particles needs up to {} bytes of team "
                                             "scratch; this backend offers {}",
                                             tile, bytes, limit));
  }

  void allocate(int n) {
    p_ = Particles<Space>(n);
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

  void all_forces(RunContext& ctx) {
    solver().accelerations(p_, {{}, p_.n}, false, {p_.acc, {}, {}}, ctx.timers, false);
  }

  // Accelerations of a fixed sample of particles from the run's solver against double-precision
  // direct summation: percentiles of |da| / |a| into force_error.csv.
  void force_error(RunContext& ctx) {
    auto scope = ctx.timers.scope("force_error");
    const int count = int(std::min<std::int64_t>(force_error_sample_, p_.n));
    Kokkos::View<int*, typename Space::memory_space> index("hayate::gravity::sample", count);
    sample_rows(p_, count, index);
    Vec approx("hayate::gravity::sample_acc", count), exact("hayate::gravity::sample_ref", count);
    solver().accelerations(p_, {index, count}, false, {approx, {}, {}}, ctx.timers, true);
    DirectSolver<Space> reference(Precision::Double, {}, G_, eps_);
    reference.compute(p_.x, p_.m, p_.n, {index, count}, false, {exact, {}, {}});
    const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), approx);
    const auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), exact);
    const ForceErrorStats s = force_error_stats(a, r, count);
    force_errors_.row({step_, time_, std::int64_t(count), s.p50, s.p90, s.p99, s.max});
  }

  void hermite_forces(const Vec& acc, const Vec& jerk, RunContext& ctx) {
    // The constructor only builds the direct solver for Hermite (the factory checks it).
    auto scope = ctx.timers.scope("direct");
    direct_->solver().compute_hermite(p_.x, p_.v, p_.m, p_.n, false, {acc, {}, jerk});
  }

  void leapfrog_step(RunContext& ctx) {
    {
      auto scope = ctx.timers.scope("integrate");
      kick(p_, 0.5 * dt_);
      drift(p_, dt_);
    }
    solver().prepare(p_, ctx.timers, 0);
    all_forces(ctx);
    auto scope = ctx.timers.scope("integrate");
    kick(p_, 0.5 * dt_);
    time_ += dt_;
  }

  void hermite_step(RunContext& ctx) {
    {
      auto scope = ctx.timers.scope("integrate");
      hermite_predict(p_, x0_, v0_, dt_);
    }
    hermite_forces(tmp_acc_, tmp_jerk_, ctx);
    auto scope = ctx.timers.scope("integrate");
    hermite_correct(p_, x0_, v0_, tmp_acc_, tmp_jerk_, dt_);
    time_ += dt_;
  }

  // One dt_max cycle of power-of-two block steps (kick-drift-kick per particle). All particles
  // are synchronised, with valid accelerations, at the start and the end of the cycle; ticks
  // with no particle due are skipped.
  void block_step(RunContext& ctx) {
    const std::int64_t ticks = std::int64_t(1) << max_level_;
    const double dt_min = dt_ / double(ticks);
    {
      auto scope = ctx.timers.scope("integrate");
      block_open(p_, dt_, eta_, eps_, max_level_);
    }
    std::int64_t tick = 0;
    while (tick < ticks) {
      int count = 0;
      int coarsest_due = 0;
      {
        auto scope = ctx.timers.scope("integrate");
        const LevelRange levels = block_levels(p_, level_work_);
        const std::int64_t stride = ticks >> levels.finest;
        const std::int64_t next = (tick / stride + 1) * stride;
        drift(p_, double(next - tick) * dt_min);
        tick = next;
        // Levels at or above max_level - (trailing zeros of tick) are due; 0 when all are.
        int zeros = 0;
        while (zeros < max_level_ && (tick >> zeros & 1) == 0) ++zeros;
        coarsest_due = max_level_ - zeros <= levels.coarsest ? 0 : max_level_ - zeros;
      }
      // May reorder the particles: select after it.
      solver().prepare(p_, ctx.timers, coarsest_due);
      {
        auto scope = ctx.timers.scope("integrate");
        count = block_select(p_, tick, max_level_, active_, row_, select_work_);
      }
      solver().accelerations(p_, {active_, count, row_}, false, {tmp_acc_, {}, {}}, ctx.timers,
                             false);
      auto scope = ctx.timers.scope("integrate");
      block_kick(p_, active_, count, tmp_acc_, tick, dt_, eta_, eps_, max_level_);
      force_evaluations_ += count;
    }
    time_ += dt_;
  }

  void thermo_row(RunContext& ctx) {
    solver().accelerations(p_, {{}, p_.n}, true, {tmp_acc_, p_.pot, {}}, ctx.timers, true);
    Thermo t;
    {
      auto scope = ctx.timers.scope("diagnostics");
      t = measure_thermo(p_);
    }
    auto scope = ctx.timers.scope("output");
    const double e = t.etotal();
    if (!std::isfinite(e))
      throw core::RuntimeFailure(fmt::format(
          "gravity: the energy is not finite at step {} (time {}); reduce time.dt or raise "
          "system.softening",
          step_, time_));
    if (!have_e0_) {
      e0_ = e;
      have_e0_ = true;
    }
    thermo_.row({step_, time_, t.ke, t.pe, e, t.p[0], t.p[1], t.p[2], t.l[0], t.l[1], t.l[2],
                 t.virial_ratio(), e0_ != 0 ? (e - e0_) / std::fabs(e0_) : e - e0_,
                 force_evaluations_});
  }

  void snapshot(RunContext& ctx) {
    auto scope = ctx.timers.scope("output");
    auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p_.x);
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p_.v);
    auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p_.m);
    auto id = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p_.id);
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

  void open_output(RunContext& ctx) {
    thermo_ = core::CsvWriter(ctx.path("thermo.csv"),
                              {"step", "time", "ke", "pe", "etotal", "px", "py", "pz", "lx", "ly",
                               "lz", "virial_ratio", "energy_error", "force_evaluations"});
    snapshots_ = core::XyzWriter(ctx.path("snapshots.xyz"));
    if (force_error_every_ > 0)
      force_errors_ = core::CsvWriter(ctx.path("force_error.csv"),
                                      {"step", "time", "samples", "p50", "p90", "p99", "max"});
    if (!ctx.quiet)
      spdlog::info("gravity: {} particles, {} solver, {} precision, {} integrator", p_.n,
                   config_.string("solver"), config_.string("precision"),
                   config_.string("time.integrator"));
  }

  const Config& config_;
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
  std::int64_t force_evaluations_ = 0;  // targets evaluated by block steps (this run segment)
  core::CsvWriter thermo_;
  core::XyzWriter snapshots_;
  core::CsvWriter force_errors_;
};

void declare(core::Schema& s) {
  s.section("system", "Particles and physical constants");
  s.integer("system.n",
            "Number of particles of a generated initial condition (kepler: 2; file: "
            "from the file)")
      .defaults(1024)
      .range(2, 1LL << 27);
  s.real("system.G", "Gravitational constant").defaults(1.0).above(0);
  s.real("system.softening", "Plummer softening length eps (force m r / (r^2 + eps^2)^1.5)")
      .defaults(0.01)
      .above(0);
  s.integer("system.seed", "Seed of the initial-condition random numbers").defaults(1).at_least(0);
  s.choice("solver", {"direct", "tree"},
           "Force solver: direct O(N^2) summation or the Barnes-Hut octree")
      .defaults("direct");
  s.choice("precision", {"float", "double", "mixed"},
           "Force arithmetic: float, double, or mixed (float pair terms summed in double)")
      .defaults("mixed");
  s.section("direct", "Launch shape of the direct-summation kernel (0 = the backend's default)");
  s.integer("direct.team_size", "Threads per team; 0 = 256 on GPUs, 1 on CPUs")
      .defaults(0)
      .range(0, 1024);
  s.integer("direct.tile", "Source particles staged per scratch tile; 0 = 256")
      .defaults(0)
      .range(0, 4096);
  s.integer("direct.j_split",
            "Teams sharing one block of targets (source range split); 0 = automatic, enough "
            "to fill the device")
      .defaults(0)
      .at_least(0);
  s.integer("direct.i_per_thread",
            "Targets per thread (1, 2, 4 or 8) of the leapfrog/block force kernel; 0 = automatic "
            "(GPUs: 1 below 65536 targets, else 4; CPUs: 8)")
      .defaults(0)
      .range(0, 8);
  s.section("tree", "Barnes-Hut tree (solver: tree)");
  s.choice("tree.mac", {"acceleration", "theta"},
           "Opening criterion: acceleration (G m/d^2 (b/d)^2 <= dacc |a_old|) or theta "
           "(cell side / d < theta)")
      .defaults("acceleration");
  s.real("tree.dacc", "Acceleration-MAC tolerance (2^-9 = 0.001953125)")
      .defaults(0.001953125)
      .above(0)
      .at_most(1);
  s.real("tree.theta", "Opening angle of the theta MAC, and of the first step")
      .defaults(0.5)
      .above(0)
      .at_most(2);
  s.choice("tree.first_step", {"theta", "direct"},
           "Forces of the first step, before accelerations exist for the acceleration MAC")
      .defaults("theta");
  s.integer("tree.leaf_size", "Most particles in a leaf").defaults(32).range(1, 1024);
  s.integer("tree.group_cell",
            "Target groups are cut where they cross a boundary inside a cell of more than this "
            "many groups' worth of particles; 0 = never (fixed runs of sorted particles)")
      .defaults(64)
      .range(0, 1 << 20);
  s.integer("tree.rebuild_every",
            "Rebuild the tree every this many force evaluations; 0 = automatic (when the "
            "next walk would cost more than the average step since the last rebuild; not "
            "reproducible run to run)")
      .defaults(0)
      .at_least(0);
  s.boolean("tree.quadrupole", "Use node quadrupole moments (else monopoles only)").defaults(true);
  s.boolean("tree.reorder",
            "Keep the particles in the tree's order (permuted at each rebuild), so the "
            "evaluations read and write them in order; snapshots and force-error samples go by "
            "the initial conditions' order either way")
      .defaults(true);
  s.choice("tree.walk", {"group", "particle"},
           "Walk: group (a team walks once per group, lanes test nodes in parallel and sum "
           "interaction lists from scratch) or particle (each thread walks node after node)")
      .defaults("group");
  s.choice("tree.curve", {"hilbert", "morton"},
           "Space-filling curve of the keys that order the particles: Peano-Hilbert (compact "
           "target groups) or Morton")
      .defaults("hilbert");
  s.choice("tree.group_order", {"cost", "tree"},
           "Order in which the group walk launches its groups: cost (dearest first, by the "
           "entries of each group's last walk, tree order within a power-of-two class) or tree")
      .defaults("cost");
  s.section("time", "Time integration");
  s.choice("time.integrator", {"leapfrog", "block", "hermite"},
           "leapfrog: KDK with the shared step dt; block: KDK with power-of-two individual steps "
           "<= dt; hermite: 4th-order Hermite with the shared step dt (direct solver only)")
      .defaults("leapfrog");
  s.real("time.dt", "Shared step (leapfrog, hermite) or largest block step (block)")
      .defaults(0.0078125)
      .above(0);
  s.real("time.eta", "Block-step accuracy: dt_i <= eta sqrt(eps / |a_i|)").defaults(0.025).above(0);
  s.integer("time.max_level", "Deepest block level: the smallest step is dt / 2^max_level")
      .defaults(10)
      .range(0, 30);
  s.section("run", "Run length");
  s.integer("run.steps", "Steps to take (block: dt cycles)").defaults(100).at_least(1);
  s.section("initial", "Initial conditions");
  s.choice("initial.type", {"plummer", "hernquist", "cold_sphere", "kepler", "galaxy", "file"},
           "Initial condition model, or particles read from initial.file")
      .defaults("plummer");
  s.real("initial.mass", "Total mass").defaults(1.0).above(0);
  s.real("initial.radius", "plummer: virial radius; hernquist: scale length a; cold_sphere: radius")
      .defaults(1.0)
      .above(0);
  s.real("initial.truncation", "hernquist: truncation radius in scale lengths")
      .defaults(50.0)
      .above(1);
  s.section("initial.kepler", "Two-body orbit");
  s.real("initial.kepler.semi_major_axis", "Semi-major axis").defaults(1.0).above(0);
  s.real("initial.kepler.eccentricity", "Eccentricity (starts at apocentre)")
      .defaults(0.5)
      .at_least(0)
      .below(1);
  s.real("initial.kepler.mass_ratio", "m2 / m1").defaults(1.0).above(0);
  s.section("initial.galaxy", "Hernquist bulge + exponential disk + dark halo");
  s.real("initial.galaxy.bulge_mass", "Bulge mass").defaults(0.05).at_least(0);
  s.real("initial.galaxy.bulge_scale", "Bulge Hernquist scale length").defaults(0.2).above(0);
  s.real("initial.galaxy.disk_mass", "Disk mass").defaults(0.1).at_least(0);
  s.real("initial.galaxy.disk_scale", "Disk exponential scale length R_d").defaults(1.0).above(0);
  s.real("initial.galaxy.disk_height", "Disk sech^2 scale height z0").defaults(0.1).above(0);
  s.real("initial.galaxy.disk_sigma_ratio", "Disk sigma_R / sigma_z").defaults(1.5).above(0);
  s.real("initial.galaxy.halo_mass", "Halo mass within its truncation radius")
      .defaults(1.0)
      .at_least(0);
  s.real("initial.galaxy.halo_scale", "Halo scale length (Hernquist a, NFW r_s)")
      .defaults(3.0)
      .above(0);
  s.real("initial.galaxy.halo_truncation",
         "Halo truncation radius in scale lengths (the concentration for NFW)")
      .defaults(10.0)
      .above(1);
  s.choice("initial.galaxy.halo_profile", {"hernquist", "nfw"}, "Halo density profile")
      .defaults("hernquist");
  s.string("initial.file", "Particle file for initial.type: file").defaults("\"\"");
  s.choice("initial.format", {"auto", "xyz", "csv"},
           "Format of initial.file; auto = by extension (.csv, else extended XYZ, last frame)")
      .defaults("auto");
  s.integer("output.every", "Write a thermo.csv row every this many steps")
      .defaults(10)
      .at_least(1);
  s.integer("output.snapshot_every",
            "Append a snapshots.xyz frame every this many steps (0 = only the final state)")
      .defaults(0)
      .at_least(0);
  s.integer("output.force_error_every",
            "Write force_error.csv (solver vs double direct summation on a sample) every this "
            "many steps and at the end; 0 = never")
      .defaults(0)
      .at_least(0);
  s.integer("output.force_error_sample", "Particles in the force-error sample")
      .defaults(1024)
      .range(1, 1 << 20);

  // Keys of earlier versions.
  s.removed("tree.sort", "the backend's fastest stable sort is used");
  s.removed("tree.kernel", "the backend's fastest walk primitives are used");
}

}  // namespace

void register_problem(core::Registry& registry) {
  registry.add(core::ProblemInfo{
      "gravity",
      "Gravitational N-body: direct summation or Barnes-Hut tree, leapfrog/block/Hermite", declare,
      [](const Config& config, const std::string& backend) {
        if (config.string("initial.type") == "galaxy") {
          const double total = config.real("initial.galaxy.bulge_mass") +
                               config.real("initial.galaxy.disk_mass") +
                               config.real("initial.galaxy.halo_mass");
          if (!(total > 0))
            config.fail("initial.galaxy.halo_mass", "the galaxy needs a positive total mass");
        }
        if (config.string("time.integrator") == "hermite" && config.string("solver") != "direct")
          config.fail("solver", "the Hermite integrator needs the direct solver (jerks)");
        return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
          return std::make_unique<GravityProblem<decltype(space)>>(config);
        });
      }});
}

}  // namespace hayate::gravity
