#pragma once
// MD on several ranks, as LAMMPS' `comm brick`: the box is cut into a grid of equal sub-boxes,
// one per rank, the grid chosen for the least sub-box surface. A rank integrates the atoms in
// its sub-box (migrating at each neighbor rebuild those that left it, to whichever rank owns
// their position, so no atom is ever dropped) and holds copies ("ghosts") of the other ranks'
// atoms within cutoff + skin of its sub-box, their positions sent again every step. Ghosts are
// exchanged with the (up to 26) neighbouring sub-boxes directly; an atom that crosses the
// periodic boundary on its way carries the box shift, so a rank's list and pair loop see plain
// displacements. Directions with one rank keep the one-rank periodic treatment (images or the
// minimum image), so one rank runs exactly the code it always ran. Buffers are packed and
// unpacked by kernels on the device and pass through host memory to MPI, or go to it directly
// where it takes GPU memory (Comm::device_memory). The ghosts' positions
// travel while the pair loop runs over the interior atoms, those farther than cutoff + skin from
// every cut face (no ghost in their list rows): start_forward(), the interior forces, then
// finish_forward() and the forces on the border atoms.
#include "config/error.hpp"
#include "exec/exec_traits.hpp"
#include "exec/instantiate.hpp"
#include "neighbor.hpp"
#include "parallel/comm.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace hayate::md {

// The rank grid: p[d] sub-boxes along d; this rank's grid position `me` (x fastest).
struct BrickGrid {
  int p[3] = {1, 1, 1};
  int me[3] = {0, 0, 0};
  double length[3] = {0, 0, 0};  // the whole (periodic) box

  int ranks() const { return p[0] * p[1] * p[2]; }
  bool split(int d) const { return p[d] > 1; }
  // Rank of grid position g, each component wrapped into [0, p).
  int rank_of(const int g[3]) const {
    int w[3];
    for (int d = 0; d < 3; ++d) w[d] = ((g[d] % p[d]) + p[d]) % p[d];
    return (w[2] * p[1] + w[1]) * p[0] + w[0];
  }
  double lo(int d) const { return length[d] * me[d] / p[d]; }
  double hi(int d) const { return length[d] * (me[d] + 1) / p[d]; }

  // The grid of `ranks` sub-boxes with the least total surface (LAMMPS' procs2box) among those
  // whose split directions keep sub-boxes at least `reach` wide (so that ghosts come from the
  // adjacent sub-boxes only); p[0] = 0 when there is none.
  static BrickGrid choose(int ranks, int rank, const double box[3], double reach) {
    BrickGrid best;
    best.p[0] = 0;
    double best_surface = std::numeric_limits<double>::infinity();
    for (int px = 1; px <= ranks; ++px) {
      if (ranks % px) continue;
      for (int py = 1; py <= ranks / px; ++py) {
        if ((ranks / px) % py) continue;
        const int pz = ranks / px / py;
        const int p[3] = {px, py, pz};
        bool fits = true;
        for (int d = 0; d < 3; ++d) fits = fits && (p[d] == 1 || box[d] / p[d] >= reach);
        if (!fits) continue;
        const double surface =
            box[0] * box[1] / (px * py) + box[0] * box[2] / (px * pz) + box[1] * box[2] / (py * pz);
        if (surface < best_surface) {
          best_surface = surface;
          for (int d = 0; d < 3; ++d) best.p[d] = p[d];
        }
      }
    }
    if (best.p[0] == 0) return best;
    for (int d = 0; d < 3; ++d) best.length[d] = box[d];
    best.me[0] = rank % best.p[0];
    best.me[1] = (rank / best.p[0]) % best.p[1];
    best.me[2] = rank / (best.p[0] * best.p[1]);
    return best;
  }
};

// Where a rank bins and searches: the box's lengths (the search's periodic wrap), the corner
// cell 0 starts at, and the axes whose atoms need periodic images (CellBins::origin,
// GhostImages::images).
template <class Real>
struct NeighborBox {
  Box<Real> box;
  double origin[3] = {0, 0, 0};
  bool images[3] = {true, true, true};
};

// Grid position of a coordinate in [0, L) (clamped: rounding at the top face).
KOKKOS_INLINE_FUNCTION int brick_cell(double x, int p, double length) {
  const int c = int(x * p / length);
  return c < 0 ? 0 : (c >= p ? p - 1 : c);
}

// The rank whose sub-box holds position x, wrapped into the box: who owns an atom at set-up.
inline int owner_rank(const BrickGrid& grid, const double x[3]) {
  int g[3];
  for (int d = 0; d < 3; ++d) {
    const double l = grid.length[d];
    const double p = x[d] - l * std::floor(x[d] / l);
    g[d] = brick_cell(p, grid.p[d], l);
  }
  return grid.rank_of(g);
}

