#pragma once
// Barnes-Hut octree on the device.
//   build:   bounding cube -> 63-bit Peano-Hilbert keys -> stable radix sort of (code, particle)
//            pairs (core/algorithms/radix_sort.hpp; equal codes keep the particle order, so
//            the sort is deterministic) -> octree level by level (each node is a contiguous range
//            of sorted particles; children found by binary search on the key digits) -> nodes
//            reordered depth-first with "skip" links (the next node after a node's subtree), which
//            lets a walk run without a stack. The level-by-level (breadth-first) numbering is kept
//            as well: there a node's children are consecutive, which is what the group walk's lanes
//            fan out over.
//   moments: every evaluation, bottom-up from the current positions: mass, centre of mass and
//            b_J = an upper bound of the distance of the node's particles from it.
//   walk:    a group of consecutive (so nearby) sorted particles shares one walk: the opening
//            decision uses the distance from the node's centre of mass to the group's bounding
//            box, so it is the same for every member (tree_walk.hpp).
// MACs: acceleration (G m_J / d^2 (b_J / d)^2 <= dacc |a_old|, GADGET/GOTHIC; stricter for nodes
// grown past their cell, see group_accepts) or the classic theta (cell side / d < theta); both
// also require d > b_J.
#include "algorithms/radix_sort.hpp"
#include "gravity/direct.hpp"
#include "gravity/state.hpp"
#include "gravity/tree_walk.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hayate::gravity {

// The side of a level-l cell of a root cube of side `root_side`.
KOKKOS_INLINE_FUNCTION double cell_side(const double root_side, const int level) {
  return root_side / double(std::uint64_t(1) << level);
}

// Spreads the low 21 bits of v to every third bit (bit k to bit 3k), for interleaving.
KOKKOS_INLINE_FUNCTION std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1fffffull;
  v = (v | v << 32) & 0x1f00000000ffffull;
  v = (v | v << 16) & 0x1f0000ff0000ffull;
  v = (v | v << 8) & 0x100f00f00f00f00full;
  v = (v | v << 4) & 0x10c30c30c30c30c3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

// Peano-Hilbert index of a cell of the 2^21-cube (Skilling, "Programming the Hilbert curve",
// AIP Conf. Proc. 707, 2004: the axes transposed into the curve's digits, then interleaved).
// As with plainly interleaved (Morton) keys, the 3 bits of level l (from the top) say which
// octant of its level-l cell a point lies in, so every cell is one run of keys; but consecutive
// cells are face neighbours, so runs of sorted particles (the walk's target groups) are more
// compact and list fewer interactions (docs/dev/decisions.md).
KOKKOS_INLINE_FUNCTION std::uint64_t hilbert_key(std::uint64_t ix, std::uint64_t iy,
                                                 std::uint64_t iz) {
  // In 32-bit words and without branches: the 64-bit form with a branch per axis and level
  // has the lanes of a warp take both sides.
  std::uint32_t X[3] = {std::uint32_t(ix & 0x1fffffull), std::uint32_t(iy & 0x1fffffull),
                        std::uint32_t(iz & 0x1fffffull)};
  for (std::uint32_t Q = 1u << 20; Q > 1; Q >>= 1) {
    const std::uint32_t P = Q - 1;
    X[0] ^= (X[0] & Q) ? P : 0u;  // axis 0: invert, or exchange with itself (nothing)
    for (int i = 1; i < 3; ++i) {
      const bool set = (X[i] & Q) != 0;
      const std::uint32_t t = set ? 0u : (X[0] ^ X[i]) & P;  // exchange
      X[0] ^= (set ? P : 0u) ^ t;                            // or invert
      X[i] ^= t;
    }
  }
  X[1] ^= X[0];  // Gray encode
  X[2] ^= X[1];
  std::uint32_t t = 0;
  for (std::uint32_t Q = 1u << 20; Q > 1; Q >>= 1) t ^= (X[2] & Q) ? Q - 1 : 0u;
  X[0] ^= t;
  X[1] ^= t;
  X[2] ^= t;
  return spread_bits(X[2]) | spread_bits(X[1]) << 1 | spread_bits(X[0]) << 2;
}

// A node's mass and mass-weighted position sums (the vector reduction's sum type).
struct MassSums {
  double m = 0, mx = 0, my = 0, mz = 0;
  KOKKOS_INLINE_FUNCTION void add(double w, double x, double y, double z) {
    m += w;
    mx += w * x;
    my += w * y;
    mz += w * z;
  }
  KOKKOS_INLINE_FUNCTION MassSums& operator+=(const MassSums& o) {
    m += o.m;
    mx += o.mx;
    my += o.my;
    mz += o.mz;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile MassSums& o) volatile {
    m += o.m;
    mx += o.mx;
    my += o.my;
    mz += o.mz;
  }
};

