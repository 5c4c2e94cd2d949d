#pragma once
// The tree as a force solver: rebuild policy, safe first step, group boxes, packing in the
// force precision and the walk launch.
#include "gravity/force.hpp"
#include "gravity/tree.hpp"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::gravity {

// The tree's parameters. The first group are input keys (tree.*); the second are the defaults
// of code paths that tests keep as references (no input key: each alternative lost on the
// devices measured, docs/dev/decisions.md).
struct TreeParams {
  Mac mac = Mac::Acceleration;
  double dacc = 1.0 / 512;    // acceleration MAC tolerance
  double theta = 0.5;         // opening angle (theta MAC, and the first step)
  bool first_direct = false;  // first step by direct summation instead of the theta MAC
  int leaf_size = 32;
  int rebuild_every = 0;  // 0 = automatic
  bool quadrupole = true;

  int group_cell = 64;  // target groups stay inside cells of at most this many groups' worth
  bool reorder = true;  // keep the particles in the tree's order (permuted at each rebuild)
  Walk walk = Walk::Group;
  bool dear_first = true;  // group walk: launch the groups dearest first (order_groups_by_cost)
  WalkKernel kernel = WalkKernel::Auto;  // the group walk's team primitives
};

// The automatic rebuild rule (rebuild_every = 0). It keeps the cost of a rebuild cycle (one
// rebuild and the walks on that tree) per unit of work low: rebuild once the next walk,
// extrapolated from the last two, would cost more than the cycle's average so far. A stale
// tree's walk grows faster than linearly (docs/dev/gravity.md), so GOTHIC's rule (rebuild once the
// summed slow-down exceeds a rebuild) waits a step too long.
// Walks are compared like for like. Each walk has a kind (the integrator's label for its set of
// targets: every particle, or with block steps the coarsest level due), and the first walk of a
// kind on a tree is that kind's reference: later walks count as their cost over what the
// reference cost per target would have charged (their ratio), the unit of work is a target at
// its kind's reference cost. A block tick's cost per target depends on which levels are due
// (only the finest, central particles cost more per target than everyone), so walks judged per
// target by N-target batches read that make-up as growth or decline, and such a rule kept trees
// far too long in one run and rebuilt far too often in another. With one kind (shared steps)
// this is the per-target rule.
// Costs are counted, not timed: a walk costs the entries of its interaction lists (what the
// walk's time follows: it is bound by the interactions the MAC accepts), and a rebuild costs as
// many entries as the walks of the run's first tree sum in the time the run's first rebuild
// took. That one conversion is measured (calibrate(), on the first walk the rule counts, before
// any checkpoint can be written) and kept in checkpoints with the rest of the clock: from then
// on every decision follows from the trajectory alone, so a restart rebuilds at the same steps
// as the uninterrupted run and continues it bit for bit.
struct RebuildClock {
  static constexpr int kinds = 64;
  int walks = 0;       // walks on the current tree
  double seconds = 0;  // their summed cost (list entries)
  double fresh = 0;    // and what they would have cost at their kinds' reference rates
  double rebuild = 0;  // what a rebuild costs, in list entries (0 until calibrated)
  double growth = 0;   // the last measured growth of the ratio per walk, kept for the next tree
  double next = 1;     // the next walk's ratio, extrapolated
  double first_rebuild_seconds = 0;  // the timed first rebuild, until calibrated
  bool calibrated = false;
  std::vector<double> base = std::vector<double>(kinds, 0.0);   // reference cost per target
  std::vector<double> ratio = std::vector<double>(kinds, 1.0);  // last ratio of each kind
  std::vector<int> at = std::vector<int>(kinds, -1);  // its walk number on this tree, -1: none

  // A new tree; `seconds`: what its build took (used only until calibrated).
  void rebuilt(double build_seconds) {
    if (!calibrated) first_rebuild_seconds = build_seconds;
    walks = 0;
    seconds = 0;
    fresh = 0;
    next = 1 + growth;
    for (int k = 0; k < kinds; ++k) at[k] = -1;
  }
  // The rebuild's cost in entries, from a walk of `entries` list entries that took
  // `walk_seconds`, once.
  void calibrate(double entries, double walk_seconds) {
    if (calibrated || !(entries > 0) || !(walk_seconds > 0) || !(first_rebuild_seconds > 0)) return;
    rebuild = first_rebuild_seconds * entries / walk_seconds;
    calibrated = true;
  }
  void walked(double cost, double count, int kind) {
    kind = kind < 0 ? 0 : kind >= kinds ? kinds - 1 : kind;
    const double per_target = cost / (count > 0 ? count : 1.0);
    double r = 1;
    if (at[kind] < 0 || base[kind] <= 0) {
      base[kind] = per_target;
    } else {
      r = per_target / base[kind];
      growth = (r - ratio[kind]) / double(walks - at[kind]);
      next = r + (growth > 0 ? growth : 0.0);
    }
    ratio[kind] = r;
    at[kind] = walks;
    ++walks;
    seconds += cost;
    fresh += base[kind] * count;
  }
  bool due() const { return calibrated && walks > 0 && next * fresh >= rebuild + seconds; }
};