// An atom id that two of the ranks' atoms share (the same rank's or two ranks'), or 0 (ids are
// at least 1); every rank gets the same answer. Each rank's sorted ids pass round a ring of the
// ranks, so a rank holds its own and one other rank's at a time.
std::int64_t repeated_atom_id(const core::Comm& comm, std::vector<std::int64_t> ids);

// The atoms a rank owns, as MdSystem stores them.
template <class Real, class Mem>
struct OwnedAtoms {
  VecView<Real, Mem> x, v;
  Kokkos::View<int*, Mem> type;
  Kokkos::View<std::int64_t*, Mem> id;
  Kokkos::View<Real*, Mem> q;
  int n = 0;

  static OwnedAtoms allocate(int n) {
    OwnedAtoms a;
    const auto no_init = [](const char* label) {
      return Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing);
    };
    a.x = VecView<Real, Mem>(no_init("hayate::md::x"), n);
    a.v = VecView<Real, Mem>(no_init("hayate::md::v"), n);
    a.type = Kokkos::View<int*, Mem>(no_init("hayate::md::type"), n);
    a.id = Kokkos::View<std::int64_t*, Mem>(no_init("hayate::md::id"), n);
    a.q = Kokkos::View<Real*, Mem>(no_init("hayate::md::charge"), n);
    a.n = n;
    return a;
  }
};

// What select() and the border test compare a position with along each axis: an atom below
// low[d] or at or above high[d] is within reach of a cut face.
template <class Real>
struct CutFaces {
  Real low[3], high[3];
  bool split[3];
  KOKKOS_INLINE_FUNCTION bool border(Real x, Real y, Real z) const {
    const Real p[3] = {x, y, z};
    bool near = false;
    for (int d = 0; d < 3; ++d) near = near || (split[d] && (p[d] < low[d] || p[d] >= high[d]));
    return near;
  }
};

// Grows v to at least n entries (an eighth more, for the next rebuild's growth) and keeps it
// otherwise: the buffers of one list rebuild serve the next, since a device allocation and its
// release each wait for the device. Contents are not kept.
template <class V>
void grow(V& v, std::size_t n, const char* label) {
  if (v.extent(0) >= n && v.data() != nullptr) return;
  v = V(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), n + n / 8 + 1);
}

// The first n entries of a buffer grow() sized.
template <class V>
auto head(const V& v, std::size_t n) {
  return Kokkos::subview(v, std::make_pair(std::size_t(0), n));
}

template <class Space, class Real>
class Domain {
 public:
  using Mem = typename Space::memory_space;
  using Vec = VecView<Real, Mem>;
  using Host = Kokkos::HostSpace;

  Domain() = default;
  // reach: cutoff + skin, the depth of the ghost layer.
  Domain(const BrickGrid& grid, double reach, const Space& space)
      : grid_(grid), space_(space), reach_(reach * (1 + 1e-5)) {
    // Every direction with no step along an unsplit axis: those axes stay periodic locally.
    for (int oz = -1; oz <= 1; ++oz)
      for (int oy = -1; oy <= 1; ++oy)
        for (int ox = -1; ox <= 1; ++ox) {
          const int o[3] = {ox, oy, oz};
          bool valid = ox || oy || oz;
          for (int d = 0; d < 3; ++d) valid = valid && (o[d] == 0 || grid_.split(d));
          if (!valid) continue;
          Direction dir;
          int to[3], from[3];
          for (int d = 0; d < 3; ++d) {
            dir.o[d] = o[d];
            to[d] = grid_.me[d] + o[d];
            from[d] = grid_.me[d] - o[d];
            // Past the last sub-box the neighbour is the first one, one box length on.
            dir.shift[d] =
                to[d] < 0 ? grid_.length[d] : (to[d] >= grid_.p[d] ? -grid_.length[d] : 0);
          }
          dir.to = grid_.rank_of(to);
          dir.from = grid_.rank_of(from);
          dir.tag = 7300 + (ox + 1) + 3 * (oy + 1) + 9 * (oz + 1);
          dirs_.push_back(dir);
        }
  }

  const BrickGrid& grid() const { return grid_; }
  int ghosts() const { return recv_total_; }

  // The box a rank bins and searches in: the whole box along unsplit axes; along split ones its
  // sub-box with the ghost layer below and above and one more layer of empty margin, so that
  // the search's periodic wrap of this box only ever offers candidates beyond the cutoff.
  NeighborBox<Real> neighbor_box() const {
    NeighborBox<Real> b;
    for (int d = 0; d < 3; ++d) {
      if (!grid_.split(d)) {
        b.box.length[d] = Real(grid_.length[d]);
        continue;
      }
      b.origin[d] = grid_.lo(d) - reach_;
      b.box.length[d] = Real(grid_.hi(d) - grid_.lo(d) + 3 * reach_);
      b.images[d] = false;
    }
    return b;
  }

