#pragma once
// Pair forces from a Verlet list, for any pair style (potentials/). One functor holds the
// per-neighbor work (pair_term, which calls Style::compute); the variants differ only in template
// arguments chosen once at the top:
//   list      full (every pair twice, no scatter) | half (each pair once, Newton's third law)
//   scatter   half list only: ScatterView atomic | duplicated (one copy per host thread)
//   parallel  thread per atom (RangePolicy) | team per atom (TeamPolicy, neighbors over the
//             vector lanes with a vector reduction: on CUDA a warp per atom, shuffle-reduced)
//   layout    CSR | padded | transposed neighbor storage (NeighborList::visit)
//   Real      float | double;  EV: energy and virial on request
#include "compat/kokkos_compat.hpp"
#include "config/error.hpp"
#include "exec/exec_traits.hpp"
#include "neighbor.hpp"
#include "potentials/pair_style.hpp"

#include <Kokkos_Core.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace hayate::md {

enum class Scatter { Atomic, Duplicated };
enum class Parallel { Thread, Team };

// Where the pair loop reads j: the integrator's split x, y, z arrays with a minimum-image test
// per pair, or packed (x, y, z, type) records including the periodic images within the
// neighbor cutoff of a face, so one record load and three subtractions give the displacement.
enum class Positions { Split, Packed };

// Where charged styles find q_j: from j's type (read with its position; the products
// C q_a q_b sit in the pair coefficients) when every atom carries its type's charge, or from a
// per-atom array, one more load per pair.
enum class ChargeLookup { Auto, PerAtom };

struct ForceOptions {
  ListKind list = ListKind::Full;
  Scatter scatter = Scatter::Atomic;
  Parallel parallel = Parallel::Thread;
  Positions positions = Positions::Split;
  ChargeLookup charges = ChargeLookup::Auto;
};

inline std::string variant_name(const ForceOptions& o) {
  std::string s = o.list == ListKind::Full ? "full" : "half";
  if (o.list == ListKind::Half) s += o.scatter == Scatter::Atomic ? "_atomic" : "_duplicated";
  s += o.parallel == Parallel::Thread ? "_thread" : "_warp";
  if (o.positions == Positions::Packed) s += "_packed";
  return s;
}

// One atom's packed record, aligned so that a GPU reads it with vector loads.
template <class Real>
struct alignas(4 * sizeof(Real)) PackedAtom {
  Real x, y, z, type;
};

template <class Real, class Mem>
struct SplitPositions {
  ConstVecView<Real, Mem> x;
  Kokkos::View<const int*, Mem> type;
  Box<Real> box;
  Kokkos::View<const Real*, Mem> charge;  // read by charged styles only
  int charge_by_type = 0;                 // charged styles: q_j from j's type (ChargeLookup)
  KOKKOS_INLINE_FUNCTION void atom(int i, Real& xi, Real& yi, Real& zi, int& ti) const {
    xi = x(i, 0);
    yi = x(i, 1);
    zi = x(i, 2);
    ti = type(i);
  }
  // Displacement r_i - r_j of list entry j, and j's type.
  KOKKOS_INLINE_FUNCTION void delta(int j, Real xi, Real yi, Real zi, Real& dx, Real& dy, Real& dz,
                                    int& tj) const {
    dx = box.image(xi - x(j, 0), 0);
    dy = box.image(yi - x(j, 1), 1);
    dz = box.image(zi - x(j, 2), 2);
    tj = type(j);
  }
  KOKKOS_INLINE_FUNCTION int atom_of(int j) const { return j; }
  KOKKOS_INLINE_FUNCTION Real charge_of(int j) const { return charge(j); }
};