// A target group's bounding box, smallest |a_old|^2 and whether it holds a target; "+=" merges
// two partial results (min, max, min, or), for Kokkos' sum reduction over this type.
struct GroupSpread {
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  double a2_min = 1e300;
  int active = 0;
  KOKKOS_INLINE_FUNCTION GroupSpread& operator+=(const GroupSpread& o) {
    for (int d = 0; d < 3; ++d) {
      lo[d] = o.lo[d] < lo[d] ? o.lo[d] : lo[d];
      hi[d] = o.hi[d] > hi[d] ? o.hi[d] : hi[d];
    }
    a2_min = o.a2_min < a2_min ? o.a2_min : a2_min;
    active |= o.active;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile GroupSpread& o) volatile {
    for (int d = 0; d < 3; ++d) {
      lo[d] = o.lo[d] < lo[d] ? o.lo[d] : lo[d];
      hi[d] = o.hi[d] > hi[d] ? o.hi[d] : hi[d];
    }
    a2_min = o.a2_min < a2_min ? o.a2_min : a2_min;
    active |= o.active;
  }
};

}  // namespace hayate::gravity

namespace Kokkos {
template <>
struct reduction_identity<hayate::gravity::GroupSpread> {
  KOKKOS_FORCEINLINE_FUNCTION static hayate::gravity::GroupSpread sum() {
    return hayate::gravity::GroupSpread();
  }
};
}  // namespace Kokkos

namespace hayate::gravity {

// Checks the tree solver's entries of a checkpoint for n particles (host only): the tree
// (check_tree_checkpoint) and the rebuild clock, every count in its range. Throws InputError.
inline void check_tree_solver_checkpoint(const core::CheckpointReader& cp, int n,
                                         const TreeParams& params) {
  check_tree_checkpoint(cp, n, params.leaf_size);
  const std::int32_t interval = params.rebuild_every > 0 ? params.rebuild_every : 1 << 30;
  cp.get<std::int32_t>("tree_since_build", 0, interval);
  cp.get<bool>("tree_have_old_acc");
  cp.get<bool>("tree_clock_calibrated");
  for (const char* name : {"tree_clock_rebuild", "tree_clock_first_rebuild", "tree_clock_seconds",
                           "tree_clock_fresh", "tree_clock_growth", "tree_clock_next"})
    cp.get<double>(name);
  const auto walks = cp.get<std::int32_t>("tree_clock_walks", 0, 1 << 30);
  cp.get_vector<double>("tree_clock_base", RebuildClock::kinds);
  cp.get_vector<double>("tree_clock_ratio", RebuildClock::kinds);
  cp.get_vector<int>("tree_clock_at", RebuildClock::kinds, -1, walks);
  cp.get<std::int32_t>("tree_walk_kind", 0, RebuildClock::kinds - 1);
}

template <class Space>
class TreeForce final : public ForceSolver<Space> {
 public:
  using Mem = typename Space::memory_space;
  static constexpr int team_size = TreeDefaults<Space>::team_size;
  static constexpr int tpt = TreeDefaults<Space>::targets_per_thread;
  static constexpr int group_size = team_size * tpt;
  // Automatic rebuilds happen at least this often, whatever the timings say.
  static constexpr int max_interval = 64;

  // Every kernel of the solver runs on `space` (the direct solver of the first step on its own).
  TreeForce(const Space& space, Precision precision, TreeParams params, double G, double eps,
            DirectSolver<Space> direct)
      : space_(space),
        precision_(precision),
        params_(params),
        G_(G),
        eps_(eps),
        direct_(std::move(direct)),
        tree_(space) {
    tree_.leaf_size = params.leaf_size;
  }

  const Tree<Space>& tree() const { return tree_; }
  int rebuilds() const { return rebuilds_; }
  // The target groups of the last walk: group g is sorted positions
  // [group_begin(g), group_begin(g + 1)).
  int n_groups() const { return n_groups_; }
  // The group walk's launch order (team t walks group launch_order()(t)) once costs are known,
  // and the costs: entries of each group's last integration walk at its first member's position.
  bool has_launch_order() const { return launch_order_valid_; }
  const Kokkos::View<int*, Mem>& launch_order() const { return launch_order_; }
  const Kokkos::View<int*, Mem>& group_cost() const { return group_cost_; }
  const Kokkos::View<int*, Mem>& group_begin() const { return group_begin_; }
  // |a_old|^2 at each sorted position, as the next walk's group boxes read it.
  const Kokkos::View<double*, Mem>& a2_sorted() const { return a2_sorted_; }

