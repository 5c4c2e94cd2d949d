#pragma once
// problem: md, the Problem the driver steps: thermo.csv, dump.xyz, checkpoints, timers.
#include "config/error.hpp"
#include "exec/dispatch.hpp"
#include "io/csv_writer.hpp"
#include "io/xyz.hpp"
#include "md_problem.hpp"
#include "md_setup.hpp"
#include "md_system.hpp"
#include "run/problem.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

namespace hayate::md {

template <class Space, class Real, class Style>
class MdProblem final : public core::Problem {
 public:
  MdProblem(const core::Config& config, const Space& space, const std::string& backend)
      : steps_(config.integer("run.steps")),
        thermo_every_(config.integer("output.thermo_every")),
        dump_every_(config.integer("output.dump_every")),
        system_(make_system(config, space, backend)) {}

  void initialize(core::RunContext& ctx) override {
    system_.initialize();
    log_kspace(ctx);
    open_output(ctx);
  }

  void restore(const core::CheckpointReader& cp, core::RunContext& ctx) override {
    try {
      system_.restore(cp);
    } catch (const std::runtime_error& e) {
      ctx.config.fail("checkpoint.restart", e.what());
    }
    open_output(ctx);
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
    if (system_.needs_rebuild()) {
      auto scope = ctx.timers.scope("neighbor");
      system_.rebuild();
    }
    {
      auto scope = ctx.timers.scope("force");
      system_.compute_forces(want_ev);
    }
    auto scope = ctx.timers.scope("integrate");
    system_.finish_step();
  }

  void output(core::RunContext& ctx, bool final) override {
    const std::int64_t step = system_.step();
    auto scope = ctx.timers.scope("output");
    if (step % thermo_every_ == 0 || final) {
      const Thermo t = system_.thermo();
      if (!std::isfinite(t.etotal) || !std::isfinite(t.press))
        throw core::RuntimeFailure(fmt::format(
            "md: non-finite energy or pressure at step {} (time step too large or atoms "
            "overlapping)",
            step));
      if (step != last_thermo_) thermo_.row({t.step, t.temp, t.pe, t.ke, t.etotal, t.press});
      last_thermo_ = step;
    }
    if (dump_every_ > 0 && (step % dump_every_ == 0 || final) && step != last_dump_) {
      dump_.write(frame());
      last_dump_ = step;
    }
    if (final) {
      thermo_.commit();
      if (dump_.is_open()) dump_.commit();
    }
  }

  // The current configuration in atom-id order.
  core::XyzFrame frame() const {
    const Space& space = system_.space();
    auto x = Kokkos::create_mirror_view_and_copy(space, system_.positions());
    auto v = Kokkos::create_mirror_view_and_copy(space, system_.velocities());
    auto t = Kokkos::create_mirror_view_and_copy(space, system_.types());
    auto id = Kokkos::create_mirror_view_and_copy(space, system_.ids());
    space.fence();
    const int n = system_.size();
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
      auto q = Kokkos::create_mirror_view_and_copy(space, system_.charges());
      core::XyzColumn charge{"charge", 1, {}};
      for (const int i : order) charge.values.push_back(double(q(i)));
      f.columns.push_back(std::move(charge));
    }
    f.info.emplace_back("Time", fmt::format("{}", double(system_.step()) * system_.params().dt));
    f.info.emplace_back("step", std::to_string(system_.step()));
    return f;
  }

 private:
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
    const InitialState init = make_initial_state(config);
    return MdSystem<Space, Real, Style>(init, read_params(config, backend, init.size()), space);
  }

  void open_output(core::RunContext& ctx) {
    thermo_ =
        core::CsvWriter(ctx.path("thermo.csv"), {"step", "temp", "pe", "ke", "etotal", "press"});
    if (dump_every_ > 0) dump_ = core::XyzWriter(ctx.path("dump.xyz"));
  }

  std::int64_t steps_, thermo_every_, dump_every_;
  MdSystem<Space, Real, Style> system_;
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
