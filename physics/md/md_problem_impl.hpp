#pragma once
// problem: md, the Problem the driver steps: thermo.csv, dump.xyz, checkpoints, timers.
#include "config/error.hpp"
#include "exec/dispatch.hpp"
#include "io/csv_writer.hpp"
#include "io/xyz.hpp"
#include "md_problem.hpp"
#include "md_setup.hpp"
#include "md_system.hpp"
#include "parallel/comm.hpp"
#include "run/guard.hpp"
#include "run/problem.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>

namespace hayate::md {

template <class Space, class Real, class Style>
class MdProblem final : public core::Problem {
 public:
  MdProblem(const core::Config& config, const Space& space, const std::string& backend)
      : steps_(config.integer("run.steps")),
        thermo_every_(config.integer("output.thermo_every")),
        dump_every_(config.integer("output.dump_every")),
        system_(make_system(config, space, backend)) {
    const auto& masses = system_.type_set().mass;
    lightest_ = *std::min_element(masses.begin(), masses.end());
    dt_ = system_.params().dt;
    reach_ = system_.type_set().max_cutoff() + system_.params().skin;
  }

  void initialize(core::RunContext& ctx) override {
    on_every_rank([&] { system_.initialize(); });
    log_decomposition(ctx);
    log_kspace(ctx);
    open_output(ctx, std::nullopt);
  }

  void restore(const core::CheckpointReader& cp, core::RunContext& ctx) override {
    check_checkpoint(ctx.config, cp, PartChecks::sizes);  // values: as each rank reads them
    on_every_rank([&] { system_.restore(cp); });
    log_decomposition(ctx);
    open_output(ctx, system_.step());
  }

  void save(core::CheckpointWriter& cp) const override { system_.save(cp); }

  std::int64_t current_step() const override { return system_.step(); }
  std::int64_t total_steps() const override { return steps_; }

  void advance(core::RunContext& ctx) override {
    const std::int64_t next = system_.step() + 1;
    const bool want_ev = next % thermo_every_ == 0 || next >= steps_;
    {
      auto scope = ctx.timers.scope("integrate");
      system_.kick_drift();
    }
    system_.advance_counter();
    const bool rebuild = system_.needs_rebuild();
    // Every step, from the displacement the rebuild rule measures anyway: one step earlier every
    // atom was within skin/2 of its build position, so one now beyond cutoff + skin jumped past
    // neighbors the list does not hold.
    // moved2, lost atoms and thermo are the whole system's: every rank stops alike.
    if (system_.moved2() > reach_ * reach_) {
      const double moved = std::sqrt(system_.moved2());
      throw core::CollectiveFailure(
          moved < 1e150
              ? fmt::format("md: an atom moved {:.3g} by step {} since the neighbor list was "
                            "built, beyond cutoff + skin = {:.3g}: the integration has blown up "
                            "(reduce run.dt)",
                            moved, system_.step(), reach_)
              : fmt::format("md: atoms lost in step {} (positions not finite): the integration "
                            "has blown up; reduce run.dt",
                            system_.step()));
    }
    if (rebuild) {
      auto scope = ctx.timers.scope("neighbor");
      system_.rebuild();
      if (system_.lost_atoms() > 0)
        throw core::CollectiveFailure(fmt::format(
            "md: {} atoms lost in step {} (positions not finite): the integration has blown "
            "up; reduce run.dt",
            system_.lost_atoms(), system_.step()));
    }
    if (world_.distributed()) {
      auto scope = ctx.timers.scope("comm");
      system_.update_ghosts();
    }
    {
      auto scope = ctx.timers.scope("force");
      system_.local_forces(want_ev);
    }
    if (system_.newton_ghosts()) {
      auto scope = ctx.timers.scope("comm");
      system_.return_ghost_forces();
    }
    auto scope = ctx.timers.scope("integrate");
    system_.finish_step();
  }