  void accelerations(const Particles<Space>& p, const Targets<Space>& targets, bool with_potential,
                     const ForceOutput<Space>& out, core::Timers& timers,
                     bool diagnostic) override {
    if (!diagnostic && !have_old_acc_ && params_.first_direct) {
      // Safe first step: exact accelerations, which the next step's MAC then uses.
      auto scope = timers.scope("direct");
      direct_.compute(p.x, p.m, p.n, targets, with_potential, out);
      have_old_acc_ = targets.index.extent(0) == 0;
      a2_valid_ = false;
      return;
    }
    if (!tree_.built() || (!diagnostic && rebuild_due())) rebuild(p, timers, nullptr);
    // Diagnostic evaluations (thermo potential, force-error samples) are timed apart, so
    // tree_moments and tree_walk are what the time steps cost.
    {
      auto scope = timers.scope(diagnostic ? "tree_moments_diagnostic" : "tree_moments");
      tree_.moments(p.x, p.m, params_.quadrupole);
    }
    const bool theta = params_.mac == Mac::Theta || !have_old_acc_;
    const auto start = std::chrono::steady_clock::now();
    {
      auto scope = timers.scope(diagnostic ? "tree_walk_diagnostic" : "tree_walk");
      switch (precision_) {
        case Precision::Float:
          walk<float, float>(p, targets, with_potential, theta, out, diagnostic);
          break;
        case Precision::Double:
          walk<double, double>(p, targets, with_potential, theta, out, diagnostic);
          break;
        case Precision::Mixed:
          walk<float, double>(p, targets, with_potential, theta, out, diagnostic);
          break;
      }
    }
    if (diagnostic) return;
    // A first-step theta walk (no old accelerations yet) costs a different amount from the
    // acceleration-MAC walks after it and is left out of the rebuild rule.
    if (theta == (params_.mac == Mac::Theta)) {
      const double entries = double(walk_entries_);
      if (!clock_.calibrated)
        clock_.calibrate(
            entries,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      clock_.walked(entries, targets.count, walk_kind_);
    }
    ++since_build_;
    if (targets.index.extent(0) == 0) have_old_acc_ = true;
  }

  // Rebuilds when due, before the integrator picks its targets, and with params_.reorder
  // permutes the particles into the new tree's sorted order. Every later gather through the
  // tree's order is then a copy: a gather through a random permutation reads a 32-byte sector
  // per 8-byte value, and the walks', boxes' and kicks' accesses of the due particles become
  // contiguous runs. The next rebuild's order is nearly the identity, so the permutation itself
  // reads nearly in order.
  void prepare(Particles<Space>& p, core::Timers& timers, const int walk_kind) override {
    walk_kind_ = walk_kind;
    if (tree_.built() && !rebuild_due()) return;
    rebuild(p, timers, params_.reorder ? &p : nullptr);
  }

  void save(core::CheckpointWriter& cp) const override {
    tree_.save(cp);
    cp.put<std::int32_t>("tree_since_build", since_build_);
    cp.put<bool>("tree_have_old_acc", have_old_acc_);
    cp.put<bool>("tree_clock_calibrated", clock_.calibrated);
    cp.put<double>("tree_clock_rebuild", clock_.rebuild);
    cp.put<double>("tree_clock_first_rebuild", clock_.first_rebuild_seconds);
    cp.put<std::int32_t>("tree_clock_walks", clock_.walks);
    cp.put<double>("tree_clock_seconds", clock_.seconds);
    cp.put<double>("tree_clock_fresh", clock_.fresh);
    cp.put<double>("tree_clock_growth", clock_.growth);
    cp.put<double>("tree_clock_next", clock_.next);
    cp.put_vector("tree_clock_base", clock_.base);
    cp.put_vector("tree_clock_ratio", clock_.ratio);
    cp.put_vector("tree_clock_at", clock_.at);
    cp.put<std::int32_t>("tree_walk_kind", walk_kind_);
  }

  // The solver's state of a checkpoint that check_tree_solver_checkpoint accepted.
  void restore(const core::CheckpointReader& cp, int n) override {
    check_tree_solver_checkpoint(cp, n, params_);
    tree_.restore(cp, n);
    groups_valid_ = false;
    a2_valid_ = false;
    since_build_ = cp.get<std::int32_t>("tree_since_build");
    have_old_acc_ = cp.get<bool>("tree_have_old_acc");
    clock_.calibrated = cp.get<bool>("tree_clock_calibrated");
    clock_.rebuild = cp.get<double>("tree_clock_rebuild");
    clock_.first_rebuild_seconds = cp.get<double>("tree_clock_first_rebuild");
    clock_.walks = cp.get<std::int32_t>("tree_clock_walks");
    clock_.seconds = cp.get<double>("tree_clock_seconds");
    clock_.fresh = cp.get<double>("tree_clock_fresh");
    clock_.growth = cp.get<double>("tree_clock_growth");
    clock_.next = cp.get<double>("tree_clock_next");
    clock_.base = cp.get_vector<double>("tree_clock_base", RebuildClock::kinds);
    clock_.ratio = cp.get_vector<double>("tree_clock_ratio", RebuildClock::kinds);
    clock_.at = cp.get_vector<int>("tree_clock_at", RebuildClock::kinds, -1, clock_.walks);
    walk_kind_ = cp.get<std::int32_t>("tree_walk_kind", 0, RebuildClock::kinds - 1);
  }

  // Public for nvcc (device lambdas). The walks' target groups: runs of group_size consecutive
  // sorted particles, cut where the run crosses a boundary between two children of a cell of
  // more than group_cell x group_size particles. A group therefore lies inside one cell of at
  // most that many particles (or one oversized leaf). Uncut runs can straddle a boundary high
  // in the tree: such a group's box spans a large part of the system, its walk opens nearly
  // every node, and a few of those groups keep a GPU busy for most of a walk. group_cell = 0
  // never cuts.
  void form_groups(const int n);

  // Public for nvcc (device lambda). The list entries of the integration walk just launched: the
  // sum of the active groups' costs, which that walk stored at their first members' positions
  // (an inactive group's is older). Summed here, not by an atomic in the walk: one more pointer
  // in the walk functor cost its fp32 kernels an occupancy step in registers.
  template <class T>
  unsigned long long walked_entries();

  // The policy of the kernels that take one group per thread, its members over vector lanes,
  // and the group a thread takes.
  using GroupMember = typename Kokkos::TeamPolicy<Space>::member_type;
  Kokkos::TeamPolicy<Space> per_group_policy(const int n_groups) const {
    constexpr int lanes = TreeDefaults<Space>::reduce_lanes;
    constexpr int per_team = TreeDefaults<Space>::reduce_per_team;
    return Kokkos::TeamPolicy<Space>(space_, (n_groups + per_team - 1) / per_team, per_team, lanes);
  }
  KOKKOS_INLINE_FUNCTION static int group_of(const GroupMember& team) {
    return team.league_rank() * team.team_size() + team.team_rank();
  }

  // Public for nvcc (device lambdas). The next walks launch the groups dearest first, by the
  // entries each summed in its last integration walk (copied to every member's position), in
  // power-of-two classes that keep the tree order within a class (nearby groups, which read the
  // same nodes and particles, still run side by side). In tree order the galaxy's dearest groups
  // came last in a walk, and its ticks ended with them running on a part of the GPU.
  void order_groups_by_cost();

  // Public for nvcc (device lambdas). Before the groups are formed anew: every member's
  // position gets its group's cost (the walks store it at the first member only), so that
  // the new groups find a cost at whichever position they start (done after every walk, this
  // would write all N positions per tick).
  void spread_costs(const int n);

  // Public for nvcc (device lambdas): group bounding boxes, smallest |a_old|, target flags,
  // and the walk's sorted particles in the force precision, written where the boxes read the
  // positions (the groups cover every particle, so a kernel of its own would read them again).
  // Everything is read in sorted order: positions from the moments' gather, |a_old|^2 from
  // a2_sorted_ (the walks store it there; gathered through `order` only after a rebuild, a
  // restart or a direct first step): gathering x and a through `order` in a thread per group
  // reads a sector per value.
  template <class T>
  void prepare_groups(const Particles<Space>& p, const Targets<Space>& targets);

  // Node data in the force precision (the particles are packed by prepare_groups): for the
  // particle walk nodes and their test terms in depth-first order, for the group walk
  // GroupNode records (with child links) in breadth-first order.
  template <class T>
  void pack(const bool theta);

  // The targets' map from particle to output row: the caller's (Targets::row) when it covers
  // every particle, else slot_ (set by prepare_groups, reset by clear_slots).
  static bool given_rows(const Targets<Space>& targets, const int n) {
    return targets.index.extent(0) != 0 && std::int64_t(targets.row.extent(0)) >= n;
  }
  Kokkos::View<const int*, Mem> slot_map(const Targets<Space>& targets, const int n) const {
    if (given_rows(targets, n)) return targets.row;
    return slot_;
  }

  // Public for nvcc (device lambdas): resets the rows prepare_groups set in slot_.
  void clear_slots(const Targets<Space>& targets, const int n);

 private:
  // A new tree from the current positions; `reorder`: also permute those particles into its
  // order (timed with the rebuild, so the automatic rule weighs it too).
  void rebuild(const Particles<Space>& p, core::Timers& timers, Particles<Space>* reorder) {
    // The automatic rule weighs walks against the last rebuild's cost, and a run's first
    // build also pays one-off costs (first kernel launches, allocations, the permutation of
    // the initial conditions' random order), several times a later rebuild's, which kept the
    // first tree far too long. So the first build is done twice and the second one timed; it
    // yields the same tree.
    if (!tree_.built() && params_.rebuild_every == 0) build_and_reorder(p, timers, reorder);
    const auto start = std::chrono::steady_clock::now();
    build_and_reorder(p, timers, reorder);
    a2_valid_ = false;  // a new order
    space_.fence();
    clock_.rebuilt(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    since_build_ = 0;
    groups_valid_ = false;
    ++rebuilds_;
  }

  void build_and_reorder(const Particles<Space>& p, core::Timers& timers,
                         Particles<Space>* reorder) {
    tree_.build(p.x, p.n, timers);
    if (reorder != nullptr) {
      auto scope = timers.scope("tree_reorder");
      permute_particles(space_, *reorder, spare_, tree_.order());
      tree_.reset_order();
    }
  }

  bool rebuild_due() const {
    if (params_.rebuild_every > 0) return since_build_ >= params_.rebuild_every;
    return since_build_ >= max_interval || clock_.due();
  }

  template <class T, class Acc>
  void walk(const Particles<Space>& p, const Targets<Space>& targets, bool with_potential,
            bool theta, const ForceOutput<Space>& out, bool diagnostic) {
    prepare_groups<T>(p, targets);
    // Also when the launch throws (a stack overflow), so slot_ stays -1 between walks.
    struct Clear {
      TreeForce* self;
      const Targets<Space>& targets;
      int n;
      ~Clear() { self->clear_slots(targets, n); }
    } clear{this, targets, p.n};
    pack<T>(theta);
    if (with_potential) {
      if (theta)
        launch<T, Acc, true, Mac::Theta>(p, targets, out, diagnostic);
      else
        launch<T, Acc, true, Mac::Acceleration>(p, targets, out, diagnostic);
    } else {
      if (theta)
        launch<T, Acc, false, Mac::Theta>(p, targets, out, diagnostic);
      else
        launch<T, Acc, false, Mac::Acceleration>(p, targets, out, diagnostic);
    }
  }

  template <class T, class Acc, bool WithPotential, Mac M>
  void launch(const Particles<Space>& p, const Targets<Space>& targets,
              const ForceOutput<Space>& out, bool diagnostic) {
    WalkData<Space, T> d;
    d.bodies = body_view<T>();
    d.nodes = node_view<T>();
    d.geom = geom_view<T>();
    d.quad = quad_view<T>();
    d.quadrupole = params_.quadrupole;
    d.groups = group_view<T>();
    d.order = tree_.order();
    d.slot = slot_map(targets, p.n).data();
    d.all_targets = targets.index.extent(0) == 0;
    d.out = out;
    d.n = p.n;
    d.n_nodes = tree_.n_nodes();
    d.group_begin = group_begin_;
    // An integration walk's accelerations are the next walk's a_old (diagnostic ones are not).
    if (!diagnostic) d.a2_sorted = a2_sorted_.data();
    d.eps2 = T(eps_) * T(eps_);
    d.parameter = M == Mac::Acceleration ? T(params_.dacc) : T(params_.theta * params_.theta);
    d.G_out = G_;
    const int n_groups = n_groups_;
    const char* label =
        WithPotential ? "hayate::gravity::tree_walk_potential" : "hayate::gravity::tree_walk";
    if (params_.walk == Walk::Particle) {
      ParticleWalkKernel<Space, T, Acc, tpt, WithPotential, M> k;
      k.d = d;
      k.skip = tree_.skip();
      k.begin = tree_.begin();
      k.end = tree_.end();
      Kokkos::parallel_for(label, Kokkos::TeamPolicy<Space>(space_, n_groups, team_size), k);
      // The particle walk (a reference) counts no entries: automatic rebuilds then follow the
      // max_interval only.
      if (!diagnostic) walk_entries_ = 0;
      return;
    }
    d.launch_order = launch_order_valid_ ? launch_order_.data() : nullptr;
    // Integration walks record each group's cost: the rebuild rule's and the launch order's.
    if (!diagnostic) d.group_cost = group_cost_.data();
    if (params_.kernel == WalkKernel::Portable)
      launch_group<T, Acc, WithPotential, M, PortableWalkTeam>(d, label);
    else
      launch_group<T, Acc, WithPotential, M, WalkTeam<Space>>(d, label);
    if (diagnostic) return;
    walk_entries_ = walked_entries<T>();
    if (params_.dear_first) order_groups_by_cost();
  }

  template <class T, class Acc, bool WithPotential, Mac M, class Team>
  void launch_group(const WalkData<Space, T>& d, const char* label) {
    if (params_.quadrupole)
      launch_group_kernel<T, GroupWalkKernel<Space, T, Acc, tpt, WithPotential, M, true, Team>>(
          d, label);
    else
      launch_group_kernel<T, GroupWalkKernel<Space, T, Acc, tpt, WithPotential, M, false, Team>>(
          d, label);
  }

  template <class T, class Kernel>
  void launch_group_kernel(const WalkData<Space, T>& d, const char* label) {
    const int n_groups = n_groups_;
    static_assert(team_size <= 128, "the walk's scan packs per-team counts in 8-bit fields");
    Kernel k;
    k.d = d;
    k.tree_nodes = group_node_view<T>().data();
    if (overflow_.data() == nullptr)
      overflow_ = Kokkos::View<int, Mem>("hayate::gravity::tree_overflow");
    k.overflow = overflow_.data();
    static_assert(Kernel::kTeam == team_size, "the walk kernel's slots assume this team size");
    k.shape.ts = team_size;
    k.shape.levels = tree_.levels();
    Kokkos::TeamPolicy<Space> policy(space_, n_groups, team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch0(k.shape)));
    if constexpr (Kernel::Team::scratch_stack)
      policy.set_scratch_size(1, Kokkos::PerTeam(Kernel::scratch1(k.shape)));
    else
      k.stacks = walk_stacks_.get(space_, k.shape.stack());
    Kokkos::parallel_for(label, policy, k);
    int overflowed = 0;
    Kokkos::deep_copy(space_, overflowed, overflow_);
    space_.fence();
    if (overflowed)
      throw std::runtime_error("tree walk: traversal stack overflow (a tree deeper than " +
                               std::to_string(tree_.levels()) + " levels?)");
  }

  template <class T>
  Kokkos::View<Body<T>*, Mem>& body_view() {
    if constexpr (std::is_same<T, float>::value)
      return bodies_f_;
    else
      return bodies_d_;
  }
  template <class T>
  Kokkos::View<Body<T>*, Mem>& node_view() {
    if constexpr (std::is_same<T, float>::value)
      return nodes_f_;
    else
      return nodes_d_;
  }
  template <class T>
  Kokkos::View<NodeGeom<T>*, Mem>& geom_view() {
    if constexpr (std::is_same<T, float>::value)
      return geom_f_;
    else
      return geom_d_;
  }
  template <class T>
  Kokkos::View<GroupNode<T>*, Mem>& group_node_view() {
    if constexpr (std::is_same<T, float>::value)
      return group_nodes_f_;
    else
      return group_nodes_d_;
  }
  template <class T>
  Kokkos::View<Quadrupole<T>*, Mem>& quad_view() {
    if constexpr (std::is_same<T, float>::value)
      return quads_f_;
    else
      return quads_d_;
  }
  template <class T>
  Kokkos::View<GroupBox<T>*, Mem>& group_view() {
    if constexpr (std::is_same<T, float>::value)
      return groups_f_;
    else
      return groups_d_;
  }

  Space space_;
  Precision precision_;
  TreeParams params_;
  double G_, eps_;
  DirectSolver<Space> direct_;
  Tree<Space> tree_;
  Particles<Space> spare_;  // the other copy of the particles, for reordering
  bool have_old_acc_ = false;
  int since_build_ = 0, rebuilds_ = 0;
  RebuildClock clock_;
  int walk_kind_ = 0;  // of the coming integration walk (prepare)
  Kokkos::View<int*, Mem> slot_;
  Kokkos::View<double*, Mem> a2_sorted_;  // |a_old|^2 at each sorted position
  bool a2_valid_ = false;                 // a2_sorted_ matches p.acc and the current order
  Kokkos::View<int*, Mem> group_flag_, group_begin_;
  int n_groups_ = 0;
  bool groups_valid_ = false;
  // The group walk's launch order (order_groups_by_cost) and what it is made from: each
  // group's entries in its last integration walk, at its first member's sorted position.
  Kokkos::View<int*, Mem> group_cost_, launch_order_;
  Kokkos::View<std::uint64_t*, Mem> cost_key_;
  bool launch_order_valid_ = false;
  core::RadixSortBuffers<Space> sort_buffers_;
  Kokkos::View<int, Mem> overflow_;
  // The last integration walk's list entries (the rebuild rule's cost).
  unsigned long long walk_entries_ = 0;
  // The group walk's traversal stacks where its team primitives do not take level-1 scratch.
  typename WalkTeam<Space>::template Store<Space> walk_stacks_;
  Kokkos::View<Body<float>*, Mem> bodies_f_, nodes_f_;
  Kokkos::View<Body<double>*, Mem> bodies_d_, nodes_d_;
  Kokkos::View<NodeGeom<float>*, Mem> geom_f_;
  Kokkos::View<NodeGeom<double>*, Mem> geom_d_;
  Kokkos::View<GroupNode<float>*, Mem> group_nodes_f_;
  Kokkos::View<GroupNode<double>*, Mem> group_nodes_d_;
  Kokkos::View<Quadrupole<float>*, Mem> quads_f_;
  Kokkos::View<Quadrupole<double>*, Mem> quads_d_;
  Kokkos::View<GroupBox<float>*, Mem> groups_f_;
  Kokkos::View<GroupBox<double>*, Mem> groups_d_;
};

template <class Space>
void TreeForce<Space>::form_groups(const int n) {
  if (params_.dear_first) spread_costs(n);
  const int nn = tree_.n_nodes(), G = group_size;
  const std::int64_t limit = std::int64_t(params_.group_cell) * G;
  ensure_size(group_flag_, n, "hayate::gravity::tree_group_flag");
  ensure_size(group_begin_, n + 1, "hayate::gravity::tree_group_begin");
  const auto flag = group_flag_;
  const auto group_begin = group_begin_;
  const auto begin = tree_.begin(), end = tree_.end(), skip = tree_.skip();
  Kokkos::parallel_for(
      "hayate::gravity::tree_group_runs", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(const int k) { flag(k) = k % G == 0 ? 1 : 0; });
  if (limit > 0)
    Kokkos::parallel_for(
        "hayate::gravity::tree_group_cuts", Kokkos::RangePolicy<Space>(space_, 0, nn),
        KOKKOS_LAMBDA(const int s) {
          if (end(s) - begin(s) <= limit || skip(s) == s + 1) return;
          for (int ch = skip(s + 1); ch < skip(s); ch = skip(ch)) flag(begin(ch)) = 1;
        });
  int count = 0;
  Kokkos::parallel_scan(
      "hayate::gravity::tree_group_begin", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(const int k, int& offset, const bool final) {
        if (flag(k)) {
          if (final) group_begin(offset) = k;
          ++offset;
        }
      },
      count);
  Kokkos::deep_copy(space_, Kokkos::subview(group_begin_, count), n);
  n_groups_ = count;
  groups_valid_ = true;
  // New groups take the costs the last walks left at their first members' positions (every
  // member's position holds its group's cost, and the tree order of the particles changes
  // little between rebuilds). Reset, every group taken as equal and launched last, the
  // coarse levels' groups, which the ticks after a rebuild had not walked yet, ended
  // Plummer's full ticks on part of the GPU.
  if (std::int64_t(group_cost_.extent(0)) < n) {
    ensure_size(group_cost_, n, "hayate::gravity::tree_group_cost");
    Kokkos::deep_copy(space_, group_cost_, 0);
  }
  if (params_.dear_first) order_groups_by_cost();
}

template <class Space>
template <class T>
unsigned long long TreeForce<Space>::walked_entries() {
  const auto groups = group_view<T>();
  const auto group_begin = group_begin_;
  const auto cost = group_cost_;
  unsigned long long sum = 0;
  Kokkos::parallel_reduce(
      "hayate::gravity::tree_walk_entries", Kokkos::RangePolicy<Space>(space_, 0, n_groups_),
      KOKKOS_LAMBDA(const int g, unsigned long long& total) {
        if (groups(g).active) total += static_cast<unsigned long long>(cost(group_begin(g)));
      },
      sum);
  return sum;
}

template <class Space>
void TreeForce<Space>::order_groups_by_cost() {
  const int ng = n_groups_;
  ensure_capacity(launch_order_, ng, "hayate::gravity::tree_launch_order");
  ensure_capacity(cost_key_, ng, "hayate::gravity::tree_launch_keys");
  const auto order = launch_order_;
  const auto key = cost_key_;
  const auto cost = group_cost_;
  const auto group_begin = group_begin_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_launch_keys", Kokkos::RangePolicy<Space>(space_, 0, ng),
      KOKKOS_LAMBDA(const int g) {
        // cls = floor(log2 c) (0 for c <= 1) in five halvings, not a loop over the bits.
        unsigned c = unsigned(cost(group_begin(g)));
        int cls = 0;
        for (int s = 16; s > 0; s >>= 1)
          if (c >> s) {
            c >>= s;
            cls += s;
          }
        key(g) = std::uint64_t(31 - cls);
        order(g) = g;
      });
  core::sort_pairs(space_, key, order, ng, 5, sort_buffers_);
  launch_order_valid_ = true;
}

template <class Space>
void TreeForce<Space>::spread_costs(const int n) {
  const int ng = n_groups_;
  if (ng == 0 || std::int64_t(group_cost_.extent(0)) < n ||
      std::int64_t(group_begin_.extent(0)) < std::int64_t(ng) + 1)
    return;
  const auto cost = group_cost_;
  const auto group_begin = group_begin_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_spread_costs", per_group_policy(ng),
      KOKKOS_LAMBDA(const GroupMember& team) {
        const int g = group_of(team);
        if (g >= ng) return;
        const int gb = group_begin(g), ge = group_begin(g + 1);
        const int c = cost(gb);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, gb + 1, ge),
                             [&](const int k) { cost(k) = c; });
      });
}

