#pragma once
// Tree walks. Both share the group scheme: a group of consecutive sorted particles inside one
// tree cell (TreeForce::form_groups) is handled by one team, and every opening decision is taken
// for the whole group from its bounding box and its smallest |a_old| (group_accepts), so it is
// conservative for each member and the acceleration MAC's error bound holds for all of them.
//   particle: every thread runs the stackless depth-first walk (skip links) itself and applies
//             each accepted node or opened leaf to its targets at once. Simple, but the team
//             walks node after node, each step waiting on the previous load.
//   group:    GOTHIC's scheme. The team pops families (an opened node's consecutive,
//             breadth-first numbered children) from a traversal stack and each thread tests one
//             child (on CPUs, one thread all 8); a team scan hands out slots, so accepted nodes
//             go to an interaction list, opened leaves to a particle-range list and opened nodes
//             push their children as one family. When a list fills it is flushed: every
//             thread sums the listed entries onto its own targets (monopoles are listed as
//             they were loaded for the test; particles and nodes with quadrupoles are staged in
//             scratch a tile at a time, one per thread).
// Both orders are fixed by the tree, so results are reproducible run to run on a backend.
// The group walk's team primitives (barrier, scan, traversal stack, the traversal itself) are a
// template argument: Kokkos' (PortableWalkTeam, below) or, on GPUs, a warp's own
// (cuda::WarpWalkTeam, backends/cuda/tree_walk.hpp).
#include "cuda/tree_walk.hpp"
#include "exec/exec_traits.hpp"
#include "gravity/direct.hpp"
#include "gravity/pair.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace hayate::gravity {

enum class Mac { Acceleration, Theta };
enum class Walk { Particle, Group };
// The group walk's team primitives: Auto = the space's own (WalkTeam below), Portable = Kokkos'
// on every space (the reference the GPU's warp primitives are tested against).
enum class WalkKernel { Auto, Portable };

// What the opening test needs of a node besides its centre of mass and mass, worked out when
// the nodes are packed for a walk (TreeForce::pack), so a test is a few multiplies: b2 = b_J^2
// (rounded up) and crit = G m_J b_eff^2 for the acceleration MAC or side^2 for theta (see
// group_accepts). 8- or 16-byte aligned so that a node test loads it in one instruction.
template <class T>
struct alignas(2 * sizeof(T)) NodeGeom {
  T b2;
  T crit;
};

template <class T>
struct GroupBox {
  T cx, cy, cz, hx, hy, hz;  // bounding box centre and half sizes
  T a_min;                   // smallest |a_old| in the group
  int active;                // the group holds a target
};

// Breadth-first node link: children first .. first + count - 1 (count > 0), or a leaf's sorted
// particles first .. first - count - 1 (count < 0).
struct alignas(8) WalkLink {
  int first, count;
};

// A node as the group walk reads it: centre of mass and mass, the opening test's terms and the
// child link side by side in one 32-byte (float) record, so a node test issues its loads at
// once, from one sector. Kept in three arrays, the link and the test's second term were loaded
// only after the first term's test, a second round trip to L2 per traversal round.
template <class T>
struct alignas(4 * sizeof(T)) GroupNode {
  Body<T> c;
  NodeGeom<T> geom;
  WalkLink link;
};

// A node staged for a flush: one record, so a thread reads it from scratch in three 16-byte
// (float) words instead of a position and six separate quadrupole components.
template <class T>
struct alignas(4 * sizeof(T)) NodeRecord {
  Body<T> c;
  Quadrupole<T> q;
};