// What a node needs of its members about its centre of mass: bounding box, reach (largest
// distance, squared for a leaf's particles) and, when NQ = 6, quadrupole (NQ = 0: monopoles
// only, and the reduction carries six doubles less). "+=" merges two partial results (min,
// max, max, sum), so Kokkos' sum reduction over this type computes all of them at once.
template <int NQ>
struct Spread {
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  double reach = 0;
  double q[NQ > 0 ? NQ : 1] = {};
  // Adds w (3 s s^T - |s|^2 I) to q.
  KOKKOS_INLINE_FUNCTION void add_quad(double w, double sx, double sy, double sz) {
    if constexpr (NQ == 6) {
      const double s2 = sx * sx + sy * sy + sz * sz;
      q[0] += w * (3 * sx * sx - s2);
      q[1] += w * (3 * sy * sy - s2);
      q[2] += w * (3 * sz * sz - s2);
      q[3] += w * 3 * sx * sy;
      q[4] += w * 3 * sx * sz;
      q[5] += w * 3 * sy * sz;
    }
  }
  KOKKOS_INLINE_FUNCTION Spread& operator+=(const Spread& o) {
    for (int d = 0; d < 3; ++d) {
      lo[d] = o.lo[d] < lo[d] ? o.lo[d] : lo[d];
      hi[d] = o.hi[d] > hi[d] ? o.hi[d] : hi[d];
    }
    reach = o.reach > reach ? o.reach : reach;
    for (int j = 0; j < NQ; ++j) q[j] += o.q[j];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Spread& o) volatile {
    for (int d = 0; d < 3; ++d) {
      lo[d] = o.lo[d] < lo[d] ? o.lo[d] : lo[d];
      hi[d] = o.hi[d] > hi[d] ? o.hi[d] : hi[d];
    }
    reach = o.reach > reach ? o.reach : reach;
    for (int j = 0; j < NQ; ++j) q[j] += o.q[j];
  }
};

}  // namespace hayate::gravity

namespace Kokkos {
template <>
struct reduction_identity<hayate::gravity::MassSums> {
  KOKKOS_FORCEINLINE_FUNCTION static hayate::gravity::MassSums sum() {
    return hayate::gravity::MassSums();
  }
};
template <int NQ>
struct reduction_identity<hayate::gravity::Spread<NQ>> {
  KOKKOS_FORCEINLINE_FUNCTION static hayate::gravity::Spread<NQ> sum() {
    return hayate::gravity::Spread<NQ>();
  }
};
}  // namespace Kokkos

namespace hayate::gravity {

// A node's members: children first .. first + count - 1 (count > 0) or, for a leaf, sorted
// particles first .. first - count - 1 (count < 0).
struct alignas(8) MemberRange {
  int first, count;
};

// Breadth-first numbers where each level of a tree starts (at most 3 * 21 bits / 3 + 1 levels),
// passed to a kernel by value.
struct LevelBases {
  int at[32];
};

// Checks the tree entries of a checkpoint for n particles (host only): the node count, the leaf
// size the tree was built with, a finite bounding cube, keys in ascending order within the cube's
// 63 bits and an order that is a permutation of the particles. Returns the node count (0: no tree
// was built). Throws InputError naming the entry.
inline std::int64_t check_tree_checkpoint(const core::CheckpointReader& cp, int n, int leaf_size) {
  const auto nodes = cp.get<std::int64_t>("tree_nodes", 0, (std::int64_t(1) << 28) - 1);
  if (nodes == 0) return 0;
  const auto saved_leaf = cp.get<std::int32_t>("tree_leaf_size", 1, 1 << 20);
  if (saved_leaf != leaf_size)
    cp.fail("tree_leaf_size",
            "holds " + std::to_string(saved_leaf) +
                ", but the input asks for tree.leaf_size = " + std::to_string(leaf_size));
  cp.get<std::array<double, 3>>("tree_centre");
  const double half = cp.get<double>("tree_half");
  if (!(half > 0)) cp.fail("tree_half", "holds a cube half-side that is not positive");
  const auto codes = cp.raw_vector<std::uint64_t>("tree_codes", std::size_t(n));
  for (std::size_t k = 0; k < codes.size(); ++k)
    if (codes[k] >> 63 || (k > 0 && codes[k] < codes[k - 1]))
      cp.fail("tree_codes", "holds keys out of order or beyond 63 bits", k);
  const auto order = cp.raw_vector<std::int32_t>("tree_order", std::size_t(n));
  const std::size_t bad = core::first_non_permutation(order);
  if (bad != core::CheckpointReader::npos)
    cp.fail("tree_order", "is not a permutation of the " + std::to_string(n) + " particles", bad);
  return nodes;
}

template <class Space>
class Tree {
 public:
  using Mem = typename Space::memory_space;
  using Vec = typename Particles<Space>::Vec;
  using Scalar = typename Particles<Space>::Scalar;
  using IntView = Kokkos::View<int*, Mem>;

