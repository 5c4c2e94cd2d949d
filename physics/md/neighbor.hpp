#pragma once
// Cell binning and Verlet neighbor lists. Atoms are binned into cells no smaller than the
// neighbor cutoff (cutoff + skin); the list of atom i holds every j within that distance (full),
// or only j > i (half, for Newton's third law). Three storage layouts share one search loop:
// CSR (offsets + flat), padded row-major (i, k) and padded transposed (k fastest over i), the last
// so that consecutive GPU threads read their k-th neighbors from consecutive addresses.
#include "exec/exec_traits.hpp"
#include "exec/instantiate.hpp"

#include <Kokkos_Core.hpp>

#include <type_traits>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::md {

// Per-atom 3-vectors (positions, velocities, forces): x(i, d).
using VecLayout = Kokkos::LayoutLeft;
template <class Real, class Mem>
using VecView = Kokkos::View<Real* [3], VecLayout, Mem>;
template <class Real, class Mem>
using ConstVecView = Kokkos::View<const Real* [3], VecLayout, Mem>;

enum class ListKind { Full, Half };

// Squared neighbor cutoffs, (interaction cutoff + skin)^2 per type pair: all the neighbor search
// knows of the potential. One type keeps its value by value.
template <class Real, class Mem>
struct NeighborCutoffs {
  int ntypes = 1;
  Real one = 0;
  Kokkos::View<const Real**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::RandomAccess>>
      sq;

  // `cutoff`: ntypes x ntypes interaction cutoffs, row-major.
  static NeighborCutoffs make(const std::vector<double>& cutoff, int ntypes, double skin) {
    NeighborCutoffs out;
    out.ntypes = ntypes;
    Kokkos::View<Real**, Kokkos::LayoutRight, Mem> sq("hayate::md::neigh_cutsq", ntypes, ntypes);
    auto h = Kokkos::create_mirror_view(sq);
    for (int a = 0; a < ntypes; ++a)
      for (int b = 0; b < ntypes; ++b) {
        const double c = cutoff[a * ntypes + b] + skin;
        h(a, b) = Real(c * c);
      }
    Kokkos::deep_copy(sq, h);
    out.one = h(0, 0);
    out.sq = sq;
    return out;
  }
};
enum class Layout { Csr, Padded, Transposed };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Csr:
      return "csr";
    case Layout::Padded:
      return "padded";
    case Layout::Transposed:
      return "transposed";
  }
  return "?";
}

// Orthogonal periodic box [0, L) in each direction.
template <class Real>
struct Box {
  Real length[3] = {0, 0, 0};

  // Minimum-image displacement; valid while |d| < 1.5 L, i.e. atoms stay within half a box of
  // the primary cell between rebuilds (they move at most a fraction of the skin).
  KOKKOS_INLINE_FUNCTION Real image(Real d, int dim) const {
    const Real l = length[dim];
    if (d > Real(0.5) * l) return d - l;
    if (d < Real(-0.5) * l) return d + l;
    return d;
  }
  // The image image() picks, as a shift in box lengths: image(d) = d + shift(d) L.
  KOKKOS_INLINE_FUNCTION int shift(Real d, int dim) const {
    const Real l = length[dim];
    return d > Real(0.5) * l ? -1 : (d < Real(-0.5) * l ? 1 : 0);
  }
};

// A periodic image of atom `owner` displaced by (s_x, s_y, s_z) box lengths, s_d in {-1, 0, 1}.
// code = sum_d (s_d + 1) 3^d; 13 is the atom itself.
KOKKOS_INLINE_FUNCTION int image_code(int sx, int sy, int sz) {
  return (sx + 1) + 3 * (sy + 1) + 9 * (sz + 1);
}
KOKKOS_INLINE_FUNCTION int image_shift(int code, int dim) {
  return (dim == 0 ? code : dim == 1 ? code / 3 : code / 9) % 3 - 1;
}

// Per dimension the image shift an atom needs besides 0: +1 within `cut` of the lower face,
// -1 within `cut` of the upper one.
template <class Real, class X>
struct FaceShift {
  X x;
  Real cut[3], length[3];
  KOKKOS_INLINE_FUNCTION int operator()(int i, int d) const {
    const Real p = x(i, d);
    return p < cut[d] ? 1 : (p >= length[d] - cut[d] ? -1 : 0);
  }
};