// Per-space group shape, from the space's traits: a team of one vector-width of threads (a warp)
// per group on GPUs, one thread with 16 targets on CPUs. The per-node and per-group reductions
// (moments, group boxes) give each node or group the vector lanes of one thread: on GPUs 8 lanes
// read a group's members side by side (4 groups per warp, 16 per team; with 32 lanes the
// shuffles of the 13-double reduction cost more than they saved), and the moments 4 lanes a node
// (a level's nodes hold ~8-20 members, so 8 lanes left half of them idle in the second round of
// loads); a plain loop on CPUs.
template <class Space>
struct TreeDefaults {
  static constexpr bool gpu = core::ExecTraits<Space>::is_gpu;
  static constexpr int team_size = gpu ? core::ExecTraits<Space>::vector_length : 1;
  static constexpr int targets_per_thread = gpu ? 1 : 16;
  static constexpr int reduce_lanes = gpu ? 8 : 1;
  static constexpr int reduce_per_team = gpu ? 16 : 1;
  static constexpr int moment_lanes = gpu ? 4 : 1;
  static constexpr int moment_per_team = gpu ? 32 : 1;
};

// |a|^2 with explicit fused multiply-adds, so the walk that stores an acceleration and a later
// gather from the stored values give the same bits whatever the compiler contracts.
KOKKOS_INLINE_FUNCTION double norm2_exact(const double ax, const double ay, const double az) {
  return compat::fma(az, az, compat::fma(ay, ay, ax * ax));
}

// The opening criterion, seen from a group: d = distance from the node's centre of mass to the
// group's box. Accepted when d > b_J and, for the acceleration MAC,
// G m_J b_eff^2 <= dacc a_min d^4 (parameter = dacc), or for theta, side^2 < theta^2 d^2
// (parameter = theta^2); the left-hand sides come precomputed in ng.crit.
// b_eff = b_J g with g = max(1, b_J / (sqrt(3)/2 side)) (node_criterion) penalises nodes whose
// particles have spread past their build-time cell (a stale tree): their children overlap and
// are nearly as large as they are, so opening one yields many nodes accepted close to the
// bound, whose errors add up to several times dacc. In a fresh tree g is 1 for nearly every
// node (docs/dev/gravity.md).
template <Mac M, class T>
KOKKOS_INLINE_FUNCTION bool group_accepts(const Body<T>& c, const NodeGeom<T>& ng,
                                          const GroupBox<T>& box, const T parameter) {
  const T ax = compat::fabs(c.x - box.cx) - box.hx;
  const T ay = compat::fabs(c.y - box.cy) - box.hy;
  const T az = compat::fabs(c.z - box.cz) - box.hz;
  const T dx = ax > T(0) ? ax : T(0), dy = ay > T(0) ? ay : T(0), dz = az > T(0) ? az : T(0);
  const T d2 = dx * dx + dy * dy + dz * dz;
  const bool far = d2 > ng.b2;
  if (M == Mac::Acceleration) return far && ng.crit <= parameter * box.a_min * d2 * d2;
  return far && ng.crit < parameter * d2;
}

// A node's NodeGeom from its b_J, cell side and mass, in double and then rounded outwards in
// T, so the test in T is never less safe than in double: the MAC's division and products
// then run once per node and walk, not once per node test (~12 instructions of each test).
template <Mac M, class T>
KOKKOS_INLINE_FUNCTION NodeGeom<T> node_criterion(const double b, const double side, const double m,
                                                  const double G) {
  const double margin = 1 + 4e-6;
  NodeGeom<T> ng;
  ng.b2 = T(b * b * margin);
  if (M == Mac::Acceleration) {
    const double cell = 0.8660254037844386 * side;
    const double b_eff = b > cell ? b * b / cell : b;
    ng.crit = T(G * m * b_eff * b_eff * margin);
  } else {
    ng.crit = T(side * side);
  }
  return ng;
}