template <class Space, class Real>
struct PackedPositions {
  using Mem = typename Space::memory_space;
  Kokkos::View<const PackedAtom<Real>*, Mem> q;  // atoms, then ghosts
  Kokkos::View<const int*, Mem> ghost_owner;
  int natoms;
  Kokkos::View<const Real*, Mem> charge;  // per record (atoms, then ghosts); charged styles only
  int charge_by_type = 0;                 // charged styles: q_j from j's type (ChargeLookup)
  KOKKOS_INLINE_FUNCTION void atom(int i, Real& xi, Real& yi, Real& zi, int& ti) const {
    const PackedAtom<Real> p = q(i);
    xi = p.x;
    yi = p.y;
    zi = p.z;
    ti = int(p.type);
  }
  KOKKOS_INLINE_FUNCTION void delta(int j, Real xi, Real yi, Real zi, Real& dx, Real& dy, Real& dz,
                                    int& tj) const {
    // A GPU loads a copy of the aligned record with vector loads; host compilers do better with
    // scalar loads straight into the subtractions.
    using Record = std::conditional_t<core::ExecTraits<Space>::is_gpu, const PackedAtom<Real>,
                                      const PackedAtom<Real>&>;
    Record p = q(j);
    dx = xi - p.x;
    dy = yi - p.y;
    dz = zi - p.z;
    tj = int(p.type);
  }
  // The atom a half list scatters to: a ghost's owner.
  KOKKOS_INLINE_FUNCTION int atom_of(int j) const {
    return j < natoms ? j : ghost_owner(j - natoms);
  }
  KOKKOS_INLINE_FUNCTION Real charge_of(int j) const { return charge(j); }
};

// Per-atom register accumulator; a sum type for the vector reduction of the team kernel.
template <class Real>
struct Accum {
  Real fx = 0, fy = 0, fz = 0, e = 0, w = 0;
  KOKKOS_INLINE_FUNCTION Accum& operator+=(const Accum& o) {
    fx += o.fx;
    fy += o.fy;
    fz += o.fz;
    e += o.e;
    w += o.w;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Accum& o) volatile {
    fx += o.fx;
    fy += o.fy;
    fz += o.fz;
    e += o.e;
    w += o.w;
  }
};

// Total pair energy and virial sum(r . f), accumulated in double whatever Real is.
struct EnergyVirial {
  double energy = 0, virial = 0;
  KOKKOS_INLINE_FUNCTION EnergyVirial& operator+=(const EnergyVirial& o) {
    energy += o.energy;
    virial += o.virial;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile EnergyVirial& o) volatile {
    energy += o.energy;
    virial += o.virial;
  }
};

}  // namespace hayate::md

namespace Kokkos {
template <class Real>
struct reduction_identity<hayate::md::Accum<Real>> {
  KOKKOS_FORCEINLINE_FUNCTION static hayate::md::Accum<Real> sum() {
    return hayate::md::Accum<Real>();
  }
};
template <>
struct reduction_identity<hayate::md::EnergyVirial> {
  KOKKOS_FORCEINLINE_FUNCTION static hayate::md::EnergyVirial sum() {
    return hayate::md::EnergyVirial();
  }
};
}  // namespace Kokkos

namespace hayate::md {

template <class Space, class Real>
using ForceView = VecView<Real, typename Space::memory_space>;

// Full list: each thread owns its atom's force and writes it once; no scatter.
template <class Space, class Real>
struct DirectWrite {
  static constexpr bool newton = false;
  ForceView<Space, Real> f;
  struct Access {
    ForceView<Space, Real> f;
    KOKKOS_INLINE_FUNCTION void add_j(int, Real, Real, Real) const {}
    KOKKOS_INLINE_FUNCTION void add_i(int i, Real fx, Real fy, Real fz) const {
      f(i, 0) = fx;
      f(i, 1) = fy;
      f(i, 2) = fz;
    }
  };
  KOKKOS_INLINE_FUNCTION Access access() const { return Access{f}; }
};

// Half list: i keeps its sum in registers, j receives -f through the ScatterView.
template <class Space, class Real, class Duplication, class Contribution>
struct ScatterWrite {
  static constexpr bool newton = true;
  using SV = compat::ScatterSumView<Real* [3], VecLayout, Space, Duplication, Contribution>;
  SV sv;
  struct Access {
    decltype(std::declval<const SV&>().access()) a;
    KOKKOS_INLINE_FUNCTION void add_j(int j, Real fx, Real fy, Real fz) const {
      a(j, 0) -= fx;
      a(j, 1) -= fy;
      a(j, 2) -= fz;
    }
    KOKKOS_INLINE_FUNCTION void add_i(int i, Real fx, Real fy, Real fz) const {
      a(i, 0) += fx;
      a(i, 1) += fy;
      a(i, 2) += fz;
    }
  };
  KOKKOS_INLINE_FUNCTION Access access() const { return Access{sv.access()}; }
};

struct ThreadTag {};
struct TeamTag {};

template <class Space, class Real, class Style, class Rows, class Sink, bool EV, class Pos>
struct PairKernel {
  using Mem = typename Space::memory_space;
  using Team = typename Kokkos::TeamPolicy<Space>::member_type;
  using Coeffs = typename PairCoeffs<Style, Real, Mem>::Device;
  using Entry = typename PairCoeffs<Style, Real, Mem>::Entry;
  Pos pos;
  Rows rows;
  Sink sink;
  Coeffs coeffs;
  int natoms;
  // List entries whose records the thread-per-atom loop loads together: on GPUs 4 beat 1 and 8
  // (8 costs occupancy), on CPUs they tie, so every backend runs the same loop.
  static constexpr int kGather = 4;
  // EV only: each atom's energy and virial shares, summed by a separate reduction (a
  // parallel_reduce of the pair loop itself runs at a fraction of a GPU's occupancy).
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> ev_atom;
  // Styles with tables: set when a pair inside the cutoff is closer than its table begins.
  Kokkos::View<int, Mem> below_range;