  // Sends each owned atom that left this sub-box (positions already wrapped into the box) to
  // the rank that owns its position; returns this rank's new atoms: those that stayed, in their
  // order, then the arrivals by sending rank.
  OwnedAtoms<Real, Mem> migrate(const core::Comm& comm, const OwnedAtoms<Real, Mem>& mine);

  // Plans the ghost exchange from the owned positions x (rows 0..n-1): which atoms each
  // neighbouring sub-box needs. Returns the number of ghosts this rank receives.
  int plan(const core::Comm& comm, const Vec& x, int n);
  // Rows n.. of x (the ghosts) from their owners' rows of x, shifted across the periodic
  // boundary where they crossed it; x needs n + ghosts() rows.
  void forward_positions(const core::Comm& comm, const Vec& x, int n);
  // forward_positions() in two halves: start_forward() packs the owned rows that leave, stages
  // them to the host and posts every direction's messages; finish_forward() waits for them and
  // unpacks the ghost rows with kernels on `on` (any instance: it writes ghost rows only).
  // Between the two the caller may compute whatever needs no ghost position.
  void start_forward(const core::Comm& comm, const Vec& x);
  void finish_forward(const Vec& x, int n, const Space& on);

  // Border atoms: within cutoff + skin of a cut face, the atoms some direction sends (select()),
  // and the only ones whose list rows may hold ghosts. The interior atoms' forces need no ghost.
  // first_border(): the first row of x (0..n-1) that is a border atom, n if none.
  int first_border(const Vec& x, int n) const;
  // The order `perm` (new row k is row perm(k) of x) with its interior atoms first and its
  // border atoms after them, each in the order perm gives; a new view.
  Kokkos::View<int*, Mem> interior_first(const Kokkos::View<int*, Mem>& perm, const Vec& x,
                                         int n) const;
  // The same for a per-atom value without shift (types, charges, ids).
  template <class T>
  void forward_values(const core::Comm& comm, const Kokkos::View<T*, Mem>& values, int n);
  // Half lists: adds the forces of the ghost rows n.. of f to their owners' rows on the other
  // ranks (each ghost's force goes back the way its position came), and receives the same for
  // this rank's atoms. Direction after direction, so that an atom sent several ways sums its
  // shares in one order on every run.
  void reverse_forces(const core::Comm& comm, const Vec& f, int n);

  // A copy of the first `keep` rows of a per-atom view, with `rows` rows in all.
  Vec with_rows(const Vec& from, int keep, int rows) const;
  template <class T>
  Kokkos::View<T*, Mem> with_rows(const Kokkos::View<T*, Mem>& from, int keep, int rows) const;

  // Public for nvcc (device lambdas). The owned rows of x (0..n-1) that direction `dir` sends:
  // their count, and with `fill`, their rows and shifts stored in send_index_ from `offset`.
  int select(const Vec& x, int n, int dir, int offset, bool fill);
  void pack_positions(const Vec& x);
  void unpack_positions(const Vec& x, int n, const Space& on);
  void pack_ghost_forces(const Vec& f, int n);
  void add_returned_forces(const Vec& f, int dir);

 private:
  struct Direction {
    int o[3] = {0, 0, 0};
    double shift[3] = {0, 0, 0};  // added to the positions sent this way
    int to = 0, from = 0, tag = 0;
  };

  // Each direction's rows to its `to` rank, from its `from` rank; `back`: the reverse way
  // (the received rows return to their senders).
  template <class T>
  void exchange(const core::Comm& comm, T* send, T* recv, int per_atom, bool back = false) const;

  CutFaces<Real> reach_test() const {
    CutFaces<Real> r;
    for (int d = 0; d < 3; ++d) {
      r.low[d] = Real(grid_.lo(d) + reach_);
      r.high[d] = Real(grid_.hi(d) - reach_);
      r.split[d] = grid_.split(d);
    }
    return r;
  }

  BrickGrid grid_;
  Space space_;
  double reach_ = 0;
  std::vector<Direction> dirs_;
  std::vector<std::int64_t> send_count_, send_offset_, recv_count_, recv_offset_;
  int send_total_ = 0, recv_total_ = 0;
  Kokkos::View<int*, Mem> send_index_;       // owned rows sent, direction after direction
  Kokkos::View<Real* [3], Mem> send_shift_;  // the shift each one carries
  Kokkos::View<Real*, Mem> send_buf_, recv_buf_;
  Kokkos::View<Real*, Host> send_host_, recv_host_;  // staging (host spaces: the buffers)
  bool direct_ = false;                              // a GPU's buffers handed to MPI (no staging)
  // forward_values(): one word a value, whatever its type.
  Kokkos::View<std::uint64_t*, Mem> word_send_, word_recv_;
  Kokkos::View<std::uint64_t*, Host> word_send_host_, word_recv_host_;
  // migrate()'s work arrays.
  Kokkos::View<int*, Mem> migrate_dest_, migrate_stay_;
  Kokkos::View<double*, Mem> migrate_real_;
  Kokkos::View<std::int64_t*, Mem> migrate_int_;
  Real* send_mpi() const { return direct_ ? send_buf_.data() : send_host_.data(); }
  Real* recv_mpi() const { return direct_ ? recv_buf_.data() : recv_host_.data(); }
  core::Comm::Pending pending_;  // the ghost positions in flight (start_forward)
};