// What both walks read: sorted particles, node data (depth-first numbering for the particle
// walk, breadth-first for the group walk, whose node records are GroupWalkKernel's own), group
// boxes and where the sums go.
template <class Space, class T>
struct WalkData {
  using Mem = typename Space::memory_space;
  Kokkos::View<const Body<T>*, Mem> bodies;      // sorted order
  Kokkos::View<const Body<T>*, Mem> nodes;       // particle walk: centre of mass, mass
  Kokkos::View<const NodeGeom<T>*, Mem> geom;    // particle walk
  Kokkos::View<const Quadrupole<T>*, Mem> quad;  // used when `quadrupole`
  bool quadrupole = true;
  Kokkos::View<const GroupBox<T>*, Mem> groups;
  Kokkos::View<const int*, Mem> order;  // sorted position -> particle
  // Raw pointers where a View's handle would push the walk functor past 512 bytes, above
  // which Kokkos passes it through constant memory.
  const int* slot = nullptr;  // particle -> output row, -1 = not a target (subset)
  // Group walk: team t walks group launch_order[t] (null: group t), and an integration walk
  // adds each group's list entries to group_cost[first member] (null: not recorded).
  const int* launch_order = nullptr;
  int* group_cost = nullptr;
  bool all_targets = true;
  ForceOutput<Space> out;
  Kokkos::View<const int*, Mem> group_begin;  // group g: sorted positions [begin(g), begin(g+1))
  // |a|^2 of each stored target at its sorted position (integration walks; null otherwise):
  // the next walk's smallest |a_old| per group then reads it in sorted order.
  double* a2_sorted = nullptr;
  int n = 0, n_nodes = 0;
  T eps2 = 0, parameter = 0;  // parameter: dacc (acceleration MAC) or theta^2
  double G_out = 1;

  // Loads the thread's targets (clamped to the group's last member) and zeroes their sums.
  template <int TPT, class Acc>
  KOKKOS_INLINE_FUNCTION void load_targets(const int gb, const int ge, const int rank, const int ts,
                                           Body<T>* ti, Acc (*v)[4]) const {
    for (int t = 0; t < TPT; ++t) {
      const int k = gb + rank + t * ts;
      ti[t] = bodies(k < ge ? k : ge - 1);
      for (int c = 0; c < 4; ++c) v[t][c] = Acc(0);
    }
  }

  template <int TPT, bool WithPotential, class Acc>
  KOKKOS_INLINE_FUNCTION void store_targets(const int gb, const int ge, const int rank,
                                            const int ts, Acc (*v)[4]) const {
    for (int t = 0; t < TPT; ++t) {
      const int k = gb + rank + t * ts;
      if (k >= ge) continue;
      const int i = order(k);
      const int s = all_targets ? i : slot[i];
      if (s < 0) continue;
      store_sums<Space, 4, WithPotential>(out, s, v[t], G_out);
      if (a2_sorted != nullptr)
        a2_sorted[k] = norm2_exact(out.acc(s, 0), out.acc(s, 1), out.acc(s, 2));
    }
  }
};

template <class Space, class T, class Acc, int TPT, bool WithPotential, Mac M>
struct ParticleWalkKernel {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Policy = MonopolePolicy<T, Acc>;
  WalkData<Space, T> d;
  Kokkos::View<const int*, typename Space::memory_space> skip, begin, end;  // depth-first

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int g = team.league_rank();
    const GroupBox<T> box = d.groups(g);
    if (!box.active) return;
    const int gb = d.group_begin(g), ge = d.group_begin(g + 1);
    const int ts = team.team_size(), rank = team.team_rank();
    Body<T> ti[TPT];
    Acc v[TPT][4];
    d.template load_targets<TPT>(gb, ge, rank, ts, ti, v);
    const T e2 = d.eps2;
    int node = 0;
    while (node < d.n_nodes) {
      const Body<T> c = d.nodes(node);
      const int next = skip(node);
      if (group_accepts<M>(c, d.geom(node), box, d.parameter)) {
        if (d.quadrupole) {
          const Quadrupole<T> q = d.quad(node);
          for (int t = 0; t < TPT; ++t)
            Policy::template interact_node<WithPotential>(ti[t], c, q, e2, v[t]);
        } else {
          for (int t = 0; t < TPT; ++t)
            Policy::template interact<WithPotential>(ti[t], c, e2, v[t]);
        }
        node = next;
      } else if (next == node + 1) {  // an opened leaf: its particles one by one
        for (int j = begin(node); j < end(node); ++j) {
          const Body<T> b = d.bodies(j);
          for (int t = 0; t < TPT; ++t)
            Policy::template interact<WithPotential>(ti[t], b, e2, v[t]);
        }
        node = next;
      } else {
        node = node + 1;  // first child in depth-first order
      }
    }
    d.template store_targets<TPT, WithPotential>(gb, ge, rank, ts, v);
  }
};