  // Views the build fills completely: no zero-fill kernel and fence at allocation, which at
  // ~80 allocations per rebuild was a good part of its cost.
  template <class V>
  static V uninitialized(const char* name, std::size_t n) {
    return V(Kokkos::view_alloc(std::string(name), Kokkos::WithoutInitializing), n);
  }
  // Scratch of the build kept between rebuilds, grown when too small.
  template <class V>
  static void grow(V& v, const char* name, std::size_t n) {
    if (v.extent(0) < n) v = uninitialized<V>(name, n + n / 8);
  }
  // The same, keeping the contents (arrays the build fills level by level).
  template <class V>
  void grow_keep(V& v, const char* name, std::size_t n) const {
    if (v.extent(0) >= n) return;
    V bigger = uninitialized<V>(name, n + n / 8);
    if (v.extent(0) > 0)
      Kokkos::deep_copy(space_,
                        Kokkos::subview(bigger, std::make_pair(std::size_t(0), v.extent(0))), v);
    v = bigger;
  }
  // A view of `rows` rows (exactly) over `store`, which is kept between rebuilds and grown
  // when too small: the tree's size changes a little at every rebuild, and reallocating its
  // arrays each time (a device free and allocation per array) cost a third of a rebuild on
  // GPUs. A view made from a pointer does not own its memory. The store must hold the view's
  // span, not required_allocation_size (bytes rounded up to 8): for an odd number of ints that
  // asked for one element more, and a store of exactly `rows` ints was then reallocated, losing
  // the child links build_levels had written into it.
  template <class V, class Store>
  static V carve(Store& store, const char* name, std::size_t rows) {
    static_assert(std::is_same_v<typename V::value_type, typename Store::value_type>);
    grow(store, name, V(typename V::pointer_type(nullptr), rows).span());
    return V(store.data(), rows);
  }

  // Every kernel and copy of the tree runs on `space`.
  explicit Tree(const Space& space) : space_(space) {}

  int leaf_size = 32;

  bool built() const { return n_nodes_ > 0; }
  int n_nodes() const { return n_nodes_; }
  int levels() const { return levels_; }
  const IntView& order() const { return order_; }
  const IntView& begin() const { return begin_; }
  const IntView& end() const { return end_; }
  const IntView& skip() const { return skip_; }
  // Breadth-first numbering: node b's children are child_first(b) .. + child_count(b) - 1
  // (breadth-first numbers); dfs_of(b) is its depth-first number.
  const IntView& child_first() const { return child_first_; }
  const IntView& child_count() const { return child_count_; }
  const IntView& dfs_of() const { return dfs_of_; }
  // bfs_of(k): the breadth-first number of depth-first node k.
  const IntView& bfs_of() const { return bfs_of_; }
  // Moments and sizes are indexed breadth-first, so that the moments of one level read the
  // children of a node side by side (depth-first, siblings lie a subtree apart).
  const Kokkos::View<double* [4], Mem>& mono() const {
    return mono_;
  } const Kokkos::View<double* [2], Mem>& size() const {
    return size_;
  } const Kokkos::View<double* [6], Mem>& quad() const { return quad_; }

  // Keys, sort and topology from the current positions (timed as tree_keys, tree_sort,
  // tree_build).
  void build(const Vec& x, int n, core::Timers& timers);

  // Mass, centre of mass, b_J and (when `quadrupole`) quadrupole of every node from the
  // current positions.
  // One launch per level over that level's nodes (consecutive in the breadth-first numbering);
  // each node is one thread whose vector lanes take its particles (a leaf) or its children side
  // by side, reading the particles gathered into sorted order. A node per thread looping over
  // its members, and one launch over all nodes per level with leaves gathering through
  // `order`, both measured slower on GPUs.
  void moments(const Vec& x, const Scalar& m, const bool quadrupole = true) {
    gather(x, m);
    if (quadrupole)
      level_moments<6>();
    else
      level_moments<0>();
  }

  // Public for nvcc (device lambdas): moments() after the gather; NQ as in Spread.
  template <int NQ>
  void level_moments();

  // Positions and masses in sorted order: the one gather through `order` an evaluation needs;
  // the moments, the group boxes and the walk's particles read them in order. When the
  // particles were permuted into this tree's order (reset_order) they are x and m themselves
  // and nothing is copied; otherwise positions are gathered every time and masses once per
  // tree.
  void gather(const Vec& x, const Scalar& m);

