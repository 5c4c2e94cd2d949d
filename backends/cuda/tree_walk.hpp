#pragma once
// The group tree walk's team primitives for CUDA devices, where a team is one warp: the
// counterpart of gravity::PortableWalkTeam (physics/gravity/tree_walk.hpp), taken where
// ExecTraits<Space>::is_gpu. What a team of one warp can do that Kokkos' team primitives do not:
//   scan:  a shuffle scan (~25 instructions) instead of Kokkos' team_scan through shared memory
//          with a block barrier and five warp barriers (~200 for a 64-bit value);
//   sync:  __syncwarp orders the lanes' shared-memory accesses; no block barrier is needed;
//   stack: the traversal stack from a pool indexed by a per-multiprocessor slot instead of
//          Kokkos' level-1 scratch, whose slot search probes a device-wide lock array
//          (warp_team.hpp);
//   traverse: a round's counts from three ballots, and the next round's node records
//          requested as soon as those counts are known (see traverse below).
// The lists and their order are those of the portable traversal, so the sums are the same bit
// for bit (test GravityTree.CudaWalkKernelMatchesPortableBitwise). Declared in every build so
// that generic code can name it; it is only instantiated for Kokkos::Cuda.
#include "cuda/warp_team.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hayate::cuda {

// Link: the stack's entry type (gravity::WalkLink: an opened node's family of children).
template <class Link>
struct WarpWalkTeam {
  // The stacks come from a pool, not from level-1 scratch.
  static constexpr bool scratch_stack = false;

  // What the walk kernel takes its stack from: `pool` holds per_team links for each slot,
  // `busy` a word of busy slots per multiprocessor. Raw pointers: a View's handle would push
  // the walk functor past the size Kokkos passes as a kernel argument.
  struct Stacks {
    Link* pool = nullptr;
    unsigned* busy = nullptr;
  };

  // The pool and busy words, kept between launches (host side).
  template <class Space>
  class Store {
   public:
    // Stacks of per_team links for every slot of the device behind `space`.
    Stacks get(const Space& space, const int per_team) {
      Stacks s;
#ifdef KOKKOS_ENABLE_CUDA
      const int slots = sm_id_count(space) * slots_per_sm;
      const std::size_t need = std::size_t(slots) * std::size_t(per_team);
      if (busy_.extent(0) == 0)
        busy_ = Kokkos::View<unsigned*, Mem>("hayate::cuda::walk_slot_busy", slots / slots_per_sm);
      if (pool_.extent(0) < need)
        pool_ = Kokkos::View<Link*, Mem>(
            Kokkos::view_alloc(std::string("hayate::cuda::walk_stack_pool"),
                               Kokkos::WithoutInitializing),
            need);
      s.pool = pool_.data();
      s.busy = busy_.data();
#else
      (void)space;
      (void)per_team;
#endif
      return s;
    }

   private:
    using Mem = typename Space::memory_space;
    Kokkos::View<Link*, Mem> pool_;
    Kokkos::View<unsigned*, Mem> busy_;
  };

  template <class Member>
  KOKKOS_INLINE_FUNCTION static void sync(const Member&) {
#if defined(__CUDA_ARCH__)
    __syncwarp();
#endif
  }

  // Exclusive scan of `mine` over the warp; `all` gets the warp's total.
  template <class U, class Member, class Total>
  KOKKOS_INLINE_FUNCTION static U scan(const Member& team, const U mine, U& all, const Total&) {
#if defined(__CUDA_ARCH__)
    return warp_exclusive_scan(mine, team.team_rank(), all);
#else
    (void)team;
    all = mine;
    return U(0);
#endif
  }

  // The team's stack of `cap` links: lane 0 takes a slot and passes it on through total(0).
  template <class Member, class Total>
  KOKKOS_INLINE_FUNCTION static Link* take_stack(const Member& team, const Stacks& s,
                                                 const Total& total, const int cap, int& slot) {
#if defined(__CUDA_ARCH__)
    if (team.team_rank() == 0) total(0) = std::uint64_t(acquire_sm_slot(s.busy));
    __syncwarp();
    slot = int(total(0));
    return s.pool + std::size_t(slot) * std::size_t(cap);
#else
    (void)team;
    (void)s;
    (void)total;
    (void)cap;
    slot = -1;
    return nullptr;
#endif
  }