// Interaction-list sizes of the group walk, per team of `ts` threads.
struct GroupWalkShape {
  int ts = 1;
  int levels = 1;
  KOKKOS_INLINE_FUNCTION int node_list() const { return ts * 4 < 64 ? 64 : ts * 4; }
  KOKKOS_INLINE_FUNCTION int range_list() const { return ts * 2 < 32 ? 32 : ts * 2; }
  // Node tests per traversal round: a thread per test, and at least one family of children.
  KOKKOS_INLINE_FUNCTION int slots() const { return ts < 8 ? 8 : ts; }
  // The stack holds families (WalkLink: an opened node's children). It is a pile of segments,
  // one pushed per round (a family per opened node, so at most slots()), and a segment's
  // shallowest family is deeper than that of the segment under it, so at most `levels`
  // segments are ever stacked. Overflow is still checked.
  KOKKOS_INLINE_FUNCTION int stack() const { return slots() * (levels + 2); }
};

// The group walk's team primitives in their portable form: Kokkos' team barrier and team scan,
// the traversal stack in level-1 team scratch, and GroupWalkKernel::traverse.
struct PortableWalkTeam {
  // The stack comes from level-1 scratch: nothing to allocate or hand to the kernel.
  static constexpr bool scratch_stack = true;
  struct Stacks {};
  template <class Space>
  struct Store {};

  template <class Member>
  KOKKOS_INLINE_FUNCTION static void sync(const Member& team) {
    team.team_barrier();
  }

  // Exclusive scan of `mine` over the team; `all` gets the team's total through `total` in
  // scratch. U: std::uint32_t or std::uint64_t.
  template <class U, class Member, class Total>
  KOKKOS_INLINE_FUNCTION static U scan(const Member& team, const U mine, U& all,
                                       const Total& total) {
    const U before = team.team_scan(mine);
    if (team.team_rank() == team.team_size() - 1) total(0) = std::uint64_t(before + mine);
    team.team_barrier();
    all = U(total(0));
    return before;
  }

  template <class Kernel, class Member, class Lists, class Box, class Link, class Total, class Body,
            class Acc>
  KOKKOS_INLINE_FUNCTION static void traverse(const Kernel& k, const Member& team, const Lists& l,
                                              const Box& box, Link* stack, const Total& total,
                                              const Body* ti, Acc (*v)[4], int& n_listed,
                                              int& n_ranges) {
    k.traverse(team, l, box, stack, total, ti, v, n_listed, n_ranges);
  }
};

// The team primitives the group walk takes on a space: a warp's own on GPUs, where a team is one
// warp; Kokkos' elsewhere. Both list the same entries in the same order, so the sums are the
// same bit for bit (test CudaWalkKernelMatchesPortableBitwise).
template <class Space>
using WalkTeam = std::conditional_t<core::ExecTraits<Space>::is_gpu, cuda::WarpWalkTeam<WalkLink>,
                                    PortableWalkTeam>;

// Quad: nodes with their quadrupoles (tree.quadrupole) or monopoles only. A template argument
// rather than a test, so the monopole kernel's registers are not set by the quadrupole loop.
// TeamOps: PortableWalkTeam or cuda::WarpWalkTeam (WalkTeam).
template <class Space, class T, class Acc, int TPT, bool WithPotential, Mac M, bool Quad,
          class TeamOps>