  // The particles were permuted into this tree's order: sorted position k is now particle k.
  void reset_order() {
    fill_identity(space_, order_);
    order_identity_ = true;
  }

  // Sorted position k is particle k (reset_order since the last build or restore).
  bool order_is_identity() const { return order_identity_; }

  // Positions and masses in sorted order, as of the last moments() (views of the particles'
  // own arrays after reset_order()).
  const Vec& sorted_x() const { return sorted_x_; }
  const Scalar& sorted_m() const { return sorted_m_; }

  // Each node's members in breadth-first order (MemberRange), once per tree: the moments then
  // read one record per node, not the child links and, for a leaf, its depth-first number and
  // then its particle range (a dependent load less per node on the moments' deepest levels).
  void set_members();

  // Breadth-first numbers of each level's first node (levels_ + 1 entries), from the nodes'
  // levels (after a restore; a build sets them from its level counts).
  void set_level_bases() {
    const auto level = on_host(space_, level_);
    std::vector<int> count(levels_, 0);
    for (int k = 0; k < n_nodes_; ++k) ++count[level(k)];
    level_base_.assign(1, 0);
    for (int l = 0; l < levels_; ++l) level_base_.push_back(level_base_.back() + count[l]);
  }

  // A checkpoint holds what the build started from, not the node arrays: the bounding cube, the
  // sorted keys and the sort's permutation. A restore rebuilds the nodes from them with the
  // build's own code, so they are the saved tree's nodes bit for bit, and no node index read
  // from a file is ever used (check_tree_checkpoint validates the keys and the permutation).
  void save(core::CheckpointWriter& cp) const {
    cp.put<std::int64_t>("tree_nodes", n_nodes_);
    if (!built()) return;
    cp.put<std::int32_t>("tree_leaf_size", leaf_size);
    cp.put("tree_centre", centre_);
    cp.put<double>("tree_half", half_);
    cp.put_view("tree_codes", Kokkos::subview(codes_, std::make_pair(0, n_)));
    cp.put_view("tree_order", order_);
  }

  // The tree of a checkpoint that check_tree_checkpoint accepted for n particles.
  void restore(const core::CheckpointReader& cp, int n) {
    n_ = n;
    const auto saved_nodes = check_tree_checkpoint(cp, n, leaf_size);
    n_nodes_ = 0;
    if (saved_nodes == 0) return;
    bits_ = 21;
    level_base_.clear();
    centre_ = cp.get<std::array<double, 3>>("tree_centre");
    half_ = cp.get<double>("tree_half");
    gathered_mass_ = false;
    order_identity_ = false;
    members_valid_ = false;
    ensure_size(codes_, n, "hayate::gravity::tree_codes");
    order_ = carve<IntView>(order_store_, "hayate::gravity::tree_order", n);
    cp.get_view("tree_codes", Kokkos::subview(codes_, std::make_pair(0, n)), std::uint64_t(0),
                max_code());
    cp.get_view("tree_order", order_, 0, n - 1);
    build_levels(codes_);
    if (n_nodes_ != saved_nodes)
      cp.fail("tree_nodes", "holds " + std::to_string(saved_nodes) + " nodes, but its keys make " +
                                std::to_string(n_nodes_));
  }

  // The largest key of a 2^21-cube.
  static constexpr std::uint64_t max_code() { return (std::uint64_t(1) << 63) - 1; }

  // Public only because nvcc forbids device lambdas in private member functions.
  void bounding_cube(const Vec& x, int n);

  // The node arrays of a tree of `count` nodes, carved from buffers kept between rebuilds.
  void allocate_nodes(int count) {
    begin_ = carve<IntView>(begin_store_, "hayate::gravity::tree_begin", count);
    end_ = carve<IntView>(end_store_, "hayate::gravity::tree_end", count);
    skip_ = carve<IntView>(skip_store_, "hayate::gravity::tree_skip", count);
    level_ = carve<IntView>(level_store_, "hayate::gravity::tree_level", count);
    dfs_of_ = carve<IntView>(dfs_of_store_, "hayate::gravity::tree_dfs_of", count);
    bfs_of_ = carve<IntView>(bfs_of_store_, "hayate::gravity::tree_bfs_of", count);
    // build_levels filled these stores level by level: views over them, never a reallocation.
    if (child_first_store_.extent(0) < std::size_t(count) ||
        child_count_store_.extent(0) < std::size_t(count))
      throw std::logic_error("tree: child links outgrew their store");
    child_first_ = IntView(child_first_store_.data(), count);
    child_count_ = IntView(child_count_store_.data(), count);
    mono_ = carve<Kokkos::View<double* [4], Mem>>(mono_store_, "hayate::gravity::tree_mono", count);
    size_ = carve<Kokkos::View<double* [2], Mem>>(size_store_, "hayate::gravity::tree_size", count);
    quad_ = carve<Kokkos::View<double* [6], Mem>>(quad_store_, "hayate::gravity::tree_quad", count);
  }