  // Pair coefficients by type: a copy in registers when there is one type (no type loads, and
  // no reloads after each scatter store, which the compiler must assume may alias the table),
  // else the table.
  struct OneType {
    Entry e;
    KOKKOS_INLINE_FUNCTION const Entry& operator()(int, int) const { return e; }
  };
  struct ByType {
    decltype(Coeffs::table) t;
    KOKKOS_INLINE_FUNCTION const Entry& operator()(int a, int b) const { return t(a, b); }
  };
  // Calls f(coefficients) with the accessor for this table.
  template <class F>
  KOKKOS_INLINE_FUNCTION void with_coeff(F&& f) const {
    if (coeffs.ntypes == 1)
      f(OneType{coeffs.one});
    else
      f(ByType{coeffs.table});
  }

  // The per-neighbor work, shared by every variant: the displacement, then the force from it.
  template <class Access, class Coeff>
  KOKKOS_INLINE_FUNCTION void pair_term(const int j, const Real xi, const Real yi, const Real zi,
                                        const int ti, const Real qi, Accum<Real>& a,
                                        const Access& acc, const Coeff& coeff) const {
    Real dx, dy, dz;
    int tj;
    pos.delta(j, xi, yi, zi, dx, dy, dz, tj);
    pair_force(j, dx, dy, dz, ti, tj, qi, a, acc, coeff);
  }

  // The charge of atom i, where the style needs charges.
  KOKKOS_INLINE_FUNCTION Real charge_of_atom(const int i) const {
    if constexpr (is_charged<Style>::value)
      return pos.charge_by_type ? Real(0) : pos.charge_of(i);
    else
      return Real(0);
  }

  // No loads made ahead of the pair's arithmetic (pair_force computes the whole force).
  struct NoLookup {};

  template <class Access, class Coeff>
  KOKKOS_INLINE_FUNCTION void pair_force(const int j, const Real dx, const Real dy, const Real dz,
                                         const int ti, const int tj, const Real qi, Accum<Real>& a,
                                         const Access& acc, const Coeff& coeff) const {
    pair_force(j, dx, dy, dz, dx * dx + dy * dy + dz * dz, ti, tj, qi, a, acc, coeff, NoLookup{});
  }