struct GroupWalkKernel {
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Policy = MonopolePolicy<T, Acc>;
  using Team = TeamOps;
  using Node = GroupNode<T>;
  template <class V>
  using Scratch = Kokkos::View<V*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  // A family (an opened node's children) takes kFamily consecutive slots of a round; a team of
  // fewer threads than that gives each thread kFan slots (one thread and 8 slots on CPUs).
  static constexpr int kFamily = 8;
  static constexpr int kTeam = TreeDefaults<Space>::team_size;
  static_assert(kTeam % kFamily == 0 || kFamily % kTeam == 0,
                "the walk's team size must divide or be a multiple of 8");
  static constexpr int kFan = kTeam >= kFamily ? 1 : kFamily / kTeam;
  static constexpr int kFamilies = kTeam * kFan / kFamily;  // popped per round

  WalkData<Space, T> d;
  const GroupNode<T>* tree_nodes = nullptr;  // breadth-first
  int* overflow = nullptr;                   // set when the traversal stack is too small
  GroupWalkShape shape;
  // Where the team primitives take the traversal stacks from when not from level-1 scratch.
  typename Team::Stacks stacks;

  static std::size_t scratch0(const GroupWalkShape& s) {
    const std::size_t node_list =
        Quad ? Scratch<int>::shmem_size(s.node_list()) + Scratch<NodeRecord<T>>::shmem_size(s.ts)
             : Scratch<Body<T>>::shmem_size(s.node_list());
    return node_list + 2 * Scratch<int>::shmem_size(s.range_list()) +
           Scratch<Body<T>>::shmem_size(s.ts) + Scratch<std::uint64_t>::shmem_size(2) +
           Scratch<WalkLink>::shmem_size(kFamilies);
  }
  static std::size_t scratch1(const GroupWalkShape& s) {
    return Scratch<WalkLink>::shmem_size(s.stack());
  }

  // Accepted nodes: with quadrupoles their indices, staged a tile at a time with their
  // quadrupoles when flushed; monopoles are listed as the centre of mass and mass that the node
  // test has already loaded, so a flush only sums them. Staged from indices, each tile of 32
  // monopoles would cost a gather from global memory and two barriers.
  struct Lists {
    // range_offset(r): the range's particle count while listed, its first particle's position
    // among the listed particles once place_ranges has run (at a flush).
    Scratch<int> nodes, range_begin, range_offset;
    Scratch<Body<T>> node_body;        // monopoles
    Scratch<Body<T>> tile;             // particles
    Scratch<NodeRecord<T>> tile_node;  // nodes with quadrupoles
    Scratch<WalkLink> ahead;  // warp traversal: the families a round pushes and the next pops
  };

  // The team's barrier over scratch.
  KOKKOS_INLINE_FUNCTION void sync(const Member& team) const { Team::sync(team); }

  // Exclusive scan of `mine` over the team; `all` gets the team's total (`total` in scratch
  // carries it where the primitives need it). U: std::uint32_t or std::uint64_t.
  template <class U>
  KOKKOS_INLINE_FUNCTION U scan(const Member& team, const U mine, U& all,
                                const Scratch<std::uint64_t>& total) const {
    return Team::scan(team, mine, all, total);
  }

  // What both traversals do with a node: test it for the group; list it when accepted (with
  // quadrupoles its index, else its centre of mass and mass as the test loaded them); list
  // its particle range when it is an opened leaf.
  KOKKOS_INLINE_FUNCTION bool accepts(const Node& gn, const GroupBox<T>& box) const {
    return group_accepts<M>(gn.c, gn.geom, box, d.parameter);
  }
  KOKKOS_INLINE_FUNCTION void list_node(const Lists& l, const int at, const int node,
                                        const Body<T>& c) const {
    if constexpr (Quad)
      l.nodes(at) = node;
    else
      l.node_body(at) = c;
  }
  KOKKOS_INLINE_FUNCTION void list_range(const Lists& l, const int at, const WalkLink& lk) const {
    l.range_begin(at) = lk.first;
    l.range_offset(at) = -lk.count;
  }