  // Top-down, one level at a time: a node with more than leaf_size particles (and levels left)
  // gets one child per non-empty octant; then all nodes are sorted into depth-first order.
  // Nodes are numbered breadth-first as they are made (level l's nodes consecutive from
  // level_base_[l], a node's children consecutive on the next level): their ranges go straight
  // into all_begin_/all_end_ and their child links into the child stores, one level after the
  // other, so no per-level arrays are gathered afterwards.
  void build_levels(const Kokkos::View<std::uint64_t*, Mem>& codes);

 private:
  Space space_;
  int n_ = 0, bits_ = 21, levels_ = 0, n_nodes_ = 0;
  std::array<double, 3> centre_{0, 0, 0};
  double half_ = 1;
  // The current tree's arrays: views of exactly its size carved from the stores below.
  IntView order_, begin_, end_, skip_, level_, child_first_, child_count_, dfs_of_, bfs_of_;
  Kokkos::View<double* [4], Mem> mono_;  // centre of mass, mass
  Kokkos::View<double* [2], Mem> size_;  // b_J, cell side
  Kokkos::View<double* [6], Mem> quad_;  // xx, yy, zz, xy, xz, yz
  Kokkos::View<double* [6], Mem> box_;   // particles' bounding box: lo x, y, z, hi x, y, z
  IntView order_store_, begin_store_, end_store_, skip_store_, level_store_;
  IntView child_first_store_, child_count_store_, dfs_of_store_, bfs_of_store_;
  Kokkos::View<double*, Mem> mono_store_, size_store_, quad_store_, box_store_;
  Kokkos::View<std::uint64_t*, Mem> codes_;
  core::RadixSortBuffers<Space> sort_buffers_;
  std::vector<int> level_base_;  // breadth-first numbers where each level starts
  Vec sorted_x_, gathered_x_;    // positions in sorted order; gathered ones unless reordered
  Scalar sorted_m_, gathered_m_;
  bool gathered_mass_ = false;   // gathered_m_ belongs to the current order
  bool order_identity_ = false;  // order_ is the identity (reset_order)
  Kokkos::View<MemberRange*, Mem> members_;
  bool members_valid_ = false;  // members_ belongs to the current tree
  // Build scratch kept between rebuilds: the node sort's keys and values, the nodes' particle
  // ranges in breadth-first order, and one level's octant splits.
  Kokkos::View<std::uint64_t*, Mem> node_key_;
  IntView src_of_, all_begin_, all_end_;
  Kokkos::View<int* [7], Mem> split_;  // per node of a level: where octants 1-7 begin
};

template <class Space>
void Tree<Space>::build(const Vec& x, int n, core::Timers& timers) {
  n_ = n;
  bits_ = 21;
  ensure_size(codes_, n, "hayate::gravity::tree_codes");
  gathered_mass_ = false;
  order_identity_ = false;
  members_valid_ = false;
  order_ = carve<IntView>(order_store_, "hayate::gravity::tree_order", n);
  const auto codes = codes_;
  const auto order = order_;
  {
    auto scope = timers.scope("tree_keys");
    bounding_cube(x, n);
    const double cx = centre_[0], cy = centre_[1], cz = centre_[2];
    const double scale = double(std::uint64_t(1) << bits_) / (2.0 * half_);
    const double lo = -half_;
    const std::uint64_t top = (std::uint64_t(1) << bits_) - 1;
    Kokkos::parallel_for(
        "hayate::gravity::tree_keys", Kokkos::RangePolicy<Space>(space_, 0, n),
        KOKKOS_LAMBDA(const int i) {
          auto cell = [&](double v) {
            const double q = compat::floor(v * scale);
            return q < 0 ? std::uint64_t(0) : (q > double(top) ? top : std::uint64_t(q));
          };
          const std::uint64_t ix = cell(x(i, 0) - cx - lo), iy = cell(x(i, 1) - cy - lo),
                              iz = cell(x(i, 2) - cz - lo);
          codes(i) = hilbert_key(ix, iy, iz);
          order(i) = i;
        });
  }
  {
    auto scope = timers.scope("tree_sort");
    core::sort_pairs(space_, codes, order, n, 3 * bits_, sort_buffers_);
  }
  auto scope = timers.scope("tree_build");
  build_levels(codes);
}

template <class Space>
template <int NQ>
void Tree<Space>::level_moments() {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  constexpr int lanes = TreeDefaults<Space>::moment_lanes;
  constexpr int per_team = TreeDefaults<Space>::moment_per_team;
  if (!members_valid_) set_members();
  const auto members_of = members_;
  const auto mono = mono_;
  const auto size = size_;
  const auto quad = quad_;
  const int nn = n_nodes_;
  if (int(box_.extent(0)) != nn)
    box_ = carve<Kokkos::View<double* [6], Mem>>(box_store_, "hayate::gravity::tree_box", nn);
  const auto box = box_;
  const auto sx = sorted_x_;
  const auto sm = sorted_m_;
  if (int(level_base_.size()) != levels_ + 1) set_level_bases();
  for (int l = levels_ - 1; l >= 0; --l) {
    const int first = level_base_[l], count = level_base_[l + 1] - first;
    Kokkos::parallel_for(
        "hayate::gravity::tree_moments",
        Policy(space_, (count + per_team - 1) / per_team, per_team, lanes),
        KOKKOS_LAMBDA(const Member& team) {
          const int node = first + team.league_rank() * team.team_size() + team.team_rank();
          if (node >= first + count) return;
          const MemberRange r = members_of(node);
          const bool leaf = r.count < 0;
          const int kb = r.first, cf = r.first, members = leaf ? -r.count : r.count;
          MassSums sum;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, members),
              [&](const int j, MassSums& t) {
                if (leaf) {
                  const int k = kb + j;
                  t.add(sm(k), sx(k, 0), sx(k, 1), sx(k, 2));
                } else {
                  const int ch = cf + j;
                  t.add(mono(ch, 3), mono(ch, 0), mono(ch, 1), mono(ch, 2));
                }
              },
              sum);
          const double c[3] = {sum.mx / sum.m, sum.my / sum.m, sum.mz / sum.m};
          Spread<NQ> spread;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, members),
              [&](const int j, Spread<NQ>& t) {
                if (leaf) {
                  const int k = kb + j;
                  const double p[3] = {sx(k, 0), sx(k, 1), sx(k, 2)};
                  double r2 = 0;
                  for (int d = 0; d < 3; ++d) {
                    r2 += (p[d] - c[d]) * (p[d] - c[d]);
                    t.lo[d] = p[d] < t.lo[d] ? p[d] : t.lo[d];
                    t.hi[d] = p[d] > t.hi[d] ? p[d] : t.hi[d];
                  }
                  t.reach = r2 > t.reach ? r2 : t.reach;  // squared for a leaf
                  t.add_quad(sm(k), p[0] - c[0], p[1] - c[1], p[2] - c[2]);
                } else {
                  // The child's particles lie within b_child of its centre of mass and
                  // inside its bounding box: the nearer of the two bounds is kept, so b_J
                  // stays an upper bound but does not compound level after level.
                  const int ch = cf + j;
                  double r2 = 0, corner2 = 0;
                  for (int d = 0; d < 3; ++d) {
                    r2 += (mono(ch, d) - c[d]) * (mono(ch, d) - c[d]);
                    const double below = c[d] - box(ch, d), above = box(ch, 3 + d) - c[d];
                    const double far = below > above ? below : above;
                    corner2 += far * far;
                    t.lo[d] = box(ch, d) < t.lo[d] ? box(ch, d) : t.lo[d];
                    t.hi[d] = box(ch, 3 + d) > t.hi[d] ? box(ch, 3 + d) : t.hi[d];
                  }
                  const double via_com = compat::sqrt(r2) + size(ch, 0);
                  const double via_box = compat::sqrt(corner2);
                  const double reach = via_box < via_com ? via_box : via_com;
                  t.reach = reach > t.reach ? reach : t.reach;
                  // Parallel-axis shift of the child's quadrupole.
                  t.add_quad(mono(ch, 3), mono(ch, 0) - c[0], mono(ch, 1) - c[1],
                             mono(ch, 2) - c[2]);
                  for (int q = 0; q < NQ; ++q) t.q[q] += quad(ch, q);
                }
              },
              spread);
          Kokkos::single(Kokkos::PerThread(team), [&]() {
            for (int d = 0; d < 3; ++d) mono(node, d) = c[d];
            mono(node, 3) = sum.m;
            size(node, 0) = leaf ? compat::sqrt(spread.reach) : spread.reach;
            for (int d = 0; d < 3; ++d) {
              box(node, d) = spread.lo[d];
              box(node, 3 + d) = spread.hi[d];
            }
            for (int q = 0; q < NQ; ++q) quad(node, q) = spread.q[q];
          });
        });
  }
}