template <class Space, class Real>
template <class T>
void Domain<Space, Real>::exchange(const core::Comm& comm, T* send, T* recv, int per_atom,
                                   bool back) const {
  // Every direction posted at once, then waited for: the messages travel together.
  core::Comm::Pending pending;
  for (std::size_t k = 0; k < dirs_.size(); ++k) {
    if (back) {
      comm.start_exchange(pending, recv + per_atom * recv_offset_[k],
                          sizeof(T) * std::size_t(per_atom * recv_count_[k]), dirs_[k].from,
                          send + per_atom * send_offset_[k],
                          sizeof(T) * std::size_t(per_atom * send_count_[k]), dirs_[k].to,
                          dirs_[k].tag + 100);
      continue;
    }
    comm.start_exchange(pending, send + per_atom * send_offset_[k],
                        sizeof(T) * std::size_t(per_atom * send_count_[k]), dirs_[k].to,
                        recv + per_atom * recv_offset_[k],
                        sizeof(T) * std::size_t(per_atom * recv_count_[k]), dirs_[k].from,
                        dirs_[k].tag);
  }
  pending.wait();
}

template <class Space, class Real>
int Domain<Space, Real>::select(const Vec& x, int n, int k, int offset, bool fill) {
  const Direction& dir = dirs_[k];
  const CutFaces<Real> reach = reach_test();
  int o[3];
  for (int d = 0; d < 3; ++d) o[d] = dir.o[d];
  const Real sx = Real(dir.shift[0]), sy = Real(dir.shift[1]), sz = Real(dir.shift[2]);
  const auto index = send_index_;
  const auto shift = send_shift_;
  int selected = 0;
  Kokkos::parallel_scan(
      "hayate::md::ghost_select", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(int i, int& count, bool final) {
        bool near = true;
        for (int d = 0; d < 3; ++d) {
          const Real p = x(i, d);
          near = near && (o[d] == 0 || (o[d] < 0 ? p < reach.low[d] : p >= reach.high[d]));
        }
        if (!near) return;
        if (final && fill) {
          index(offset + count) = i;
          shift(offset + count, 0) = sx;
          shift(offset + count, 1) = sy;
          shift(offset + count, 2) = sz;
        }
        ++count;
      },
      selected);
  return selected;
}

template <class Space, class Real>
int Domain<Space, Real>::plan(const core::Comm& comm, const Vec& x, int n) {
  pending_.wait();  // messages still in flight (a force call that failed) use the old buffers
  const std::size_t nd = dirs_.size();
  send_count_.assign(nd, 0);
  send_offset_.assign(nd, 0);
  recv_count_.assign(nd, 0);
  recv_offset_.assign(nd, 0);
  // Counting pass, then the filling pass.
  std::int64_t total = 0;
  for (std::size_t k = 0; k < nd; ++k) {
    const int count = select(x, n, int(k), 0, false);
    send_count_[k] = count;
    send_offset_[k] = total;
    total += count;
  }
  send_total_ = int(total);
  grow(send_index_, std::size_t(send_total_), "hayate::md::ghost_send");
  grow(send_shift_, std::size_t(send_total_), "hayate::md::ghost_shift");
  for (std::size_t k = 0; k < nd; ++k) select(x, n, int(k), int(send_offset_[k]), true);
  for (std::size_t k = 0; k < nd; ++k)
    comm.exchange(&send_count_[k], sizeof(std::int64_t), dirs_[k].to, &recv_count_[k],
                  sizeof(std::int64_t), dirs_[k].from, dirs_[k].tag);
  std::int64_t received = 0;
  for (std::size_t k = 0; k < nd; ++k) {
    recv_offset_[k] = received;
    received += recv_count_[k];
  }
  if (received > std::numeric_limits<int>::max() / 4)
    throw core::RuntimeFailure("md: more ghost atoms than one rank can index");
  recv_total_ = int(received);
  grow(send_buf_, 3 * std::size_t(send_total_), "hayate::md::ghost_send_buf");
  grow(recv_buf_, 3 * std::size_t(recv_total_), "hayate::md::ghost_recv_buf");
  grow(word_send_, std::size_t(send_total_), "hayate::md::ghost_send_values");
  grow(word_recv_, std::size_t(recv_total_), "hayate::md::ghost_recv_values");
  direct_ = core::ExecTraits<Space>::is_gpu && comm.device_memory();
  // Host mirrors of the same sizes (on host backends the buffers themselves).
  auto mirror = [](auto& host, const auto& buf) {
    const bool stale = Kokkos::SpaceAccessibility<Host, Mem>::accessible
                           ? host.data() != buf.data()
                           : host.extent(0) != buf.extent(0);
    if (stale) host = Kokkos::create_mirror_view(Host(), buf);
  };
  if (!direct_) {
    mirror(send_host_, send_buf_);
    mirror(recv_host_, recv_buf_);
  }
  mirror(word_send_host_, word_send_);
  mirror(word_recv_host_, word_recv_);
  return recv_total_;
}