  template <class Access, class Coeff, class Lookup>
  KOKKOS_INLINE_FUNCTION void pair_force(const int j, const Real dx, const Real dy, const Real dz,
                                         const Real r2, const int ti, const int tj, const Real qi,
                                         Accum<Real>& a, const Access& acc, const Coeff& coeff,
                                         const Lookup& lookup) const {
    const Entry& e = coeff(ti, tj);
    // Computed for every list entry and multiplied by 0 or 1, not branched on: about a quarter
    // of the entries lie in the skin, and a CPU mispredicts that branch; a GPU warp runs both
    // ways anyway. Exact: x * 1 = x, and x * 0 adds nothing. r2 > 0 for every entry (an atom is
    // never its own neighbor), so nothing is infinite.
    // A style with its own cutoffs gives 0 beyond them: no test (and no load of the cutoff).
    const Real in = has_own_cutoffs<Style>::value ? Real(1) : r2 < e.cutsq ? Real(1) : Real(0);
    PairForce<Real> f;
    if constexpr (is_charged<Style>::value)
      f = Style::template compute<EV>(
          r2, e.c,
          pos.charge_by_type ? e.c.qq_types : coeffs.shared.qqr2e * (qi * pos.charge_of(j)),
          coeffs.shared);
    else if constexpr (std::is_same_v<Lookup, NoLookup>)
      f = Style::compute(r2, e.c);
    else
      f = Style::compute(lookup, e.c);
    if constexpr (has_tables<Style>::value)
      if (in != Real(0) && Style::below_range(r2, e.c)) below_range() = 1;
    const PairForce<Real> p{in * f.fpair, in * (f.energy - e.offset)};
    const Real fx = dx * p.fpair, fy = dy * p.fpair, fz = dz * p.fpair;
    a.fx += fx;
    a.fy += fy;
    a.fz += fz;
    if (Sink::newton) acc.add_j(pos.atom_of(j), fx, fy, fz);
    if (EV) {
      // A full list meets every pair twice.
      const Real share = Sink::newton ? Real(1) : Real(0.5);
      a.e += share * p.energy;
      a.w += share * p.fpair * r2;
    }
  }

  KOKKOS_INLINE_FUNCTION void thread_atom(const int i) const {
    const auto acc = sink.access();
    const auto row = rows.row(i);
    Real xi, yi, zi;
    int ti;
    pos.atom(i, xi, yi, zi, ti);
    const Real qi = charge_of_atom(i);
    Accum<Real> a;
    const int n = row.size();
    with_coeff([&](const auto& coeff) {
      int k = 0;
      // kGather entries' records are loaded before the first of their pair forces: on a GPU a
      // double division has a slow-path branch that the compiler does not move loads across,
      // so one entry at a time left every gather's latency exposed (at 100k atoms the kernel
      // has a third of the SM's warps to hide it with). Same pairs in the same order: the same
      // bits.
      for (; k + kGather <= n; k += kGather) {
        int j[kGather], tj[kGather];
        Real dx[kGather], dy[kGather], dz[kGather];
        for (int b = 0; b < kGather; ++b) j[b] = row(k + b);
        for (int b = 0; b < kGather; ++b) pos.delta(j[b], xi, yi, zi, dx[b], dy[b], dz[b], tj[b]);
        if constexpr (has_lookup<Style, Real>::value) {
          // The table reads of the kGather pairs, all started before the first is used: with
          // few warps per SM (32,000 atoms on an H200) their latency was the table's cost.
          Real r2[kGather];
          typename Style::template Lookup<Real> l[kGather];
          for (int b = 0; b < kGather; ++b) {
            r2[b] = dx[b] * dx[b] + dy[b] * dy[b] + dz[b] * dz[b];
            l[b] = Style::lookup(r2[b], coeff(ti, tj[b]).c);
          }
          for (int b = 0; b < kGather; ++b)
            pair_force(j[b], dx[b], dy[b], dz[b], r2[b], ti, tj[b], qi, a, acc, coeff, l[b]);
        } else {
          for (int b = 0; b < kGather; ++b)
            pair_force(j[b], dx[b], dy[b], dz[b], ti, tj[b], qi, a, acc, coeff);
        }
      }
      for (; k < n; ++k) pair_term(row(k), xi, yi, zi, ti, qi, a, acc, coeff);
    });
    acc.add_i(i, a.fx, a.fy, a.fz);
    if (EV) {
      ev_atom(i, 0) = double(a.e);
      ev_atom(i, 1) = double(a.w);
    }
  }