  // Turns the listed ranges' particle counts into their offsets among the listed particles and
  // returns the particles' total. Run once a flush, not in every traversal round: with the
  // particles out of the round's scan its counts fit 32 bits (five shuffles, not ten).
  KOKKOS_INLINE_FUNCTION int place_ranges(const Member& team, const Lists& l, const int ranges,
                                          const Scratch<std::uint64_t>& total) const {
    const int ts = team.team_size(), rank = team.team_rank();
    const int per = (ranges + ts - 1) / ts;
    const int b = rank * per < ranges ? rank * per : ranges;
    const int e = b + per < ranges ? b + per : ranges;
    std::uint32_t mine = 0;
    for (int r = b; r < e; ++r) mine += std::uint32_t(l.range_offset(r));
    std::uint32_t all = 0;
    int at = int(scan(team, mine, all, total));
    for (int r = b; r < e; ++r) {
      const int count = l.range_offset(r);
      l.range_offset(r) = at;
      at += count;
    }
    sync(team);
    return int(all);
  }

  // Sums m staged point masses (particles, or monopole nodes) get(0) .. get(m - 1) onto the
  // thread's targets, in that order. Four are loaded before they are summed: left to itself,
  // nvcc issued each shared load only after the previous point's sums in the 64-register
  // monopole kernel, and the loads' latency stalled every point.
  template <class Get>
  KOKKOS_INLINE_FUNCTION void sum_points(const Get& get, const int m, const Body<T>* ti,
                                         Acc (*v)[4]) const {
    int j = 0;
    for (; j + 4 <= m; j += 4) {
      const Body<T> b[4] = {get(j), get(j + 1), get(j + 2), get(j + 3)};
      for (int q = 0; q < 4; ++q)
        for (int t = 0; t < TPT; ++t)
          Policy::template interact<WithPotential>(ti[t], b[q], d.eps2, v[t]);
    }
    for (; j < m; ++j) {
      const Body<T> b = get(j);
      for (int t = 0; t < TPT; ++t)
        Policy::template interact<WithPotential>(ti[t], b, d.eps2, v[t]);
    }
  }

  // Sums the listed nodes onto the thread's targets: monopoles straight from the list, nodes
  // with quadrupoles one staged tile at a time. The list was last written before a barrier;
  // the barrier after the sums keeps the next writes from overtaking them.
  KOKKOS_INLINE_FUNCTION void flush_nodes(const Member& team, const Lists& l, const int count,
                                          const Body<T>* ti, Acc (*v)[4]) const {
    if constexpr (!Quad) {
      sum_points([&](const int j) { return l.node_body(j); }, count, ti, v);
      sync(team);
      return;
    }
    const int ts = team.team_size(), rank = team.team_rank();
    for (int base = 0; base < count; base += ts) {
      const int m = count - base < ts ? count - base : ts;
      if (rank < m) {
        const int id = l.nodes(base + rank);
        l.tile_node(rank).c = tree_nodes[id].c;
        l.tile_node(rank).q = d.quad(id);
      }
      sync(team);
      for (int j = 0; j < m; ++j) {
        const NodeRecord<T> r = l.tile_node(j);
        for (int t = 0; t < TPT; ++t)
          Policy::template interact_node<WithPotential>(ti[t], r.c, r.q, d.eps2, v[t]);
      }
      sync(team);
    }
  }

  // Sums the particles of the listed leaf ranges (count particles in total, placed by
  // place_ranges) onto the targets.
  KOKKOS_INLINE_FUNCTION void flush_particles(const Member& team, const Lists& l, const int ranges,
                                              const int count, const Body<T>* ti,
                                              Acc (*v)[4]) const {
    const int ts = team.team_size(), rank = team.team_rank();
    // The thread's particle f moves on by ts a tile, so its range (the last one starting at or
    // before f) only moves forward, past the ~ts / 9 ranges a tile spans: a binary search per
    // tile took ~55 instructions, 12% of a tile's sums.
    int lo = 0;
    for (int base = 0; base < count; base += ts) {
      const int m = count - base < ts ? count - base : ts;
      if (rank < m) {
        const int f = base + rank;
        while (lo + 1 < ranges && l.range_offset(lo + 1) <= f) ++lo;
        l.tile(rank) = d.bodies(l.range_begin(lo) + f - l.range_offset(lo));
      }
      sync(team);
      sum_points([&](const int j) { return l.tile(j); }, m, ti, v);
      sync(team);
    }
  }