template <class Space, class Real>
auto Domain<Space, Real>::with_rows(const Vec& from, int keep, int rows) const -> Vec {
  Vec to(Kokkos::view_alloc(from.label(), Kokkos::WithoutInitializing), rows);
  Kokkos::parallel_for(
      "hayate::md::copy_rows", Kokkos::RangePolicy<Space>(space_, 0, keep), KOKKOS_LAMBDA(int i) {
        for (int d = 0; d < 3; ++d) to(i, d) = from(i, d);
      });
  return to;
}

template <class Space, class Real>
template <class T>
Kokkos::View<T*, typename Space::memory_space> Domain<Space, Real>::with_rows(
    const Kokkos::View<T*, Mem>& from, int keep, int rows) const {
  Kokkos::View<T*, Mem> to(Kokkos::view_alloc(from.label(), Kokkos::WithoutInitializing), rows);
  Kokkos::parallel_for(
      "hayate::md::copy_values", Kokkos::RangePolicy<Space>(space_, 0, keep),
      KOKKOS_LAMBDA(int i) { to(i) = from(i); });
  return to;
}

template <class Space, class Real>
void Domain<Space, Real>::pack_positions(const Vec& x) {
  const auto index = send_index_;
  const auto shift = send_shift_;
  const auto buf = send_buf_;
  Kokkos::parallel_for(
      "hayate::md::ghost_pack", Kokkos::RangePolicy<Space>(space_, 0, send_total_),
      KOKKOS_LAMBDA(int e) {
        const int i = index(e);
        for (int d = 0; d < 3; ++d) buf(3 * e + d) = x(i, d) + shift(e, d);
      });
}

template <class Space, class Real>
void Domain<Space, Real>::unpack_positions(const Vec& x, int n, const Space& on) {
  const auto buf = recv_buf_;
  Kokkos::parallel_for(
      "hayate::md::ghost_unpack", Kokkos::RangePolicy<Space>(on, 0, recv_total_),
      KOKKOS_LAMBDA(int g) {
        for (int d = 0; d < 3; ++d) x(n + g, d) = buf(3 * g + d);
      });
}

template <class Space, class Real>
void Domain<Space, Real>::forward_positions(const core::Comm& comm, const Vec& x, int n) {
  start_forward(comm, x);
  finish_forward(x, n, space_);
}

template <class Space, class Real>
void Domain<Space, Real>::start_forward(const core::Comm& comm, const Vec& x) {
  pending_.wait();  // a previous start not finished (an exception in between): its buffers
  pack_positions(x);
  const std::size_t sent = 3 * std::size_t(send_total_);
  if (!direct_) Kokkos::deep_copy(space_, head(send_host_, sent), head(send_buf_, sent));
  space_.fence();
  for (std::size_t k = 0; k < dirs_.size(); ++k)
    comm.start_exchange(
        pending_, send_mpi() + 3 * send_offset_[k], sizeof(Real) * std::size_t(3 * send_count_[k]),
        dirs_[k].to, recv_mpi() + 3 * recv_offset_[k],
        sizeof(Real) * std::size_t(3 * recv_count_[k]), dirs_[k].from, dirs_[k].tag);
}

template <class Space, class Real>
void Domain<Space, Real>::finish_forward(const Vec& x, int n, const Space& on) {
  pending_.wait();
  const std::size_t received = 3 * std::size_t(recv_total_);
  if (!direct_) Kokkos::deep_copy(on, head(recv_buf_, received), head(recv_host_, received));
  unpack_positions(x, n, on);
}

template <class Space, class Real>
int Domain<Space, Real>::first_border(const Vec& x, int n) const {
  const CutFaces<Real> reach = reach_test();
  int first = n;
  Kokkos::parallel_reduce(
      "hayate::md::first_border", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(int i, int& m) {
        if (i < m && reach.border(x(i, 0), x(i, 1), x(i, 2))) m = i;
      },
      Kokkos::Min<int>(first));
  return first < n ? first : n;  // the reducer starts from its own identity, not from n
}