  KOKKOS_INLINE_FUNCTION void team_atom(const Team& team) const {
    const int i = team.league_rank() * team.team_size() + team.team_rank();
    if (i >= natoms) return;
    const auto acc = sink.access();
    const auto row = rows.row(i);
    Real xi, yi, zi;
    int ti;
    pos.atom(i, xi, yi, zi, ti);
    const Real qi = charge_of_atom(i);
    Accum<Real> a;
    with_coeff([&](const auto& coeff) {
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, row.size()),
          [&](const int k, Accum<Real>& t) {
            pair_term(row(k), xi, yi, zi, ti, qi, t, acc, coeff);
          },
          a);
    });
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      acc.add_i(i, a.fx, a.fy, a.fz);
      if (EV) {
        ev_atom(i, 0) = double(a.e);
        ev_atom(i, 1) = double(a.w);
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(ThreadTag, const int i) const { thread_atom(i); }
  KOKKOS_INLINE_FUNCTION void operator()(TeamTag, const Team& team) const { team_atom(team); }
};

// Adds the per-atom energy and virial shares.
template <class View>
struct SumEnergyVirial {
  View e;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, EnergyVirial& v) const {
    v.energy += e(i, 0);
    v.virial += e(i, 1);
  }
};

// Owns the scatter buffers and launches the variant the options name, on the instance it was
// constructed with.
template <class Space, class Real, class Style>
class ForceCompute {
 public:
  using Atomic = ScatterWrite<Space, Real, compat::ScatterNonDuplicated, compat::ScatterAtomic>;
  using Duplicated = ScatterWrite<Space, Real, compat::ScatterDuplicated, compat::ScatterNonAtomic>;
  using Coeffs = PairCoeffs<Style, Real, typename Space::memory_space>;

  explicit ForceCompute(const Space& space = Space()) : space_(space) {}

  // Styles with tables: whether a pair inside the cutoff came closer than its table's first
  // point in a force call so far. The kernels raise a flag on the device, read here: the
  // caller asks where it waits for the device anyway (neighbor rebuilds, energies, output),
  // not after every call, which would stall the host once per step.
  bool below_range() const {
    if constexpr (has_tables<Style>::value) {
      int below = 0;
      Kokkos::deep_copy(space_, below, below_range_);
      space_.fence();
      return below != 0;
    } else {
      return false;
    }
  }

  // Duplication keeps one force copy per concurrent thread: fine for a few dozen host
  // threads, impossible for the ~10^5 resident threads of a GPU.
  static bool supports(const ForceOptions& o) {
    return !(core::ExecTraits<Space>::is_gpu && o.list == ListKind::Half &&
             o.scatter == Scatter::Duplicated);
  }

  // Forces on the n atoms from the list `rows`, reading positions through `pos` (Split- or
  // PackedPositions).
  template <class Rows, class Pos>
  EnergyVirial compute(const ForceOptions& o, const Rows& rows, const Pos& pos, int n,
                       const ForceView<Space, Real>& f, const Coeffs& coeffs, bool ev) {
    return compute(o, rows, pos, n, f, coeffs, ev, Phases{n, {}});
  }

  // The same in two launches: atoms [0, split.at), then split.between() on the host (it may
  // wait for what the later atoms read), then atoms [split.at, n). Each atom's sum, the
  // scatter buffers and the energy (one reduction in atom order) are those of one launch; only
  // a duplicated scatter on several threads may receive its shares in its copies in another
  // order (rounding).
  struct Phases {
    int at;
    std::function<void()> between;
  };
  template <class Rows, class Pos>
  EnergyVirial compute(const ForceOptions& o, const Rows& rows, const Pos& pos, int n,
                       const ForceView<Space, Real>& f, const Coeffs& coeffs, bool ev,
                       const Phases& split) {
    if (!supports(o))
      throw std::invalid_argument("duplicated scatter is not available on " +
                                  std::string(Space::name()));
    if (o.list == ListKind::Full)
      return launch(o, DirectWrite<Space, Real>{f}, rows, pos, coeffs, n, ev, split);
    Kokkos::deep_copy(space_, f, Real(0));
    if (o.scatter == Scatter::Atomic) {
      if (atomic_target_ != f.data()) {
        atomic_.sv = typename Atomic::SV(f);
        atomic_target_ = f.data();
      }
      atomic_.sv.reset_except(space_, f);
      const EnergyVirial r = launch(o, atomic_, rows, pos, coeffs, n, ev, split);
      atomic_.sv.contribute_into(space_, f);
      return r;
    }
    return duplicated(o, rows, pos, f, coeffs, n, ev, split);
  }