template <class Space>
void Tree<Space>::gather(const Vec& x, const Scalar& m) {
  if (order_identity_) {
    sorted_x_ = x;
    sorted_m_ = m;
    return;
  }
  if (gathered_x_.extent(0) < std::size_t(n_)) {
    grow(gathered_x_, "hayate::gravity::tree_sorted_x", n_);
    grow(gathered_m_, "hayate::gravity::tree_sorted_m", n_);
    gathered_mass_ = false;
  }
  const auto order = order_;
  const auto gx = gathered_x_;
  const auto gm = gathered_m_;
  const bool with_mass = !gathered_mass_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_gather_sorted", Kokkos::RangePolicy<Space>(space_, 0, n_),
      KOKKOS_LAMBDA(const int k) {
        const int i = order(k);
        for (int d = 0; d < 3; ++d) gx(k, d) = x(i, d);
        if (with_mass) gm(k) = m(i);
      });
  gathered_mass_ = true;
  sorted_x_ = gathered_x_;
  sorted_m_ = gathered_m_;
}

template <class Space>
void Tree<Space>::set_members() {
  ensure_capacity(members_, n_nodes_, "hayate::gravity::tree_members");
  const auto members = members_;
  const auto begin = begin_, end = end_, dfs_of = dfs_of_;
  const auto child_first = child_first_, child_count = child_count_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_members", Kokkos::RangePolicy<Space>(space_, 0, n_nodes_),
      KOKKOS_LAMBDA(const int b) {
        const int children = child_count(b);
        const int d = dfs_of(b);
        members(b) = children > 0 ? MemberRange{child_first(b), children}
                                  : MemberRange{begin(d), begin(d) - end(d)};
      });
  members_valid_ = true;
}