template <class Space, class Real>
auto Domain<Space, Real>::interior_first(const Kokkos::View<int*, Mem>& perm, const Vec& x,
                                         int n) const -> Kokkos::View<int*, Mem> {
  const CutFaces<Real> reach = reach_test();
  Kokkos::View<int*, Mem> before("hayate::md::interior_before", n);  // interior atoms before k
  int interior = 0;
  Kokkos::parallel_scan(
      "hayate::md::interior_count", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(int k, int& count, bool final) {
        const int i = perm(k);
        if (final) before(k) = count;
        if (!reach.border(x(i, 0), x(i, 1), x(i, 2))) ++count;
      },
      interior);
  Kokkos::View<int*, Mem> out(
      Kokkos::view_alloc(std::string("hayate::md::interior_first"), Kokkos::WithoutInitializing),
      n);
  Kokkos::parallel_for(
      "hayate::md::interior_first", Kokkos::RangePolicy<Space>(space_, 0, n), KOKKOS_LAMBDA(int k) {
        const int i = perm(k);
        const int c = before(k);
        out(reach.border(x(i, 0), x(i, 1), x(i, 2)) ? interior + (k - c) : c) = i;
      });
  return out;
}

template <class Space, class Real>
void Domain<Space, Real>::pack_ghost_forces(const Vec& f, int n) {
  const auto buf = recv_buf_;
  Kokkos::parallel_for(
      "hayate::md::ghost_force_pack", Kokkos::RangePolicy<Space>(space_, 0, recv_total_),
      KOKKOS_LAMBDA(int g) {
        for (int d = 0; d < 3; ++d) buf(3 * g + d) = f(n + g, d);
      });
}

template <class Space, class Real>
void Domain<Space, Real>::add_returned_forces(const Vec& f, int k) {
  const auto index = send_index_;
  const auto buf = send_buf_;
  const int first = int(send_offset_[std::size_t(k)]);
  const int last = first + int(send_count_[std::size_t(k)]);
  Kokkos::parallel_for(
      "hayate::md::ghost_force_add", Kokkos::RangePolicy<Space>(space_, first, last),
      KOKKOS_LAMBDA(int e) {
        const int i = index(e);
        for (int d = 0; d < 3; ++d) f(i, d) += buf(3 * e + d);
      });
}

template <class Space, class Real>
void Domain<Space, Real>::reverse_forces(const core::Comm& comm, const Vec& f, int n) {
  // The position buffers, used the other way round: ghosts' forces out of the receive side,
  // owners' shares into the send side.
  pack_ghost_forces(f, n);
  const std::size_t sent = 3 * std::size_t(send_total_), received = 3 * std::size_t(recv_total_);
  if (!direct_) Kokkos::deep_copy(space_, head(recv_host_, received), head(recv_buf_, received));
  space_.fence();
  exchange(comm, send_mpi(), recv_mpi(), 3, true);
  if (!direct_) Kokkos::deep_copy(space_, head(send_buf_, sent), head(send_host_, sent));
  // Within one direction an atom appears once: no two threads add to one row.
  for (std::size_t k = 0; k < dirs_.size(); ++k)
    if (send_count_[k] > 0) add_returned_forces(f, int(k));
}

template <class Space, class Real>
template <class T>
void Domain<Space, Real>::forward_values(const core::Comm& comm,
                                         const Kokkos::View<T*, Mem>& values, int n) {
  // At rebuilds only, through host memory, one word a value in the buffers plan() sized.
  static_assert(sizeof(T) <= sizeof(std::uint64_t), "a value fits one word");
  const auto send = word_send_;
  const auto recv = word_recv_;
  const auto index = send_index_;
  Kokkos::parallel_for(
      "hayate::md::ghost_pack_values", Kokkos::RangePolicy<Space>(space_, 0, send_total_),
      KOKKOS_LAMBDA(int e) {
        const T value = values(index(e));
        std::uint64_t word = 0;
        memcpy(&word, &value, sizeof(T));
        send(e) = word;
      });
  const std::size_t sent = std::size_t(send_total_), received = std::size_t(recv_total_);
  Kokkos::deep_copy(space_, head(word_send_host_, sent), head(send, sent));
  space_.fence();
  exchange(comm, word_send_host_.data(), word_recv_host_.data(), 1);
  Kokkos::deep_copy(space_, head(recv, received), head(word_recv_host_, received));
  Kokkos::parallel_for(
      "hayate::md::ghost_unpack_values", Kokkos::RangePolicy<Space>(space_, 0, recv_total_),
      KOKKOS_LAMBDA(int g) {
        const std::uint64_t word = recv(g);
        T value;
        memcpy(&value, &word, sizeof(T));
        values(n + g) = value;
      });
  space_.fence();
}