// Periodic images ("ghosts") of the atoms within `cut` of a face, for the packed-position force
// path: the list then points at the image, and the pair loop needs no minimum-image arithmetic.
// Ghosts of atom i are g = start(i) .. start(i + 1) - 1, stored after the atoms (index
// natoms + g). A box of at least 2 cut per side gives at most 7 per atom.
template <class Space>
struct GhostImages {
  using Mem = typename Space::memory_space;
  int natoms = 0, count = 0;
  // Axes whose faces need images: all on one rank; on several (md/domain.hpp) not the cut ones,
  // whose neighbours' atoms come from the other ranks as ghosts.
  bool images[3] = {true, true, true};
  Kokkos::View<int*, Mem> start;  // natoms + 1
  Kokkos::View<int*, Mem> owner, code;

  template <class Real, class X>
  void build(const Space& space, const X& x, const Box<Real>& box, double cut);

  // Index of atom j's image with the given code (13: j itself), among atoms then ghosts.
  struct Lookup {
    Kokkos::View<const int*, Mem> start, code;
    int natoms;
    KOKKOS_INLINE_FUNCTION int operator()(int j, int c) const {
      if (c == 13) return j;
      for (int g = start(j); g < start(j + 1); ++g)
        if (code(g) == c) return natoms + g;
      return -1;  // unreachable while the box is at least 2 cut wide
    }
  };
  Lookup lookup() const { return Lookup{start, code, natoms}; }
};

template <class Space>
template <class Real, class X>
void GhostImages<Space>::build(const Space& space, const X& x, const Box<Real>& box, double cut) {
  natoms = static_cast<int>(x.extent(0));
  if (int(start.extent(0)) != natoms + 1)
    start = Kokkos::View<int*, Mem>("hayate::md::ghost_start", natoms + 1);
  // A relative margin makes rounding in the pair distance harmless (a spare ghost costs
  // nothing); at most half the box keeps the two faces' ranges apart.
  FaceShift<Real, X> options{x, {}, {}};
  for (int d = 0; d < 3; ++d) {
    const double m = cut * (1 + 1e-5), h = 0.5 * double(box.length[d]);
    // No position lies below -1e30 or above L + 1e30: a direction without images.
    options.cut[d] = images[d] ? Real(m < h ? m : h) : Real(-1e30);
    options.length[d] = box.length[d];
  }
  const auto start_ = start;
  const int n = natoms;
  int total = 0;
  Kokkos::parallel_scan(
      "hayate::md::ghost_count", Kokkos::RangePolicy<Space>(space, 0, n + 1),
      KOKKOS_LAMBDA(int i, int& sum, bool final) {
        if (final) start_(i) = sum;
        if (i < n)
          sum += (options(i, 0) != 0 ? 2 : 1) * (options(i, 1) != 0 ? 2 : 1) *
                     (options(i, 2) != 0 ? 2 : 1) -
                 1;
      },
      total);
  count = total;
  if (int(owner.extent(0)) < count) {
    owner = Kokkos::View<int*, Mem>("hayate::md::ghost_owner", count + count / 5 + 1);
    code = Kokkos::View<int*, Mem>("hayate::md::ghost_code", count + count / 5 + 1);
  }
  const auto owner_ = owner, code_ = code;
  Kokkos::parallel_for(
      "hayate::md::ghost_fill", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(int i) {
        const int o[3] = {options(i, 0), options(i, 1), options(i, 2)};
        int g = start_(i);
        for (int a = 0; a < 2; ++a)
          for (int bb = 0; bb < 2; ++bb)
            for (int cc = 0; cc < 2; ++cc) {
              if ((a && !o[0]) || (bb && !o[1]) || (cc && !o[2]) || !(a || bb || cc)) continue;
              owner_(g) = i;
              code_(g) = image_code(a * o[0], bb * o[1], cc * o[2]);
              ++g;
            }
      });
}