template <class Space>
template <class T>
void TreeForce<Space>::prepare_groups(const Particles<Space>& p, const Targets<Space>& targets) {
  const int n = p.n;
  auto& bodies = body_view<T>();
  ensure_size(bodies, n, "hayate::gravity::tree_bodies");
  const auto b = bodies;
  const auto sm = tree_.sorted_m();
  if (!groups_valid_) form_groups(n);
  const int n_groups = n_groups_;
  auto& groups = group_view<T>();
  ensure_capacity(groups, n_groups, "hayate::gravity::tree_groups");
  const bool all = targets.index.extent(0) == 0;
  if (!all && !given_rows(targets, n)) {
    // -1 everywhere between walks: filled once, and after each walk only the targets' rows
    // are reset (clear_slots), instead of filling all N rows per walk.
    if (std::int64_t(slot_.extent(0)) < n) {
      ensure_size(slot_, n, "hayate::gravity::tree_slot");
      Kokkos::deep_copy(space_, slot_, -1);
    }
    const auto slot = slot_;
    const auto index = targets.index;
    Kokkos::parallel_for(
        "hayate::gravity::tree_slots", Kokkos::RangePolicy<Space>(space_, 0, targets.count),
        KOKKOS_LAMBDA(const int k) { slot(index(k)) = k; });
  }
  const auto order = tree_.order();
  ensure_size(a2_sorted_, n, "hayate::gravity::tree_a2_sorted");
  const auto a2 = a2_sorted_;
  if (!a2_valid_) {
    const auto a = p.acc;
    Kokkos::parallel_for(
        "hayate::gravity::tree_gather_a2", Kokkos::RangePolicy<Space>(space_, 0, n),
        KOKKOS_LAMBDA(const int k) {
          const int i = order(k);
          a2(k) = norm2_exact(a(i, 0), a(i, 1), a(i, 2));
        });
    a2_valid_ = true;
  }
  const auto g = groups;
  const auto sorted = tree_.sorted_x();
  const auto slot = slot_map(targets, n);
  const auto group_begin = group_begin_;
  // Particles in tree order: `order` is not read (4 of the ~64 bytes a particle costs here).
  const bool identity = tree_.order_is_identity();
  Kokkos::parallel_for(
      "hayate::gravity::tree_group_boxes", per_group_policy(n_groups),
      KOKKOS_LAMBDA(const GroupMember& team) {
        const int grp = group_of(team);
        if (grp >= n_groups) return;
        const int kb = group_begin(grp), members = group_begin(grp + 1) - kb;
        GroupSpread s;
        // A lane takes members lane, lane + lanes, ... and loads kAhead of them before it
        // uses any: member by member, each took a round trip to memory in turn.
        constexpr int lanes = TreeDefaults<Space>::reduce_lanes, kAhead = 4;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int lane, GroupSpread& t) {
              for (int j0 = lane; j0 < members; j0 += kAhead * lanes) {
                double x[kAhead][3], mass[kAhead], a2k[kAhead];
                bool in[kAhead], act[kAhead];
                for (int q = 0; q < kAhead; ++q) {
                  const int k = kb + j0 + q * lanes;
                  in[q] = j0 + q * lanes < members;
                  act[q] = false;
                  if (!in[q]) continue;
                  for (int c = 0; c < 3; ++c) x[q][c] = sorted(k, c);
                  mass[q] = sm(k);
                  a2k[q] = a2(k);
                  act[q] = all || slot(identity ? k : order(k)) >= 0;
                }
                for (int q = 0; q < kAhead; ++q) {
                  if (!in[q]) continue;
                  const int k = kb + j0 + q * lanes;
                  b(k) = Body<T>{T(x[q][0]), T(x[q][1]), T(x[q][2]), T(mass[q])};
                  for (int c = 0; c < 3; ++c) {
                    t.lo[c] = x[q][c] < t.lo[c] ? x[q][c] : t.lo[c];
                    t.hi[c] = x[q][c] > t.hi[c] ? x[q][c] : t.hi[c];
                  }
                  t.a2_min = a2k[q] < t.a2_min ? a2k[q] : t.a2_min;
                  if (act[q]) t.active = 1;
                }
              }
            },
            s);
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          GroupBox<T> box;
          // Rounded outwards so the float box still contains every member.
          box.cx = T(0.5 * (s.lo[0] + s.hi[0]));
          box.cy = T(0.5 * (s.lo[1] + s.hi[1]));
          box.cz = T(0.5 * (s.lo[2] + s.hi[2]));
          box.hx = T(0.5 * (s.hi[0] - s.lo[0]) * (1 + 1e-6));
          box.hy = T(0.5 * (s.hi[1] - s.lo[1]) * (1 + 1e-6));
          box.hz = T(0.5 * (s.hi[2] - s.lo[2]) * (1 + 1e-6));
          box.a_min = T(compat::sqrt(s.a2_min));
          box.active = s.active;
          g(grp) = box;
        });
      });
}