template <class Space, class Real>
auto Domain<Space, Real>::migrate(const core::Comm& comm, const OwnedAtoms<Real, Mem>& mine)
    -> OwnedAtoms<Real, Mem> {
  const int n = mine.n;
  const BrickGrid grid = grid_;
  const int me = comm.rank();
  grow(migrate_dest_, std::size_t(n), "hayate::md::migrate_dest");
  grow(migrate_stay_, std::size_t(n), "hayate::md::migrate_stay");
  const auto dest = migrate_dest_;
  const auto x = mine.x;
  int leaving = 0;
  Kokkos::parallel_reduce(
      "hayate::md::migrate_dest", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(int i, int& count) {
        int g[3];
        for (int d = 0; d < 3; ++d) g[d] = brick_cell(double(x(i, d)), grid.p[d], grid.length[d]);
        const int r = (g[2] * grid.p[1] + g[1]) * grid.p[0] + g[0];
        dest(i) = r;
        count += r != me ? 1 : 0;
      },
      leaving);
  // Records of the leaving atoms, in atom order: x, v, q as doubles; type, id, rank as integers.
  constexpr int nreal = 7, nint = 3;
  grow(migrate_real_, std::size_t(nreal) * leaving, "hayate::md::migrate_real");
  grow(migrate_int_, std::size_t(nint) * leaving, "hayate::md::migrate_int");
  const auto real_out = migrate_real_;
  const auto int_out = migrate_int_;
  const auto stay = migrate_stay_;
  const auto v = mine.v;
  const auto type = mine.type;
  const auto id = mine.id;
  const auto q = mine.q;
  int staying = 0;
  Kokkos::parallel_scan(
      "hayate::md::migrate_pack", Kokkos::RangePolicy<Space>(space_, 0, n),
      KOKKOS_LAMBDA(int i, int& left, bool final) {
        if (dest(i) == me) {
          if (final) stay(i - left) = i;
          return;
        }
        if (final) {
          for (int d = 0; d < 3; ++d) {
            real_out(nreal * left + d) = double(x(i, d));
            real_out(nreal * left + 3 + d) = double(v(i, d));
          }
          real_out(nreal * left + 6) = double(q(i));
          int_out(nint * left) = type(i);
          int_out(nint * left + 1) = id(i);
          int_out(nint * left + 2) = dest(i);
        }
        ++left;
      });
  staying = n - leaving;
  auto hr =
      Kokkos::create_mirror_view_and_copy(Host(), head(real_out, std::size_t(nreal) * leaving));
  auto hi = Kokkos::create_mirror_view_and_copy(Host(), head(int_out, std::size_t(nint) * leaving));
  // Group by destination (stable), then exchange with every other rank: atoms may go anywhere.
  const int ranks = comm.size();
  std::vector<std::vector<double>> out_real(ranks);
  std::vector<std::vector<std::int64_t>> out_int(ranks);
  for (int a = 0; a < leaving; ++a) {
    const int r = int(hi(nint * a + 2));
    for (int c = 0; c < nreal; ++c) out_real[r].push_back(hr(nreal * a + c));
    for (int c = 0; c < 2; ++c) out_int[r].push_back(hi(nint * a + c));
  }
  std::vector<std::vector<double>> in_real(ranks);
  std::vector<std::vector<std::int64_t>> in_int(ranks);
  for (int step = 1; step < ranks; ++step) {
    const int to = (me + step) % ranks, from = (me - step + ranks) % ranks;
    std::int64_t send_n = std::int64_t(out_int[to].size() / 2), recv_n = 0;
    comm.exchange(&send_n, sizeof send_n, to, &recv_n, sizeof recv_n, from, 7290);
    in_real[from].resize(std::size_t(recv_n) * nreal);
    in_int[from].resize(std::size_t(recv_n) * 2);
    comm.exchange(out_real[to].data(), out_real[to].size() * sizeof(double), to,
                  in_real[from].data(), in_real[from].size() * sizeof(double), from, 7291);
    comm.exchange(out_int[to].data(), out_int[to].size() * sizeof(std::int64_t), to,
                  in_int[from].data(), in_int[from].size() * sizeof(std::int64_t), from, 7292);
  }
  std::vector<double> arrivals_real;
  std::vector<std::int64_t> arrivals_int;
  for (int r = 0; r < ranks; ++r) {
    arrivals_real.insert(arrivals_real.end(), in_real[r].begin(), in_real[r].end());
    arrivals_int.insert(arrivals_int.end(), in_int[r].begin(), in_int[r].end());
  }
  const int arriving = int(arrivals_int.size() / 2);
  OwnedAtoms<Real, Mem> out = OwnedAtoms<Real, Mem>::allocate(staying + arriving);
  // The leaving records are on the host (hr, hi, done with): the arrivals take their buffers.
  grow(migrate_real_, arrivals_real.size(), "hayate::md::migrate_real");
  grow(migrate_int_, arrivals_int.size(), "hayate::md::migrate_int");
  const auto real_in = migrate_real_;
  const auto int_in = migrate_int_;
  Kokkos::deep_copy(space_, head(real_in, arrivals_real.size()),
                    Kokkos::View<const double*, Host, Kokkos::MemoryUnmanaged>(
                        arrivals_real.data(), arrivals_real.size()));
  Kokkos::deep_copy(space_, head(int_in, arrivals_int.size()),
                    Kokkos::View<const std::int64_t*, Host, Kokkos::MemoryUnmanaged>(
                        arrivals_int.data(), arrivals_int.size()));
  const auto nx = out.x, nv = out.v;
  const auto nt = out.type;
  const auto nid = out.id;
  const auto nq = out.q;
  Kokkos::parallel_for(
      "hayate::md::migrate_unpack", Kokkos::RangePolicy<Space>(space_, 0, staying + arriving),
      KOKKOS_LAMBDA(int k) {
        if (k < staying) {
          const int i = stay(k);
          for (int d = 0; d < 3; ++d) {
            nx(k, d) = x(i, d);
            nv(k, d) = v(i, d);
          }
          nt(k) = type(i);
          nid(k) = id(i);
          nq(k) = q(i);
          return;
        }
        const int a = k - staying;
        for (int d = 0; d < 3; ++d) {
          nx(k, d) = Real(real_in(nreal * a + d));
          nv(k, d) = Real(real_in(nreal * a + 3 + d));
        }
        nq(k) = Real(real_in(nreal * a + 6));
        nt(k) = int(int_in(2 * a));
        nid(k) = int_in(2 * a + 1);
      });
  space_.fence();
  return out;
}