 private:
  template <class Rows, class Pos>
  EnergyVirial duplicated(const ForceOptions& o, const Rows& rows, const Pos& pos,
                          const ForceView<Space, Real>& f, const Coeffs& coeffs, int n, bool ev,
                          const Phases& split) {
    if constexpr (core::ExecTraits<Space>::is_gpu) {
      throw std::logic_error("duplicated scatter on a GPU");
    } else {
      // The copies match f's rows (on several ranks the ghost rows too, which change at
      // every rebuild).
      if (dup_target_ != f.data() || dup_extent_ != f.extent(0)) {
        duplicated_.sv = typename Duplicated::SV(f);
        dup_target_ = f.data();
        dup_extent_ = f.extent(0);
      }
      duplicated_.sv.reset_except(space_, f);
      const EnergyVirial r = launch(o, duplicated_, rows, pos, coeffs, n, ev, split);
      duplicated_.sv.contribute_into(space_, f);
      return r;
    }
  }

  template <class Sink, class Rows, class Pos>
  EnergyVirial launch(const ForceOptions& o, const Sink& sink, const Rows& rows, const Pos& pos,
                      const Coeffs& coeffs, int n, bool ev, const Phases& split) {
    // A team per atom runs whole: an offset in its atom index cost the warp kernels registers
    // and occupancy steps (a thread per atom only needs the range's start).
    const int at = o.parallel == Parallel::Team ? 0 : (split.at < n ? split.at : n);
    const auto in_two = [&](const auto& kernel) {
      if (at > 0) run(o, kernel, 0, at);
      if (split.between) split.between();
      if (n > at) run(o, kernel, at, n);
    };
    if (!ev) {
      in_two(PairKernel<Space, Real, Style, Rows, Sink, false, Pos>{
          pos, rows, sink, coeffs.device(), n, {}, below_range_});
      return EnergyVirial{};
    }
    if (int(ev_atom_.extent(0)) < n)
      ev_atom_ = decltype(ev_atom_)(
          Kokkos::view_alloc(std::string("hayate::md::ev_atom"), Kokkos::WithoutInitializing), n);
    in_two(PairKernel<Space, Real, Style, Rows, Sink, true, Pos>{pos, rows, sink, coeffs.device(),
                                                                 n, ev_atom_, below_range_});
    // Summed in atom order by the backend's reduction: the same bits on every run.
    EnergyVirial result;
    Kokkos::parallel_reduce("hayate::md::energy_virial", Kokkos::RangePolicy<Space>(space_, 0, n),
                            SumEnergyVirial<decltype(ev_atom_)>{ev_atom_},
                            Kokkos::Sum<EnergyVirial>(result));
    return result;
  }

  // Atoms [first, last): a team per atom only from 0.
  template <class Functor>
  void run(const ForceOptions& o, const Functor& functor, int first, int last) const {
    const char* label = o.list == ListKind::Full       ? "hayate::md::pair_full"
                        : o.scatter == Scatter::Atomic ? "hayate::md::pair_half_atomic"
                                                       : "hayate::md::pair_half_duplicated";
    if (o.parallel == Parallel::Thread) {
      Kokkos::parallel_for(label, Kokkos::RangePolicy<Space, ThreadTag>(space_, first, last),
                           functor);
      return;
    }
    using Policy = Kokkos::TeamPolicy<Space, TeamTag>;
    // The vector lanes of a team work on one atom (a warp on GPUs), 4 atoms per block on GPUs;
    // one lane per atom on host threads, where the vector loop is a plain (vectorizable) loop.
    using Traits = core::ExecTraits<Space>;
    const int vector = Traits::vector_length;
    const int per_team = Traits::is_gpu ? 4 : 1;
    Kokkos::parallel_for(label, Policy(space_, (last + per_team - 1) / per_team, per_team, vector),
                         functor);
  }

  Space space_;
  Kokkos::View<int, typename Space::memory_space> below_range_{"hayate::md::below_range"};
  Atomic atomic_;
  Duplicated duplicated_;
  Kokkos::View<double* [2], Kokkos::LayoutRight, typename Space::memory_space> ev_atom_;
  const Real* atomic_target_ = nullptr;
  const Real* dup_target_ = nullptr;
  std::size_t dup_extent_ = 0;
};

}  // namespace hayate::md