template <class Space>
template <class T>
void TreeForce<Space>::pack(const bool theta) {
  auto& nodes = node_view<T>();
  auto& geom = geom_view<T>();
  auto& group_nodes = group_node_view<T>();
  auto& quads = quad_view<T>();
  const int nn = tree_.n_nodes();
  const bool bfs = params_.walk == Walk::Group;
  if (params_.quadrupole) ensure_capacity(quads, nn, "hayate::gravity::tree_node_quad");
  if (bfs) {
    ensure_capacity(group_nodes, nn, "hayate::gravity::tree_group_nodes");
  } else {
    ensure_capacity(nodes, nn, "hayate::gravity::tree_node_bodies");
    ensure_capacity(geom, nn, "hayate::gravity::tree_node_geom");
  }
  const auto nb = nodes;
  const auto ng = geom;
  const auto gn = group_nodes;
  const auto nq = quads;
  const auto quad = tree_.quad();
  const bool quadrupole = params_.quadrupole;
  const double G = G_;
  const auto mono = tree_.mono();
  const auto size = tree_.size();
  const auto dfs_of = tree_.dfs_of();
  const auto bfs_of = tree_.bfs_of();
  const auto child_first = tree_.child_first();
  const auto child_count = tree_.child_count();
  const auto begin = tree_.begin();
  const auto end = tree_.end();
  Kokkos::parallel_for(
      "hayate::gravity::tree_pack_nodes", Kokkos::RangePolicy<Space>(space_, 0, nn),
      KOKKOS_LAMBDA(const int k) {
        const int s = bfs ? k : bfs_of(k);  // the moments are stored breadth-first
        const Body<T> c{T(mono(s, 0)), T(mono(s, 1)), T(mono(s, 2)), T(mono(s, 3))};
        const NodeGeom<T> g =
            theta ? node_criterion<Mac::Theta, T>(size(s, 0), size(s, 1), mono(s, 3), G)
                  : node_criterion<Mac::Acceleration, T>(size(s, 0), size(s, 1), mono(s, 3), G);
        if (quadrupole)
          nq(k) = Quadrupole<T>{T(quad(s, 0)), T(quad(s, 1)), T(quad(s, 2)),
                                T(quad(s, 3)), T(quad(s, 4)), T(quad(s, 5))};
        if (bfs) {
          GroupNode<T> r;
          r.c = c;
          r.geom = g;
          const int d = dfs_of(k);
          r.link = child_count(k) > 0 ? WalkLink{child_first(k), child_count(k)}
                                      : WalkLink{begin(d), begin(d) - end(d)};
          gn(k) = r;
        } else {
          nb(k) = c;
          ng(k) = g;
        }
      });
}