// Atoms of each cell, contiguous. After a reorder the atoms are stored in cell order, so
// `atoms` is the identity and cell neighbors are memory neighbors. Cells are at least
// cutneigh / reach wide, so the search visits (2 reach + 1)^3 cells: with reach 2 that is
// 125 cells of 1/8 the volume, about 40% fewer distance checks than 27 cells of full width.
template <class Space>
struct CellBins {
  using Mem = typename Space::memory_space;
  int n[3] = {1, 1, 1};
  int reach = 2;
  // Where cell 0 starts: 0 on one rank; on several, the corner of the rank's neighbor box
  // (md/domain.hpp), whose length the Box passed to bin() gives.
  double origin[3] = {0, 0, 0};
  Kokkos::View<int*, Mem> cell_of;  // per atom
  Kokkos::View<int*, Mem> start;    // cells + 1
  Kokkos::View<int*, Mem> atoms;    // atom indices sorted by (cell, index)
  Kokkos::View<int*, Mem> fill;
  bool ascending = false;  // atoms(s) ascends over all slots: atoms are stored in cell order

  int cells() const { return n[0] * n[1] * n[2]; }

  // Bins atoms deterministically: the order inside each cell is by index, whatever the order
  // in which threads claimed the slots, so lists and force sums do not depend on scheduling.
  template <class Real, class X>
  void bin(const Space& space, const X& x, const Box<Real>& box, double cutneigh);
};

template <class Space>
template <class Real, class X>
void CellBins<Space>::bin(const Space& space, const X& x, const Box<Real>& box, double cutneigh) {
  const int natoms = static_cast<int>(x.extent(0));
  for (int d = 0; d < 3; ++d) {
    const int c = static_cast<int>(double(box.length[d]) * reach / cutneigh);
    n[d] = c < 1 ? 1 : c;
  }
  const int ncells = cells();
  if (int(cell_of.extent(0)) < natoms) {
    cell_of = Kokkos::View<int*, Mem>("hayate::md::cell_of", natoms);
    atoms = Kokkos::View<int*, Mem>("hayate::md::cell_atoms", natoms);
  }
  if (int(start.extent(0)) != ncells + 1) {
    start = Kokkos::View<int*, Mem>("hayate::md::cell_start", ncells + 1);
    fill = Kokkos::View<int*, Mem>("hayate::md::cell_fill", ncells);
  }
  Kokkos::deep_copy(space, fill, 0);
  const auto cell_of_ = cell_of, start_ = start, atoms_ = atoms, fill_ = fill;
  const int nx = n[0], ny = n[1], nz = n[2];
  const Real sx = Real(nx) / box.length[0], sy = Real(ny) / box.length[1],
             sz = Real(nz) / box.length[2];
  const Real ox = Real(origin[0]), oy = Real(origin[1]), oz = Real(origin[2]);
  Kokkos::parallel_for(
      "hayate::md::bin_count", Kokkos::RangePolicy<Space>(space, 0, natoms), KOKKOS_LAMBDA(int i) {
        // x - 0 is x: one rank bins as before, to the bit.
        int cx = int((x(i, 0) - ox) * sx), cy = int((x(i, 1) - oy) * sy),
            cz = int((x(i, 2) - oz) * sz);
        cx = cx < 0 ? 0 : (cx >= nx ? nx - 1 : cx);
        cy = cy < 0 ? 0 : (cy >= ny ? ny - 1 : cy);
        cz = cz < 0 ? 0 : (cz >= nz ? nz - 1 : cz);
        const int c = (cz * ny + cy) * nx + cx;
        cell_of_(i) = c;
        Kokkos::atomic_fetch_add(&fill_(c), 1);
      });
  Kokkos::parallel_scan(
      "hayate::md::bin_scan", Kokkos::RangePolicy<Space>(space, 0, ncells + 1),
      KOKKOS_LAMBDA(int c, int& sum, bool final) {
        if (final) start_(c) = sum;
        if (c < ncells) sum += fill_(c);
      });
  Kokkos::deep_copy(space, fill, 0);
  Kokkos::parallel_for(
      "hayate::md::bin_fill", Kokkos::RangePolicy<Space>(space, 0, natoms), KOKKOS_LAMBDA(int i) {
        const int c = cell_of_(i);
        atoms_(start_(c) + Kokkos::atomic_fetch_add(&fill_(c), 1)) = i;
      });
  Kokkos::parallel_for(
      "hayate::md::bin_sort", Kokkos::RangePolicy<Space>(space, 0, ncells), KOKKOS_LAMBDA(int c) {
        const int b = start_(c), e = start_(c + 1);
        for (int s = b + 1; s < e; ++s) {
          const int a = atoms_(s);
          int t = s - 1;
          while (t >= b && atoms_(t) > a) {
            atoms_(t + 1) = atoms_(t);
            --t;
          }
          atoms_(t + 1) = a;
        }
      });
  int descents = 0;
  Kokkos::parallel_reduce(
      "hayate::md::bin_order", Kokkos::RangePolicy<Space>(space, 0, natoms > 0 ? natoms - 1 : 0),
      KOKKOS_LAMBDA(int s, int& v) { v += atoms_(s + 1) <= atoms_(s) ? 1 : 0; }, descents);
  ascending = descents == 0;
}