// Compiled once, in md/shared_kernels.cpp (see neighbor.hpp for why).
#define HAYATE_MD_DOMAIN_SPACE(EXTERN, S)                                                         \
  EXTERN template class Domain<S, float>;                                                         \
  EXTERN template class Domain<S, double>;                                                        \
  EXTERN template void Domain<S, float>::forward_values<int>(                                     \
      const core::Comm&, const Kokkos::View<int*, S::memory_space>&, int);                        \
  EXTERN template Kokkos::View<int*, S::memory_space> Domain<S, float>::with_rows<int>(           \
      const Kokkos::View<int*, S::memory_space>&, int, int) const;                                \
  EXTERN template Kokkos::View<float*, S::memory_space> Domain<S, float>::with_rows<float>(       \
      const Kokkos::View<float*, S::memory_space>&, int, int) const;                              \
  EXTERN template Kokkos::View<int*, S::memory_space> Domain<S, double>::with_rows<int>(          \
      const Kokkos::View<int*, S::memory_space>&, int, int) const;                                \
  EXTERN template Kokkos::View<double*, S::memory_space> Domain<S, double>::with_rows<double>(    \
      const Kokkos::View<double*, S::memory_space>&, int, int) const;                             \
  EXTERN template void Domain<S, float>::forward_values<float>(                                   \
      const core::Comm&, const Kokkos::View<float*, S::memory_space>&, int);                      \
  EXTERN template void Domain<S, double>::forward_values<int>(                                    \
      const core::Comm&, const Kokkos::View<int*, S::memory_space>&, int);                        \
  EXTERN template void Domain<S, double>::forward_values<double>(                                 \
      const core::Comm&, const Kokkos::View<double*, S::memory_space>&, int);                     \
  EXTERN template void Domain<S, float>::forward_values<std::int64_t>(                            \
      const core::Comm&, const Kokkos::View<std::int64_t*, S::memory_space>&, int);               \
  EXTERN template void Domain<S, double>::forward_values<std::int64_t>(                           \
      const core::Comm&, const Kokkos::View<std::int64_t*, S::memory_space>&, int);               \
  EXTERN template Kokkos::View<std::int64_t*, S::memory_space>                                    \
  Domain<S, float>::with_rows<std::int64_t>(const Kokkos::View<std::int64_t*, S::memory_space>&,  \
                                            int, int) const;                                      \
  EXTERN template Kokkos::View<std::int64_t*, S::memory_space>                                    \
  Domain<S, double>::with_rows<std::int64_t>(const Kokkos::View<std::int64_t*, S::memory_space>&, \
                                             int, int) const;
#ifndef HAYATE_MD_DEFINE_SHARED_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_MD_DOMAIN_SPACE, extern)
#endif

}  // namespace hayate::md
