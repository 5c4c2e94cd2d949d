#pragma once
// What an integrator needs from a force solver: accelerations (and the potential) of a set of
// target particles from all particles. Direct summation and the tree both provide it.
#include "gravity/direct_solver.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"

namespace hayate::gravity {

template <class Space>
class ForceSolver {
 public:
  virtual ~ForceSolver() = default;
  // Fills out.acc (and out.pot when with_potential) for the targets, compact by target index.
  // Integration evaluations (diagnostic = false) drive the solver's own state (tree rebuilds,
  // the previous accelerations the tree's MAC uses); diagnostic ones (thermo, accuracy checks)
  // leave it alone, so the trajectory does not depend on the output cadence.
  virtual void accelerations(const Particles<Space>& p, const Targets<Space>& targets,
                             bool with_potential, const ForceOutput<Space>& out,
                             core::Timers& timers, bool diagnostic) = 0;
  // Called by the integrators after a drift and before they pick the targets of the next
  // evaluation: a solver may rebuild its structures here and reorder the particles (every
  // per-particle array of p, rows identified by p.id), as the tree does (TreeParams::reorder).
  // `walk_kind` labels the coming evaluation's set of targets, so that a solver timing its
  // evaluations compares like with like: 0 = every particle; with block steps, the coarsest
  // level due (the due set is that level and all finer ones).
  virtual void prepare(Particles<Space>& /*p*/, core::Timers& /*timers*/, int /*walk_kind*/) {}
  virtual void save(core::CheckpointWriter&) const {}
  virtual void restore(const core::CheckpointReader&, int /*n*/) {}
};

template <class Space>
class DirectForce final : public ForceSolver<Space> {
 public:
  explicit DirectForce(DirectSolver<Space> solver) : solver_(std::move(solver)) {}
  void accelerations(const Particles<Space>& p, const Targets<Space>& targets, bool with_potential,
                     const ForceOutput<Space>& out, core::Timers& timers, bool) override {
    auto scope = timers.scope("direct");
    solver_.compute(p.x, p.m, p.n, targets, with_potential, out);
  }
  DirectSolver<Space>& solver() { return solver_; }

 private:
  DirectSolver<Space> solver_;
};

}  // namespace hayate::gravity