// Read access to one atom's neighbors, the same interface for every layout.
template <class Mem>
struct CsrRows {
  Kokkos::View<const int*, Mem> offsets, flat;
  struct Row {
    const int* p;
    int n;
    KOKKOS_INLINE_FUNCTION int size() const { return n; }
    KOKKOS_INLINE_FUNCTION int operator()(int k) const { return p[k]; }
  };
  KOKKOS_INLINE_FUNCTION Row row(int i) const {
    const int b = offsets(i);
    return Row{flat.data() + b, offsets(i + 1) - b};
  }
};

template <class Mem, class L>
struct PaddedRows {
  Kokkos::View<const int*, Mem> count;
  Kokkos::View<const int**, L, Mem> nb;
  struct Row {
    Kokkos::View<const int**, L, Mem> nb;
    int i, n;
    KOKKOS_INLINE_FUNCTION int size() const { return n; }
    KOKKOS_INLINE_FUNCTION int operator()(int k) const { return nb(i, k); }
  };
  KOKKOS_INLINE_FUNCTION Row row(int i) const { return Row{nb, i, count(i)}; }
};

// Where the search puts what it finds. spare_slot: a store at the current count is harmless
// (nothing valid lives there yet, or the sink only counts).
template <class Mem>
struct CountSink {
  static constexpr bool spare_slot = true;
  Kokkos::View<int*, Mem> count;
  KOKKOS_INLINE_FUNCTION void store(int, int, int) const {}
  KOKKOS_INLINE_FUNCTION void finish(int i, int k) const { count(i) = k; }
};
template <class Mem>
struct CsrSink {
  static constexpr bool spare_slot = false;  // slot count(i) is the next atom's first
  Kokkos::View<const int*, Mem> offsets;
  Kokkos::View<int*, Mem> flat;
  KOKKOS_INLINE_FUNCTION void store(int i, int k, int j) const { flat(offsets(i) + k) = j; }
  KOKKOS_INLINE_FUNCTION void finish(int, int) const {}
};
template <class Mem, class L>
struct PaddedSink {
  static constexpr bool spare_slot = true;
  Kokkos::View<int*, Mem> count;
  Kokkos::View<int**, L, Mem> nb;
  int capacity;
  // Past the capacity only the count grows; the caller sees the overflow and rebuilds.
  KOKKOS_INLINE_FUNCTION void store(int i, int k, int j) const {
    if (k < capacity) nb(i, k) = j;
  }
  KOKKOS_INLINE_FUNCTION void finish(int i, int k) const { count(i) = k; }
};

// The one neighbor search loop: the stencil cells around atom i, minimum image, per type-pair
// neighbor cutoff. Newton: a half list with other ranks' atoms (see newton_from), a kernel of
// its own so that one rank's kernels stay as they were.
template <class Space, class Real, class Sink, bool Newton = false>
struct NeighborSearch {
  using Mem = typename Space::memory_space;
  // CPUs store every candidate and advance past the accepted ones (see below).
  static constexpr bool branchless_store = !core::ExecTraits<Space>::is_gpu;
  ConstVecView<Real, Mem> x;
  Kokkos::View<const int*, Mem> type;
  Kokkos::View<const int*, Mem> cell_of, start, atoms;
  int n[3];
  int reach;
  Box<Real> box;
  NeighborCutoffs<Real, Mem> cutoffs;
  bool half;
  bool ghosts;     // store j's periodic image instead of j
  bool ascending;  // atoms(s) ascends over all slots (atoms stored in cell order)
  typename GhostImages<Space>::Lookup image_of;
  Sink sink;

  // c in (-n, 2n): a compare instead of an integer division, 125 times per atom.
  KOKKOS_INLINE_FUNCTION static int wrap_cell(int c, int n) {
    return c < 0 ? c + n : (c >= n ? c - n : c);
  }