template <class Space>
void Tree<Space>::bounding_cube(const Vec& x, int n) {
  // One pass for the six extremes, not six reductions.
  Spread<0> box;
  Kokkos::parallel_reduce(
      "hayate::gravity::tree_box", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(const int i, Spread<0>& t) {
        for (int d = 0; d < 3; ++d) {
          t.lo[d] = x(i, d) < t.lo[d] ? x(i, d) : t.lo[d];
          t.hi[d] = x(i, d) > t.hi[d] ? x(i, d) : t.hi[d];
        }
      },
      box);
  const double* lo = box.lo;
  const double* hi = box.hi;
  double h = 0;
  for (int d = 0; d < 3; ++d) {
    centre_[d] = 0.5 * (lo[d] + hi[d]);
    h = std::max(h, 0.5 * (hi[d] - lo[d]));
  }
  half_ = h * (1.0 + 1e-6) + 1e-300;
}

template <class Space>
void Tree<Space>::build_levels(const Kokkos::View<std::uint64_t*, Mem>& codes) {
  const int B = bits_, leaf = leaf_size, n = n_;
  grow_keep(all_begin_, "hayate::gravity::tree_ab", 1);
  grow_keep(all_end_, "hayate::gravity::tree_ae", 1);
  {
    const auto ab = all_begin_, ae = all_end_;
    Kokkos::parallel_for(
        "hayate::gravity::tree_root", Kokkos::RangePolicy<Space>(space_, 0, 1),
        KOKKOS_LAMBDA(const int) {
          ab(0) = 0;
          ae(0) = n;
        });
  }
  std::vector<int> counts{1};
  int base = 0;
  for (int l = 0;; ++l) {
    const int count = counts[l], next_base = base + count;
    const int shift = 3 * (B - 1 - l);
    const bool can_split = l < B;
    // Index of the first particle in [lo, hi) whose digit at this level is >= d.
    auto first_digit = KOKKOS_LAMBDA(int lo, int hi, std::uint64_t d) {
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (((codes(mid) >> shift) & 7) < d)
          lo = mid + 1;
        else
          hi = mid;
      }
      return lo;
    };
    // Where each node's octants 1-7 begin, one binary search per thread: the seven
    // searches of a node side by side instead of one after the other, since the top levels'
    // few nodes over millions of particles make this latency-bound.
    grow(split_, "hayate::gravity::tree_split", std::size_t(count));
    grow_keep(child_first_store_, "hayate::gravity::tree_child_first", std::size_t(next_base));
    grow_keep(child_count_store_, "hayate::gravity::tree_child_count", std::size_t(next_base));
    const auto split = split_;
    const auto ab = all_begin_, ae = all_end_;
    const auto cf = child_first_store_, cc = child_count_store_;
    if (can_split)
      Kokkos::parallel_for(
          "hayate::gravity::tree_split_octants", Kokkos::RangePolicy<Space>(space_, 0, 7 * count),
          KOKKOS_LAMBDA(const int t) {
            const int node = t % count, d = t / count + 1;
            const int b = ab(base + node), e = ae(base + node);
            if (e - b > leaf) split(node, d - 1) = first_digit(b, e, std::uint64_t(d));
          });
    int total = 0;
    Kokkos::parallel_scan(
        "hayate::gravity::tree_count_children", Kokkos::RangePolicy<Space>(space_, 0, count),
        KOKKOS_LAMBDA(const int node, int& acc, const bool last) {
          const int b = ab(base + node), e = ae(base + node);
          int nc = 0;
          if (can_split && e - b > leaf) {
            int prev = b;
            for (int d = 1; d <= 8; ++d) {
              const int at = d == 8 ? e : split(node, d - 1);
              nc += at > prev;
              prev = at;
            }
          }
          if (last) {
            cf(base + node) = next_base + acc;
            cc(base + node) = nc;
          }
          acc += nc;
        },
        total);
    if (total == 0) break;
    grow_keep(all_begin_, "hayate::gravity::tree_ab", std::size_t(next_base) + total);
    grow_keep(all_end_, "hayate::gravity::tree_ae", std::size_t(next_base) + total);
    const auto nb = all_begin_, ne = all_end_;
    Kokkos::parallel_for(
        "hayate::gravity::tree_children", Kokkos::RangePolicy<Space>(space_, 0, count),
        KOKKOS_LAMBDA(const int node) {
          if (cc(base + node) == 0) return;
          const int e = ne(base + node);
          int prev = nb(base + node), slot = cf(base + node);
          for (int d = 1; d <= 8; ++d) {
            const int at = d == 8 ? e : split(node, d - 1);
            if (at > prev) {
              nb(slot) = prev;
              ne(slot) = at;
              ++slot;
            }
            prev = at;
          }
        });
    counts.push_back(total);
    base = next_base;
  }
  levels_ = int(counts.size());
  level_base_.assign(1, 0);
  for (int c : counts) level_base_.push_back(level_base_.back() + c);
  std::int64_t total = 0;
  for (int c : counts) total += c;
  if (total >= (std::int64_t(1) << 28))
    throw std::runtime_error("tree: more than 2^28 nodes; raise tree.leaf_size");
  n_nodes_ = int(total);
  const int nn = n_nodes_;

  // Depth-first order = nodes sorted by (first particle, level); the values carry the
  // breadth-first number, and a node's children are consecutive there (child_first/count).
  grow(node_key_, "hayate::gravity::tree_node_keys", n_nodes_);
  grow(src_of_, "hayate::gravity::tree_node_src", n_nodes_);
  const auto key = node_key_;
  const auto src_of = src_of_, all_begin = all_begin_, all_end = all_end_;
  LevelBases bases;
  for (int l = 0; l <= levels_; ++l) bases.at[l] = level_base_[l];
  const int levels = levels_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_node_keys", Kokkos::RangePolicy<Space>(space_, 0, nn),
      KOKKOS_LAMBDA(const int o) {
        int l = 0;
        while (l + 1 < levels && bases.at[l + 1] <= o) ++l;
        key(o) = (std::uint64_t(all_begin(o)) << 5) | std::uint64_t(l);
        src_of(o) = o;
      });
  int index_bits = 1;
  while ((std::int64_t(1) << index_bits) <= n_) ++index_bits;
  core::sort_pairs(space_, key, src_of, n_nodes_, index_bits + 5, sort_buffers_);
  allocate_nodes(n_nodes_);
  const auto dfs_of = dfs_of_, bfs_of = bfs_of_;
  const auto begin = begin_, end = end_, skip = skip_, level = level_;
  const auto size = size_;
  const double root_side = 2.0 * half_;
  Kokkos::parallel_for(
      "hayate::gravity::tree_preorder", Kokkos::RangePolicy<Space>(space_, 0, nn),
      KOKKOS_LAMBDA(const int k) {
        const int src = src_of(k);
        const int l = int(key(k) & 31);
        dfs_of(src) = k;
        bfs_of(k) = src;
        begin(k) = int(key(k) >> 5);
        end(k) = all_end(src);
        level(k) = l;
        size(src, 1) = cell_side(root_side, l);
      });
  Kokkos::parallel_for(
      "hayate::gravity::tree_skip", Kokkos::RangePolicy<Space>(space_, 0, nn),
      KOKKOS_LAMBDA(const int k) {
        // First node after k whose range starts at or after k's end.
        int lo = k + 1, hi = nn;
        const int stop = end(k);
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (begin(mid) < stop)
            lo = mid + 1;
          else
            hi = mid;
        }
        skip(k) = lo;
      });
}

// Compiled once, in gravity_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_TREE_KERNELS(EXTERN, S)      \
  EXTERN template class Tree<S>;                    \
  EXTERN template void Tree<S>::level_moments<0>(); \
  EXTERN template void Tree<S>::level_moments<6>();
#ifndef HAYATE_GRAVITY_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_TREE_KERNELS, extern)
#endif

}  // namespace hayate::gravity
