#pragma once
// What an integrator needs from a force solver: accelerations (and the potential) of a set of
// target particles from all particles. Direct summation and the tree both provide it.
#include "gravity/direct_solver.hpp"
#include "parallel/comm.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"

#include <utility>
#include <vector>

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

// Direct summation. On several ranks every rank holds every particle (replicated data, as
// NBODY6++ distributes its direct sums): each computes the forces on its share of the targets,
// with the launch shape of the whole set, and all ranks gather every share, so each rank's
// arrays are the one-rank run's bit for bit and the integrators run unchanged.
template <class Space>
class DirectForce final : public ForceSolver<Space> {
 public:
  using Mem = typename Space::memory_space;

  explicit DirectForce(DirectSolver<Space> solver) : solver_(std::move(solver)) {}

  void accelerations(const Particles<Space>& p, const Targets<Space>& targets, bool with_potential,
                     const ForceOutput<Space>& out, core::Timers& timers, bool) override {
    auto scope = timers.scope("direct");
    if (!world_.distributed()) return solver_.compute(p.x, p.m, p.n, targets, with_potential, out);
    const Share share = share_of(targets);
    if (share.targets.count > 0)
      solver_.compute(p.x, p.m, p.n, share.targets, with_potential, local_output(share, false));
    auto gather = timers.scope("direct_gather");
    gather_shares(share, with_potential, false, out);
  }

  // Accelerations and jerks of every particle (Hermite).
  void hermite(const Particles<Space>& p, const ForceOutput<Space>& out, core::Timers& timers) {
    auto scope = timers.scope("direct");
    const Targets<Space> all{{}, p.n};
    if (!world_.distributed()) return solver_.compute_hermite(p.x, p.v, p.m, p.n, all, false, out);
    const Share share = share_of(all);
    if (share.targets.count > 0)
      solver_.compute_hermite(p.x, p.v, p.m, p.n, share.targets, false, local_output(share, true));
    auto gather = timers.scope("direct_gather");
    gather_shares(share, false, true, out);
  }

  DirectSolver<Space>& solver() { return solver_; }

 private:
  // This rank's targets: a contiguous block of the set (by position in it).
  struct Share {
    Targets<Space> targets;
    int total = 0;
  };

  Share share_of(const Targets<Space>& t) {
    const core::RowSlab s = core::row_slab(t.count, 1, world_.size(), world_.rank());
    const auto range = std::make_pair(s.first, s.first + s.count);
    Kokkos::View<const int*, Mem> index;
    if (t.index.extent(0) > 0) {
      index = Kokkos::subview(t.index, range);
    } else {
      if (int(all_.extent(0)) < t.count) {
        all_ = Kokkos::View<int*, Mem>("hayate::gravity::all_targets", t.count);
        fill_identity(solver_.space(), all_);
      }
      index = Kokkos::subview(all_, range);
    }
    return Share{Targets<Space>{index, s.count, {}, t.count}, t.count};
  }

  ForceOutput<Space> local_output(const Share& share, bool jerk) {
    const int n = share.targets.count;
    if (int(acc_.extent(0)) < n) {
      acc_ = Kokkos::View<double* [3], Mem>("hayate::gravity::share_acc", n);
      pot_ = Kokkos::View<double*, Mem>("hayate::gravity::share_pot", n);
      jerk_ = Kokkos::View<double* [3], Mem>("hayate::gravity::share_jerk", n);
    }
    return {acc_, pot_, jerk ? jerk_ : Kokkos::View<double* [3], Mem>()};
  }

  // Every rank's share of (acc, pot, jerk) into `out`, rows by target position, on every rank.
  void gather_shares(const Share& share, bool pot, bool jerk, const ForceOutput<Space>& out) {
    const int per = 3 + (pot ? 1 : 0) + (jerk ? 3 : 0);
    const int n = share.targets.count;
    const Space& space = solver_.space();
    std::vector<double> mine(std::size_t(n) * per);
    {
      const auto a = on_host(space, acc_);
      const auto u = on_host(space, pot_);
      const auto j = on_host(space, jerk_);
      for (int k = 0; k < n; ++k) {
        double* row = mine.data() + std::size_t(k) * per;
        for (int c = 0; c < 3; ++c) row[c] = a(k, c);
        if (pot) row[3] = u(k);
        if (jerk)
          for (int c = 0; c < 3; ++c) row[(pot ? 4 : 3) + c] = j(k, c);
      }
    }
    std::vector<std::size_t> counts;
    for (int r = 0; r < world_.size(); ++r)
      counts.push_back(std::size_t(core::row_slab(share.total, 1, world_.size(), r).count) * per *
                       sizeof(double));
    std::vector<double> all(std::size_t(share.total) * per);
    world_.all_gather(mine.data(), mine.size() * sizeof(double), all.data(), counts);
    // Whole views to and from the host (a block of rows of a device view need not be
    // contiguous); rows past the set keep their values.
    const auto a = on_host(space, out.acc);
    decltype(on_host(space, out.pot)) u;
    decltype(on_host(space, out.jerk)) j;
    if (pot) u = on_host(space, out.pot);
    if (jerk) j = on_host(space, out.jerk);
    for (int k = 0; k < share.total; ++k) {
      const double* row = all.data() + std::size_t(k) * per;
      for (int c = 0; c < 3; ++c) a(k, c) = row[c];
      if (pot) u(k) = row[3];
      if (jerk)
        for (int c = 0; c < 3; ++c) j(k, c) = row[(pot ? 4 : 3) + c];
    }
    Kokkos::deep_copy(space, out.acc, a);
    if (pot) Kokkos::deep_copy(space, out.pot, u);
    if (jerk) Kokkos::deep_copy(space, out.jerk, j);
    space.fence();  // before the host copies go
  }

  DirectSolver<Space> solver_;
  const core::Comm& world_ = core::Comm::world();
  Kokkos::View<int*, Mem> all_;  // 0, 1, ..., n - 1: the targets "all particles" as a list
  Kokkos::View<double*[3], Mem> acc_, jerk_;
  Kokkos::View<double*, Mem> pot_;
};

}  // namespace hayate::gravity