  // The stencil fits in the box in every direction (each cell visited once, one image shift
  // per stencil cell); uniform over the launch.
  bool all_exact() const {
    for (int d = 0; d < 3; ++d)
      if (n[d] < 2 * reach + 1) return false;
    return true;
  }

  // The loop below with the launch-uniform cases as template flags, so that the candidate
  // loop carries no tests of them (on the GPU they cost issue slots and registers). Exact:
  // all_exact(); OneType: one atom type (else read at run time). Every launch takes one path,
  // so warps never diverge over the choice.
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    const bool one_type = cutoffs.ntypes == 1;
    if (exact_all) {
      if (one_type)
        search<true, true>(i);
      else
        search<true, false>(i);
    } else {
      search<false, false>(i);
    }
  }

  bool exact_all = false;  // set by the builder from all_exact()
  // Newton (half lists with other ranks' atoms; candidates newton_from.. are ghosts): a pair of
  // atoms owned by two ranks is listed by one of them, so each pair is computed once over all ranks
  // (Newton's third law across ranks; the ghost's share of the force goes back to its owner):
  // by the owner of the lower global id when the ids' sum is even, of the higher when odd.
  // Ids, unlike positions, compare the same on both ranks (a ghost's shifted position is
  // rounded, so a coordinate rule could list a pair twice or never); the parity splits the
  // pairs evenly between the ranks even where ids follow position (lattice order).
  int newton_from = 0;
  Kokkos::View<const std::int64_t*, Mem> id;

  KOKKOS_INLINE_FUNCTION static bool newton_keeps(std::int64_t mine, std::int64_t ghost) {
    return (mine < ghost) != (((mine ^ ghost) & 1) != 0);
  }

  template <bool Exact, bool OneType>
  KOKKOS_INLINE_FUNCTION void search(int i) const {
    const int c = cell_of(i);
    const int ci[3] = {c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])};
    // Offsets -reach..reach, or each residue once where the box has fewer cells than that
    // (minimum image then picks the near copy).
    int lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      const int half_cells = (n[d] - 1) / 2;
      lo[d] = -(reach < half_cells ? reach : half_cells);
      const int size = 2 * reach + 1 < n[d] ? 2 * reach + 1 : n[d];
      hi[d] = lo[d] + size - 1;
    }
    const Real xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
    // One type (in.lj): the cutoff is loop-invariant and type(j) is never read.
    const bool one_type = OneType || cutoffs.ntypes == 1;
    const int ti = one_type ? 0 : type(i);
    const Real cut_one = cutoffs.one;
    const std::int64_t id_i = Newton ? id(i) : 0;
    int k = 0;
    // Where the full stencil fits in the box, a stencil cell's periodic image is the same for
    // all its atoms: the shift s (image j at x_j - s L) comes from the cell offset, without a
    // minimum-image test per pair. In smaller boxes each cell is visited once and the test
    // picks the near copy.
    bool exact[3];
    for (int d = 0; d < 3; ++d) exact[d] = Exact || n[d] >= 2 * reach + 1;
    // The cells of a stencil row with one image shift are consecutive in `atoms`, so they are
    // scanned as one slot range (up to 25 ranges per atom instead of 125 cells). A half list
    // merges them only where slots ascend across cells (atoms stored in cell order), so that
    // the j <= i prefix is still one skip; with ghosts (not in cell order) it merges and
    // examines every candidate, as a full list does, keeping owned j > i.
    const bool merge_x = exact[0] && (!half || ascending || Newton);
    for (int oz = lo[2]; oz <= hi[2]; ++oz) {
      const int rz = ci[2] + oz, cz = wrap_cell(rz, n[2]);
      const int sz = rz < 0 ? -1 : (rz >= n[2] ? 1 : 0);
      for (int oy = lo[1]; oy <= hi[1]; ++oy) {
        const int ry = ci[1] + oy, cy = wrap_cell(ry, n[1]);
        const int sy = ry < 0 ? -1 : (ry >= n[1] ? 1 : 0);
        const int row_cells = (cz * n[1] + cy) * n[0];
        for (int ox = lo[0]; ox <= hi[0];) {
          const int rx = ci[0] + ox, cx = wrap_cell(rx, n[0]);
          const int sx = rx < 0 ? -1 : (rx >= n[0] ? 1 : 0);
          // The run ends at the stencil's end or at the last cell before the wrap.
          int last = ox;
          if (merge_x) {
            const int limit = sx < 0 ? -1 - ci[0] : (sx == 0 ? n[0] - 1 - ci[0] : hi[0]);
            last = limit < hi[0] ? limit : hi[0];
          }
          const int e = start(row_cells + cx + (last - ox) + 1);
          int s = start(row_cells + cx);
          ox = last + 1;
          // Indices ascend within a cell (and a merged run): a half list skips runs holding
          // only j <= i, and the j <= i prefix of the others, unexamined.
          if (half && !Newton) {
            if (e == s || (ascending ? e - 1 : atoms(e - 1)) <= i) continue;
            if (ascending)
              s = s > i ? s : i + 1;
            else
              while (atoms(s) <= i) ++s;
          }
          // d + (-s) L is what Box::image gives for these pairs, to the bit.
          const Real shx = Real(-sx) * box.length[0], shy = Real(-sy) * box.length[1],
                     shz = Real(-sz) * box.length[2];
          // Entries are j itself unless ghosts are stored and the run is a periodic image.
          const bool plain =
              !ghosts || (exact[0] && exact[1] && exact[2] && sx == 0 && sy == 0 && sz == 0);
          // With one image per run, the stored image index needs only the run's code.
          const int run_code = image_code(sx, sy, sz);
          for (; s < e; ++s) {
            // A strictly ascending permutation of 0..n-1 is the identity: no index load.
            const int j = ascending ? s : atoms(s);
            const Real ddx = xi - x(j, 0), ddy = yi - x(j, 1), ddz = zi - x(j, 2);
            const Real dx = exact[0] ? ddx + shx : box.image(ddx, 0);
            const Real dy = exact[1] ? ddy + shy : box.image(ddy, 1);
            const Real dz = exact[2] ? ddz + shz : box.image(ddz, 2);
            const Real cut = one_type ? cut_one : cutoffs.sq(ti, type(j));
            const bool in =
                (dx * dx + dy * dy + dz * dz < cut) &
                (Newton ? (j < newton_from ? j > i : newton_keeps(id_i, id(j))) : j != i);
            if (Sink::spare_slot && branchless_store && plain) {
              // CPUs: store every candidate and advance past the accepted ones; a data-dependent
              // branch here mispredicts on about a quarter of the candidates.
              sink.store(i, k, j);
              k += in ? 1 : 0;
            } else if (in) {
              if (plain) {
                sink.store(i, k, j);
              } else if (Exact) {
                sink.store(i, k, image_of(j, run_code));
              } else {
                const int gx = exact[0] ? sx : -box.shift(ddx, 0);
                const int gy = exact[1] ? sy : -box.shift(ddy, 1);
                const int gz = exact[2] ? sz : -box.shift(ddz, 2);
                sink.store(i, k, image_of(j, image_code(gx, gy, gz)));
              }
              ++k;
            }
          }
        }
      }
    }
    sink.finish(i, k);
  }
};