  // Adds a flush's entries to the group's count in scratch (total(1)), by the first thread.
  KOKKOS_INLINE_FUNCTION void count_cost(const int rank, const Scratch<std::uint64_t>& total,
                                         const int entries) const {
    if (d.group_cost != nullptr && rank == 0) total(1) += std::uint64_t(entries);
  }

  // Flushes a list that the round's add_nodes accepted nodes or add_ranges opened leaves would
  // overfill (both traversals, after the round's counts).
  KOKKOS_INLINE_FUNCTION void make_room(const Member& team, const Lists& l,
                                        const Scratch<std::uint64_t>& total, const Body<T>* ti,
                                        Acc (*v)[4], const int add_nodes, const int add_ranges,
                                        int& n_listed, int& n_ranges) const {
    const int rank = team.team_rank();
    if (n_listed + add_nodes > shape.node_list()) {
      count_cost(rank, total, n_listed);
      flush_nodes(team, l, n_listed, ti, v);
      n_listed = 0;
    }
    if (n_ranges + add_ranges > shape.range_list()) {
      const int n_particles = place_ranges(team, l, n_ranges, total);
      count_cost(rank, total, n_particles);
      flush_particles(team, l, n_ranges, n_particles, ti, v);
      n_ranges = 0;
    }
  }