  void output(core::RunContext& ctx, bool final) override {
    const std::int64_t step = system_.step();
    auto scope = ctx.timers.scope("output");
    if (step % thermo_every_ == 0 || final) {
      const Thermo t = system_.thermo();
      guard(t);
      if (step != last_thermo_ && world_.root())
        thermo_.row({t.step, t.temp, t.pe, t.ke, t.etotal, t.press});
      last_thermo_ = step;
    }
    if (dump_every_ > 0 && (step % dump_every_ == 0 || final) && step != last_dump_) {
      system_.check_tables();
      const core::XyzFrame f = frame();
      if (world_.root()) dump_.write(f);
      last_dump_ = step;
    }
  }

  // Before a checkpoint: finite positions and the thermo guard on the current state (the
  // energy and pressure are the last computed).
  void check_state(core::RunContext&) override {
    system_.check_tables();
    const std::int64_t bad = core::first_non_finite(system_.space(), system_.positions()) >= 0;
    if (world_.max(bad) > 0)
      throw core::CollectiveFailure(
          fmt::format("md: atoms lost at step {} (positions not finite): the integration has "
                      "blown up; reduce run.dt",
                      system_.step()));
    guard(system_.thermo());
  }

  // The current configuration in atom-id order (on several ranks every rank calls it and the
  // first gets the whole system; the others an empty frame).
  core::XyzFrame frame() const {
    auto x = system_.gathered(system_.positions());
    auto v = system_.gathered(system_.velocities());
    auto t = system_.gathered(system_.types());
    auto id = system_.gathered(system_.ids());
    const int n = int(id.extent(0));
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return id(a) < id(b); });
    core::XyzFrame f;
    f.box = std::array<double, 3>{double(system_.box().length[0]), double(system_.box().length[1]),
                                  double(system_.box().length[2])};
    f.columns = {core::XyzColumn{"pos", 3, {}}, core::XyzColumn{"velo", 3, {}}};
    f.columns[0].values.reserve(3 * n);
    f.columns[1].values.reserve(3 * n);
    for (const int i : order) {
      f.species.push_back(system_.type_set().names[t(i)]);
      for (int d = 0; d < 3; ++d) {
        f.columns[0].values.push_back(double(x(i, d)));
        f.columns[1].values.push_back(double(v(i, d)));
      }
    }
    if constexpr (is_charged<Style>::value) {
      auto q = system_.gathered(system_.charges());
      core::XyzColumn charge{"charge", 1, {}};
      for (const int i : order) charge.values.push_back(double(q(i)));
      f.columns.push_back(std::move(charge));
    }
    f.info.emplace_back("Time", fmt::format("{}", double(system_.step()) * system_.params().dt));
    f.info.emplace_back("step", std::to_string(system_.step()));
    return f;
  }

 private:
  // Set-up that exchanges atoms between ranks: a fault only this rank meets (a pair closer than
  // its table begins, memory) would leave the others waiting in an exchange, so it stops every
  // rank at once, naming this one. Bad input and failures every rank meets alike (read before
  // any exchange, or reduced) go on to the driver's agreement.
  template <class F>
  void on_every_rank(F&& f) {
    if (!world_.distributed()) return f();
    try {
      f();
    } catch (const core::InputError&) {
      throw;
    } catch (const core::CollectiveFailure&) {
      throw;
    } catch (const core::ReportedFailure&) {
      throw;  // agreed among the ranks (a checkpoint part one rank could not read)
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: run failed on rank %d of %d: %s\n", world_.rank(), world_.size(),
                   e.what());
      std::fflush(stderr);
      world_.abort(3);
    }
  }

  // Every rank calls it (the counts are reduced); the first rank prints.
  void log_decomposition(const core::RunContext& ctx) const {
    const auto* domain = system_.domain();
    if (!domain) return;
    const std::int64_t own = system_.size(), ghosts = system_.ghost_atoms();
    const std::int64_t fewest = world_.min(own), most = world_.max(own);
    const std::int64_t most_ghosts = world_.max(ghosts);
    const std::int64_t interior = system_.interior_atoms();
    const std::int64_t fewest_inner = world_.min(interior), most_inner = world_.max(interior);
    if (ctx.quiet) return;
    const BrickGrid& g = domain->grid();
    spdlog::info(
        "md: {} ranks as {} x {} x {} sub-boxes, {} to {} atoms and up to {} ghost "
        "atoms per rank",
        world_.size(), g.p[0], g.p[1], g.p[2], fewest, most, most_ghosts);
    if (system_.overlaps())
      spdlog::info(
          "md: {} to {} interior atoms per rank (farther than cutoff + skin from every cut "
          "face), their forces computed while the ghosts' positions travel",
          fewest_inner, most_inner);
  }

  void log_kspace(const core::RunContext& ctx) const {
    const EwaldSetup* k = system_.ewald_setup();
    if (!k || ctx.quiet) return;
    spdlog::info(
        "ewald: g = {:.6g}, k vectors {} (kmax {} {} {}), estimated relative force accuracy {:.3g}",
        k->g_ewald, k->kcount, k->kmax[0], k->kmax[1], k->kmax[2],
        k->estimated / system_.units().qqr2e);
  }

  static MdSystem<Space, Real, Style> make_system(const core::Config& config, const Space& space,
                                                  const std::string& backend) {
    BrickGrid grid;
    const InitialState init = make_initial_state(config, &grid);  // this rank's atoms
    MdParams params = read_params(config, backend, init.total());
    params.grid = grid;
    return MdSystem<Space, Real, Style>(init, params, space);
  }

  // Not finite, or so hot that the lightest atoms' rms speed carries them past the neighbor
  // cutoff in one step: no stable integration looks like that.
  void guard(const Thermo& t) const {
    if (!std::isfinite(t.etotal) || !std::isfinite(t.press) || !std::isfinite(t.temp))
      throw core::CollectiveFailure(fmt::format(
          "md: the energy, pressure or temperature is not finite at step {} (time step too "
          "large or atoms overlapping)",
          t.step));
    // rms speed sqrt(3 k_B T / m) in the input's units (real, metal: k_B and the mass-velocity
    // conversion are not 1).
    const Units& u = system_.units();
    const double per_step =
        std::sqrt(3.0 * u.boltz * std::max(t.temp, 0.0) / (lightest_ * u.mvv2e)) * dt_;
    if (per_step > reach_)
      throw core::CollectiveFailure(fmt::format(
          "md: the temperature is {:.3g} at step {}: atoms move about {:.3g} per step, beyond "
          "the neighbor cutoff {:.3g}; the integration has blown up (reduce run.dt)",
          t.temp, t.step, per_step, reach_));
  }

  // Fresh series, or (resume_after: the checkpoint's step) the folder's series continued.
  void open_output(core::RunContext& ctx, std::optional<std::int64_t> resume_after) {
    if (!world_.root()) return;
    thermo_ = core::CsvWriter(ctx.outputs, ctx.path("thermo.csv"),
                              {"step", "temp", "pe", "ke", "etotal", "press"}, resume_after);
    if (dump_every_ > 0) dump_ = core::XyzWriter(ctx.outputs, ctx.path("dump.xyz"), resume_after);
  }

  const core::Comm& world_ = core::Comm::world();
  std::int64_t steps_, thermo_every_, dump_every_;
  MdSystem<Space, Real, Style> system_;
  double lightest_ = 1, dt_ = 0, reach_ = 0;  // the thermo guard's lightest mass, step, cutoff
  core::CsvWriter thermo_;
  core::XyzWriter dump_;
  std::int64_t last_thermo_ = -1, last_dump_ = -1;
};

template <class Real, class Style>
std::unique_ptr<core::Problem> make_md_problem(const core::Config& config,
                                               const std::string& backend) {
  return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
    return std::make_unique<MdProblem<decltype(space), Real, Style>>(config, space, backend);
  });
}

}  // namespace hayate::md