// A Verlet list in one of the three layouts. Capacity only grows; a build that finds more
// neighbors than fit grows the storage and searches again, so nothing is ever dropped.
template <class Space>
struct NeighborList {
  using Mem = typename Space::memory_space;
  Layout layout = Layout::Csr;
  ListKind kind = ListKind::Full;
  int natoms = 0;
  int capacity = 0;        // padded: neighbors per atom; CSR: total entries
  int max_neighbors = 0;   // of the last build
  std::int64_t total = 0;  // entries of the last build
  int builds = 0, retries = 0;
  Kokkos::View<int*, Mem> count, offsets, flat;
  Kokkos::View<int**, Kokkos::LayoutRight, Mem> padded;
  Kokkos::View<int**, Kokkos::LayoutLeft, Mem> transposed;
  // With ghosts, entries >= ghosts.natoms name periodic images (entry - ghosts.natoms).
  bool use_ghosts = false;
  GhostImages<Space> ghosts;
  // Half lists on several ranks: the global ids of the atoms and ghosts (see
  // NeighborSearch::newton_from); unset on one rank.
  Kokkos::View<const std::int64_t*, Mem> ids;

  CsrRows<Mem> csr_rows() const { return {offsets, flat}; }
  PaddedRows<Mem, Kokkos::LayoutRight> padded_rows() const { return {count, padded}; }
  PaddedRows<Mem, Kokkos::LayoutLeft> transposed_rows() const { return {count, transposed}; }