  // Gives the slot back once every lane is past its last stack access.
  template <class Member>
  KOKKOS_INLINE_FUNCTION static void give_stack(const Member& team, const Stacks& s,
                                                const int slot) {
#if defined(__CUDA_ARCH__)
    if (slot >= 0 && team.team_rank() == 0) release_sm_slot(s.busy, slot);
#else
    (void)team;
    (void)s;
    (void)slot;
#endif
  }

  // The traversal for a team of one warp, a child per lane: the rounds, lists and order of
  // GroupWalkKernel::traverse, with two changes to a round's chain of waits. Its counts come
  // from three ballots, not a scan of five dependent shuffles. And the next round's node
  // records are requested as soon as those counts are known: the families that the next round
  // pops are the top of the stack, mostly the ones just pushed, whose links the lanes that
  // opened them pass on through scratch (l.ahead), so a round no longer waits for a load from
  // the stack and then for the node's load.
  // Kernel: gravity::GroupWalkKernel (its node records, node test, lists and flushes).
  template <class Kernel, class Member, class Lists, class Box, class Total, class Body, class Acc>
  KOKKOS_INLINE_FUNCTION static void traverse(const Kernel& k, const Member& team, const Lists& l,
                                              const Box& box, Link* stack, const Total& total,
                                              const Body* ti, Acc (*v)[4], int& n_listed,
                                              int& n_ranges) {
#if defined(__CUDA_ARCH__)
    static_assert(Kernel::kTeam == 32 && Kernel::kFan == 1,
                  "the warp traversal takes teams of one warp, a child per lane");
    using Node = typename Kernel::Node;
    constexpr unsigned all_lanes = 0xffffffffu;
    constexpr int kFamily = Kernel::kFamily, kFamilies = Kernel::kFamilies;
    const int rank = team.team_rank();
    const unsigned lanes_below = (1u << rank) - 1u;
    const int f = rank / kFamily, child = rank % kFamily;
    const int stack_cap = k.shape.stack();
    // Round 0 tests the root, a family of one.
    int sp = 1, node = 0;
    bool valid = rank == 0;
    Node gn{};
    if (valid) gn = k.tree_nodes[0];
    while (sp > 0) {
      const int families = sp < kFamilies ? sp : kFamilies;
      const bool accept = valid && k.accepts(gn, box);
      const bool leaf = valid && !accept && gn.link.count < 0;
      const bool open = valid && !accept && !leaf;
      const unsigned accepted = __ballot_sync(all_lanes, accept);
      const unsigned leaves = __ballot_sync(all_lanes, leaf);
      const unsigned opened = __ballot_sync(all_lanes, open);
      const int add_nodes = __popc(accepted), add_ranges = __popc(leaves),
                add_families = __popc(opened);
      sp -= families;
      if (sp + add_families > stack_cap) {
        if (rank == 0) *k.overflow = 1;
        break;
      }
      // The next round pops stack positions next_sp - next_families .. next_sp - 1; those from
      // `fresh` on are pushed now (push j at sp + j, in lane order) and go through scratch,
      // the others were stacked by earlier rounds.
      const int next_sp = sp + add_families;
      const int next_families = next_sp < kFamilies ? next_sp : kFamilies;
      const int next_base = next_sp - next_families;
      const int fresh = sp > next_base ? sp - next_base : 0;
      if (open) {
        const int at = sp + __popc(opened & lanes_below);
        if (at >= next_base)
          l.ahead(at - next_base) = gn.link;
        else
          stack[at] = gn.link;
      }
      __syncwarp();
      Link family{0, 0};
      if (f < next_families) family = f >= fresh ? l.ahead(f) : stack[next_base + f];
      const bool next_valid = child < family.count;
      const int next_node = family.first + child;
      k.make_room(team, l, total, ti, v, add_nodes, add_ranges, n_listed, n_ranges);
      // Requested after the flushes: before them the record was live through their sums.
      Node next_gn{};
      if (next_valid) next_gn = k.tree_nodes[next_node];
      if (accept)
        k.list_node(l, n_listed + __popc(accepted & lanes_below), node, gn.c);
      else if (leaf)
        k.list_range(l, n_ranges + __popc(leaves & lanes_below), gn.link);
      n_listed += add_nodes;
      n_ranges += add_ranges;
      sp = next_sp;
      valid = next_valid;
      node = next_node;
      gn = next_gn;
      __syncwarp();
    }
#else
    (void)k;
    (void)team;
    (void)l;
    (void)box;
    (void)stack;
    (void)total;
    (void)ti;
    (void)v;
    (void)n_listed;
    (void)n_ranges;
#endif
  }
};

}  // namespace hayate::cuda