template <class Space>
void TreeForce<Space>::clear_slots(const Targets<Space>& targets, const int n) {
  if (targets.index.extent(0) == 0 || given_rows(targets, n)) return;
  const auto slot = slot_;
  const auto index = targets.index;
  Kokkos::parallel_for(
      "hayate::gravity::tree_clear_slots", Kokkos::RangePolicy<Space>(space_, 0, targets.count),
      KOKKOS_LAMBDA(const int k) { slot(index(k)) = -1; });
}

// Compiled once, in gravity_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_TREE_SOLVER_KERNELS(EXTERN, S)                            \
  EXTERN template class TreeForce<S>;                                            \
  EXTERN template unsigned long long TreeForce<S>::walked_entries<float>();      \
  EXTERN template unsigned long long TreeForce<S>::walked_entries<double>();     \
  EXTERN template void TreeForce<S>::prepare_groups<float>(const Particles<S>&,  \
                                                           const Targets<S>&);   \
  EXTERN template void TreeForce<S>::prepare_groups<double>(const Particles<S>&, \
                                                            const Targets<S>&);  \
  EXTERN template void TreeForce<S>::pack<float>(bool);                          \
  EXTERN template void TreeForce<S>::pack<double>(bool);
#ifndef HAYATE_GRAVITY_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_TREE_SOLVER_KERNELS, extern)
#endif

}  // namespace hayate::gravity
