#pragma once
// What an integrator needs from a force solver: accelerations (and the potential) of a set of
// target particles from all particles. Direct summation and the tree both provide it.
#include "gravity/direct_solver.hpp"
#include "run/timers.hpp"

namespace hayate::gravity {

template <class Space>
class ForceSolver {
 public:
  virtual ~ForceSolver() = default;
  // Fills out.acc (and out.pot when with_potential) for the targets, compact by target index.
  virtual void accelerations(const Particles<Space>& p, const Targets<Space>& targets,
                             bool with_potential, const ForceOutput<Space>& out,
                             core::Timers& timers) = 0;
};

template <class Space>
class DirectForce final : public ForceSolver<Space> {
 public:
  explicit DirectForce(DirectSolver<Space> solver) : solver_(std::move(solver)) {}
  void accelerations(const Particles<Space>& p, const Targets<Space>& targets, bool with_potential,
                     const ForceOutput<Space>& out, core::Timers& timers) override {
    auto scope = timers.scope("direct");
    solver_.compute(p.x, p.m, p.n, targets, with_potential, out);
  }
  DirectSolver<Space>& solver() { return solver_; }

 private:
  DirectSolver<Space> solver_;
};

}  // namespace hayate::gravity