  // The traversal (portable kernel, and CPUs): rounds of node tests, counted by a team scan.
  // Accepted nodes and opened leaves go to the lists (flushed when full); n_listed and
  // n_ranges return what is left in them.
  KOKKOS_INLINE_FUNCTION void traverse(const Member& team, const Lists& l, const GroupBox<T>& box,
                                       WalkLink* stack, const Scratch<std::uint64_t>& total,
                                       const Body<T>* ti, Acc (*v)[4], int& n_listed,
                                       int& n_ranges) const {
    const int rank = team.team_rank();
    const int stack_cap = shape.stack();
    // Every thread keeps the same copy of the list and stack sizes: they only change by the
    // team scan's totals. The stack holds families, an opened node's children (consecutive in
    // the breadth-first numbering, at most 8); a round pops the top ones and tests each child
    // in a slot of its own, kFamily slots a family, so an opened node costs one push. Nearly
    // every internal node has all 8 children (98% at 2^20 on a Plummer sphere), so the slots stay
    // full; pushing children one by one took a loop of up to 8 stores a round.
    int sp = 1;
    if (rank == 0) stack[0] = WalkLink{0, 1};  // the root, as a family of one
    sync(team);
    while (sp > 0) {
      const int families = sp < kFamilies ? sp : kFamilies;
      bool valid[kFan], accept[kFan];
      int node[kFan];
      Body<T> c[kFan];  // monopole list entries
      WalkLink lk[kFan];
      // Counts packed in one scan: accepted nodes (bits 0-7), opened leaves (8-15), families
      // pushed (16-23); at most kTeam * kFan <= 128 each.
      std::uint32_t mine = 0;
      for (int j = 0; j < kFan; ++j) {
        const int at = rank * kFan + j, f = at / kFamily, child = at % kFamily;
        valid[j] = false;
        accept[j] = false;
        node[j] = 0;
        c[j] = Body<T>{};
        lk[j] = WalkLink{0, 0};
        if (f < families) {
          const WalkLink family = stack[sp - families + f];
          if (child < family.count) {
            valid[j] = true;
            node[j] = family.first + child;
            const Node gn = tree_nodes[node[j]];
            lk[j] = gn.link;
            c[j] = gn.c;
            accept[j] = accepts(gn, box);
            if (accept[j])
              mine += 1;
            else if (lk[j].count < 0)
              mine += 1u << 8;
            else
              mine += 1u << 16;
          }
        }
      }
      sync(team);  // the popped families are read before pushes overwrite them
      std::uint32_t all = 0;
      const std::uint32_t before = scan(team, mine, all, total);
      const int add_nodes = int(all & 255), add_ranges = int(all >> 8 & 255);
      const int add_families = int(all >> 16 & 255);
      sp -= families;
      if (sp + add_families > stack_cap) {
        if (rank == 0) *overflow = 1;
        break;
      }
      make_room(team, l, total, ti, v, add_nodes, add_ranges, n_listed, n_ranges);
      int at_node = n_listed + int(before & 255), at_range = n_ranges + int(before >> 8 & 255);
      int at_family = sp + int(before >> 16 & 255);
      for (int j = 0; j < kFan; ++j) {
        if (!valid[j]) continue;
        if (accept[j]) {
          list_node(l, at_node++, node[j], c[j]);
        } else if (lk[j].count < 0) {
          list_range(l, at_range++, lk[j]);
        } else {
          stack[at_family++] = lk[j];
        }
      }
      n_listed += add_nodes;
      n_ranges += add_ranges;
      sp += add_families;
      sync(team);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int g =
        d.launch_order != nullptr ? d.launch_order[team.league_rank()] : team.league_rank();
    const GroupBox<T> box = d.groups(g);
    if (!box.active) return;
    const int gb = d.group_begin(g), ge = d.group_begin(g + 1);
    const int ts = team.team_size(), rank = team.team_rank();
    Lists l;
    if constexpr (Quad) {
      l.nodes = Scratch<int>(team.team_scratch(0), shape.node_list());
      l.tile_node = Scratch<NodeRecord<T>>(team.team_scratch(0), ts);
    } else {
      l.node_body = Scratch<Body<T>>(team.team_scratch(0), shape.node_list());
    }
    l.range_begin = Scratch<int>(team.team_scratch(0), shape.range_list());
    l.range_offset = Scratch<int>(team.team_scratch(0), shape.range_list());
    l.tile = Scratch<Body<T>>(team.team_scratch(0), ts);
    l.ahead = Scratch<WalkLink>(team.team_scratch(0), kFamilies);
    // total(0): the portable scan's total and the warp primitives' stack slot; total(1): the
    // entries summed, counted by the first thread at each flush in scratch (no counter live
    // through the traversal) and stored once at the end. Added up in global memory, every
    // flush waited for a round trip to L2.
    const Scratch<std::uint64_t> total(team.team_scratch(0), 2);
    if (rank == 0) total(1) = 0;
    const int stack_cap = shape.stack();
    WalkLink* stack = nullptr;
    int slot = -1;
    if constexpr (Team::scratch_stack)
      stack = Scratch<WalkLink>(team.team_scratch(1), stack_cap).data();
    else
      stack = Team::take_stack(team, stacks, total, stack_cap, slot);

    Body<T> ti[TPT];
    Acc v[TPT][4];
    d.template load_targets<TPT>(gb, ge, rank, ts, ti, v);
    int n_listed = 0, n_ranges = 0;
    Team::traverse(*this, team, l, box, stack, total, ti, v, n_listed, n_ranges);
    // Every thread is past its last stack access (a round's last barrier, or the counts before
    // an overflow's break).
    if constexpr (!Team::scratch_stack) Team::give_stack(team, stacks, slot);
    const int n_particles = place_ranges(team, l, n_ranges, total);
    count_cost(rank, total, n_listed + n_particles);
    if (d.group_cost != nullptr && rank == 0) d.group_cost[gb] = int(total(1));
    flush_nodes(team, l, n_listed, ti, v);
    flush_particles(team, l, n_ranges, n_particles, ti, v);
    d.template store_targets<TPT, WithPotential>(gb, ge, rank, ts, v);
  }
};

}  // namespace hayate::gravity