  // Calls f(rows) with the accessor of the active layout.
  template <class F>
  void visit(F&& f) const {
    switch (layout) {
      case Layout::Csr:
        f(csr_rows());
        break;
      case Layout::Padded:
        f(padded_rows());
        break;
      case Layout::Transposed:
        f(transposed_rows());
        break;
    }
  }

  // Neighbors of atom i on the host (images mapped to their atom), for tests and diagnostics.
  std::vector<std::vector<int>> to_host() const {
    std::vector<std::vector<int>> raw = entries_to_host();
    if (!use_ghosts) return raw;
    auto owner = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ghosts.owner);
    for (auto& row : raw)
      for (int& j : row)
        if (j >= ghosts.natoms) j = owner(j - ghosts.natoms);
    return raw;
  }

  // The stored entries, ghost indices included.
  std::vector<std::vector<int>> entries_to_host() const {
    std::vector<std::vector<int>> out(natoms);
    auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), count);
    if (layout == Layout::Csr) {
      auto o = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), offsets);
      auto fl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flat);
      for (int i = 0; i < natoms; ++i)
        for (int k = o(i); k < o(i + 1); ++k) out[i].push_back(fl(k));
    } else if (layout == Layout::Padded) {
      auto p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), padded);
      for (int i = 0; i < natoms; ++i)
        for (int k = 0; k < c(i); ++k) out[i].push_back(p(i, k));
    } else {
      auto p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), transposed);
      for (int i = 0; i < natoms; ++i)
        for (int k = 0; k < c(i); ++k) out[i].push_back(p(i, k));
    }
    return out;
  }

  // `cut`: the largest neighbor cutoff, the reach of the ghost images. Rows for the first
  // `rows` atoms of x (the rank's own; the rest are ghosts from other ranks), neighbors among
  // all of them; rows < 0: every atom.
  template <class Real, class X, class T>
  void build(const Space& space, const X& x, const T& type, const CellBins<Space>& bins,
             const Box<Real>& box, const NeighborCutoffs<Real, Mem>& cutoffs, double cut,
             int rows = -1);

  int max_count(const Space& space) const;
};

template <class Space>
template <class Real, class X, class T>
void NeighborList<Space>::build(const Space& space, const X& x, const T& type,
                                const CellBins<Space>& bins, const Box<Real>& box,
                                const NeighborCutoffs<Real, Mem>& cutoffs, double cut, int rows) {
  const int candidates = static_cast<int>(x.extent(0));
  natoms = rows < 0 ? candidates : rows;
  ++builds;
  if (use_ghosts) ghosts.build(space, x, box, cut);
  if (int(count.extent(0)) != natoms)
    count = Kokkos::View<int*, Mem>("hayate::md::neigh_count", natoms);
  const bool half = kind == ListKind::Half;
  // A half list with other ranks' atoms among the candidates lists pairs across ranks once.
  const bool newton = half && natoms < candidates;
  if (newton && int(ids.extent(0)) < candidates)
    throw std::logic_error("md: a half list with other ranks' atoms needs their ids");
  auto launch = [&](auto sink, auto newton_flag) {
    using Sink = decltype(sink);
    NeighborSearch<Space, Real, Sink, decltype(newton_flag)::value> functor{
        x,
        type,
        bins.cell_of,
        bins.start,
        bins.atoms,
        {bins.n[0], bins.n[1], bins.n[2]},
        bins.reach,
        box,
        cutoffs,
        half,
        use_ghosts,
        bins.ascending,
        ghosts.lookup(),
        sink};
    functor.exact_all = functor.all_exact();
    functor.newton_from = natoms;
    if (newton) functor.id = ids;
    Kokkos::parallel_for("hayate::md::neigh_build", Kokkos::RangePolicy<Space>(space, 0, natoms),
                         functor);
  };
  auto search = [&](auto sink) {
    if (newton)
      launch(sink, std::true_type{});
    else
      launch(sink, std::false_type{});
  };
  if (layout == Layout::Csr) {
    search(CountSink<Mem>{count});
    if (int(offsets.extent(0)) != natoms + 1)
      offsets = Kokkos::View<int*, Mem>("hayate::md::neigh_offsets", natoms + 1);
    const auto count_ = count, offsets_ = offsets;
    const int n = natoms;
    std::int64_t sum = 0;
    Kokkos::parallel_scan(
        "hayate::md::neigh_scan", Kokkos::RangePolicy<Space>(space, 0, n + 1),
        KOKKOS_LAMBDA(int i, std::int64_t& s, bool final) {
          if (final) offsets_(i) = int(s);
          if (i < n) s += count_(i);
        },
        sum);
    total = sum;
    if (sum > std::int64_t(2147483647))
      throw std::runtime_error("neighbor list exceeds 2^31 entries; use a padded layout");
    if (sum > capacity || !flat.is_allocated()) {
      capacity = static_cast<int>(sum + sum / 5 + 1);
      flat = Kokkos::View<int*, Mem>(
          Kokkos::view_alloc(std::string("hayate::md::neigh_flat"), Kokkos::WithoutInitializing),
          capacity);
    }
    search(CsrSink<Mem>{offsets, flat});
    max_neighbors = max_count(space);
    return;
  }
  if (capacity < 1) capacity = 64;
  for (;;) {
    if (layout == Layout::Padded) {
      if (int(padded.extent(0)) != natoms || int(padded.extent(1)) != capacity)
        padded = Kokkos::View<int**, Kokkos::LayoutRight, Mem>(
            Kokkos::view_alloc(std::string("hayate::md::neigh_padded"),
                               Kokkos::WithoutInitializing),
            natoms, capacity);
      search(PaddedSink<Mem, Kokkos::LayoutRight>{count, padded, capacity});
    } else {
      if (int(transposed.extent(0)) != natoms || int(transposed.extent(1)) != capacity)
        transposed = Kokkos::View<int**, Kokkos::LayoutLeft, Mem>(
            Kokkos::view_alloc(std::string("hayate::md::neigh_transposed"),
                               Kokkos::WithoutInitializing),
            natoms, capacity);
      search(PaddedSink<Mem, Kokkos::LayoutLeft>{count, transposed, capacity});
    }
    max_neighbors = max_count(space);
    if (max_neighbors <= capacity) break;
    capacity = max_neighbors + max_neighbors / 5 + 1;
    ++retries;
  }
  const auto count_ = count;
  std::int64_t sum = 0;
  Kokkos::parallel_reduce(
      "hayate::md::neigh_total", Kokkos::RangePolicy<Space>(space, 0, natoms),
      KOKKOS_LAMBDA(int i, std::int64_t& s) { s += count_(i); }, sum);
  total = sum;
}

template <class Space>
int NeighborList<Space>::max_count(const Space& space) const {
  const auto count_ = count;
  int m = 0;
  Kokkos::parallel_reduce(
      "hayate::md::neigh_max", Kokkos::RangePolicy<Space>(space, 0, natoms),
      KOKKOS_LAMBDA(int i, int& v) { v = count_(i) > v ? count_(i) : v; }, Kokkos::Max<int>(m));
  return m;
}

// The kernels of binning and of the list and ghost builds, for the views MdSystem passes, are
// compiled once (md/shared_kernels.cpp) and declared here for every other translation unit
// (exec/instantiate.hpp says why).
#define HAYATE_MD_NEIGHBOR_KERNELS(EXTERN, S, R)                                           \
  EXTERN template void GhostImages<S>::build<R, ConstVecView<R, S::memory_space>>(         \
      const S&, const ConstVecView<R, S::memory_space>&, const Box<R>&, double);           \
  EXTERN template void CellBins<S>::bin<R, ConstVecView<R, S::memory_space>>(              \
      const S&, const ConstVecView<R, S::memory_space>&, const Box<R>&, double);           \
  EXTERN template void NeighborList<S>::build<R, ConstVecView<R, S::memory_space>,         \
                                              Kokkos::View<const int*, S::memory_space>>(  \
      const S&, const ConstVecView<R, S::memory_space>&,                                   \
      const Kokkos::View<const int*, S::memory_space>&, const CellBins<S>&, const Box<R>&, \
      const NeighborCutoffs<R, S::memory_space>&, double, int);
#define HAYATE_MD_NEIGHBOR_SPACE(EXTERN, S)                       \
  EXTERN template int NeighborList<S>::max_count(const S&) const; \
  HAYATE_MD_NEIGHBOR_KERNELS(EXTERN, S, float)                    \
  HAYATE_MD_NEIGHBOR_KERNELS(EXTERN, S, double)
#ifndef HAYATE_MD_DEFINE_SHARED_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_MD_NEIGHBOR_SPACE, extern)
#endif

}  // namespace hayate::md
