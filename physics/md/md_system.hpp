#pragma once
// The MD state on one execution-space instance and the algorithms that advance it: velocity
// Verlet with optional Langevin or Berendsen thermostats, neighbor rebuilds with cell-sorted
// reordering, thermodynamic output in LAMMPS' conventions, and bitwise checkpoints. The pair
// style is a template argument: the whole run uses one.
#include "compat/kokkos_compat.hpp"
#include "domain.hpp"
#include "ewald.hpp"
#include "exec/instantiate.hpp"
#include "force.hpp"
#include "md_styles_built.hpp"
#include "neighbor.hpp"
#include "potentials/pair_style.hpp"
#include "run/checkpoint.hpp"
#include "units.hpp"
#include "util/random.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hayate::md {

// Host-side initial state in double, particle-major (x0 y0 z0 x1 ...).
struct InitialState {
  double box[3] = {0, 0, 0};
  std::vector<double> x, v;
  std::vector<int> type;
  std::vector<std::int64_t> id;
  std::vector<double> q;  // charges; empty: each atom its type's charge
  TypeSet types;
  // Set where this holds one rank's atoms only (make_initial_state with a rank grid): what
  // set-up needs of the whole system, summed over every atom in order, so that the sums have
  // one rank's bits.
  struct Whole {
    std::size_t natoms = 0;
    double qsum = 0, q2sum = 0;
    // Every atom carries its type's charge, compared in float and in double.
    bool by_type_float = true, by_type_double = true;
  };
  std::optional<Whole> whole;

  std::size_t size() const { return type.size(); }
  std::size_t total() const { return whole ? whole->natoms : size(); }
  double charge(std::size_t i) const { return q.empty() ? types.charge[type[i]] : q[i]; }
  // The whole system's count and charge sums.
  Whole whole_system() const {
    if (whole) return *whole;
    Whole w;
    w.natoms = size();
    for (std::size_t i = 0; i < size(); ++i) {
      const double q = charge(i), qt = types.charge[std::size_t(type[i])];
      w.qsum += q;
      w.q2sum += q * q;
      if (float(q) != float(qt)) w.by_type_float = false;
      if (q != qt) w.by_type_double = false;
    }
    return w;
  }
};

// Part p of an md checkpoint in parts, read and checked: every per-atom entry holds the atoms of
// entry 'x', reals finite, types in [0, ntypes), ids at least 1 (InputError naming the part).
template <class Real>
struct CheckpointPart {
  static constexpr const char* vectors[4] = {"x", "v", "f", "x_build"};
  std::size_t n = 0;
  std::vector<Real> vec[4];  // vectors[e]: every atom's x components, then y, then z
  std::vector<std::int32_t> type;
  std::vector<std::int64_t> id;
  std::vector<Real> q;  // empty: the checkpoint holds no charges

  static CheckpointPart read(const core::CheckpointReader& cp, std::size_t p, int ntypes) {
    CheckpointPart part;
    part.n = std::size_t(cp.part_records("x", p));
    const auto sized = [&](const char* name, std::size_t have, std::size_t per_atom) {
      if (have != per_atom * part.n)
        cp.fail_part(p, name, "holds another number of atoms than entry 'x'");
    };
    for (int e = 0; e < 4; ++e) {
      part.vec[e] = cp.get_part_reals<Real>(vectors[e], p);
      sized(vectors[e], part.vec[e].size(), 3);
    }
    part.type = cp.get_part_integers<std::int32_t>("type", p, 0, ntypes - 1);
    sized("type", part.type.size(), 1);
    part.id =
        cp.get_part_integers<std::int64_t>("id", p, 1, std::numeric_limits<std::int64_t>::max());
    sized("id", part.id.size(), 1);
    if (cp.has("q")) {
      part.q = cp.get_part_reals<Real>("q", p);
      sized("q", part.q.size(), 1);
    }
    return part;
  }
};

enum class Thermostat { None, Langevin, Berendsen };

// The long-range part of charged styles: kspace.style ewald with a relative force accuracy.
struct KspaceParams {
  bool ewald = false;
  double accuracy = 1e-5;
  double g_ewald = 0;  // 0: chosen from the accuracy, as LAMMPS does
};

struct MdParams {
  Units units;
  KspaceParams kspace;
  CoulLongEval coul_long = CoulLongEval::Table;  // coul/long styles' real-space part
  double dt = 0.005;
  double skin = 0.3;
  int every = 20;     // forced rebuild period in steps; 0 = only on displacement
  bool check = true;  // also rebuild when an atom moved more than skin / 2
  Layout layout = Layout::Csr;
  ForceOptions force;
  Thermostat thermostat = Thermostat::None;
  double t_target = 1.0, damp = 1.0, tau = 0.5;
  std::uint64_t seed = 12345;
  BrickGrid grid;  // the ranks' sub-boxes (md/domain.hpp); one rank: the whole box
  // Several ranks: the interior atoms' forces are computed while the ghosts' positions travel
  // (Domain::start_forward); off: the positions arrive before the pair loop starts.
  bool overlap = true;
};

struct Thermo {
  std::int64_t step = 0;
  double temp = 0, pe = 0, ke = 0, etotal = 0, press = 0;
};

template <class Real>
struct TypeMass {
  Real mass[max_types] = {};
};

template <class Space, class Real, class Style>
class MdSystem {
 public:
  using Mem = typename Space::memory_space;
  using Vec = VecView<Real, Mem>;
  using ConstVec = ConstVecView<Real, Mem>;

  MdSystem(const InitialState& init, const MdParams& params, const Space& space = Space())
      : params_(params), space_(space), force_(space) {
    natoms_ = static_cast<int>(init.size());
    types_ = init.types;
    if (types_.style != Style::name)
      throw std::logic_error("md: types of pair style " + types_.style + " given to " +
                             Style::name);
    if (types_.size() > max_types)
      throw std::invalid_argument("md: more than " + std::to_string(max_types) + " atom types");
    for (int d = 0; d < 3; ++d) box_.length[d] = Real(init.box[d]);
    total_ = static_cast<std::int64_t>(init.total());
    // On several ranks this rank keeps the atoms its sub-box holds (all of `init` where it
    // holds this rank's atoms only); the rebuild at initialize() moves any the rounding of the
    // wrap puts elsewhere.
    std::vector<std::size_t> mine;
    if (params.grid.ranks() > 1) {
      comm_ = &core::Comm::world();
      if (params.grid.ranks() != comm_->size())
        throw std::logic_error("md: a rank grid for another number of ranks");
      for (std::size_t i = 0; i < init.size(); ++i)
        if (owner_rank(params.grid, &init.x[3 * i]) == comm_->rank()) mine.push_back(i);
    } else {
      mine.resize(init.size());
      for (std::size_t i = 0; i < init.size(); ++i) mine[i] = i;
    }
    natoms_ = static_cast<int>(mine.size());
    nlocal_ = natoms_;
    // The whole system's, which every rank has: no message during set-up.
    const InitialState::Whole whole = init.whole_system();
    whole_by_type_ = std::is_same_v<Real, float> ? whole.by_type_float : whole.by_type_double;
    setup_coulomb(init, whole);
    coeffs_ = PairCoeffs<Style, Real, Mem>::make(types_, coulomb_);
    // Each pair's list reaches the larger of its own cutoff and the Coulomb cutoff.
    std::vector<double> reach(types_.cutoff);
    for (double& r : reach) r = r > types_.coul_cutoff ? r : types_.coul_cutoff;
    cutoffs_ = NeighborCutoffs<Real, Mem>::make(reach, types_.size(), params.skin);
    for (int t = 0; t < types_.size(); ++t) mass_.mass[t] = Real(types_.mass[t]);
    cutneigh_ = types_.max_cutoff() + params.skin;
    nbox_ = box_;
    if (comm_) {
      domain_ = std::make_shared<Domain<Space, Real>>(params.grid, cutneigh_, space_);
      const NeighborBox<Real> nb = domain_->neighbor_box();
      nbox_ = nb.box;
      for (int d = 0; d < 3; ++d) {
        bins_.origin[d] = nb.origin[d];
        list_.ghosts.images[d] = nb.images[d];
      }
      if (params.kspace.ewald)
        ewald_.set_reduction([c = comm_](double* s, int n) { c->sum(s, n); });
      // A GPU unpacks the arriving ghosts on a second stream while the interior atoms' forces
      // run; host threads do one thing at a time anyway.
      if (params.overlap && core::ExecTraits<Space>::is_gpu) {
        auto instance = std::make_shared<compat::IndependentInstance<Space>>();
        if (instance->independent()) ghost_instance_ = instance;
      }
    }
    list_.layout = params.layout;
    list_.kind = params.force.list;
    list_.use_ghosts = params.force.positions == Positions::Packed;
    allocate();
    auto hx = Kokkos::create_mirror_view(x_);
    auto hv = Kokkos::create_mirror_view(v_);
    auto ht = Kokkos::create_mirror_view(type_);
    auto hi = Kokkos::create_mirror_view(id_);
    auto hq = Kokkos::create_mirror_view(q_);
    for (int k = 0; k < natoms_; ++k) {
      const std::size_t i = mine[std::size_t(k)];
      for (int d = 0; d < 3; ++d) {
        hx(k, d) = Real(init.x[3 * i + d]);
        hv(k, d) = Real(init.v[3 * i + d]);
      }
      ht(k) = init.type[i];
      hi(k) = init.id[i];
      hq(k) = Real(init.charge(i));
    }
    Kokkos::deep_copy(space_, x_, hx);
    Kokkos::deep_copy(space_, v_, hv);
    Kokkos::deep_copy(space_, type_, ht);
    Kokkos::deep_copy(space_, id_, hi);
    Kokkos::deep_copy(space_, q_, hq);
    space_.fence();
    update_charge_lookup();
  }

  // Fresh start: neighbor list, then forces (with energy and virial) at step 0.
  void initialize() {
    rebuild();
    compute_forces(true);
  }

  // Atoms this rank owns; total_size(): on all ranks.
  int size() const { return natoms_; }
  std::int64_t total_size() const { return total_; }
  // The rank grid's exchanges (null on one rank), and this rank's ghost atoms.
  const Domain<Space, Real>* domain() const { return domain_.get(); }
  int ghost_atoms() const { return nlocal_ - natoms_; }
  const Space& space() const { return space_; }
  std::int64_t step() const { return step_; }
  const Box<Real>& box() const { return box_; }
  const MdParams& params() const { return params_; }
  const NeighborList<Space>& neighbors() const { return list_; }
  const EnergyVirial& energy_virial() const { return ev_; }
  std::int64_t rebuilds() const { return rebuilds_; }
  const Vec& positions() const { return x_; }
  const Vec& velocities() const {
    settle();
    return v_;
  }
  const Vec& forces() const { return f_; }
  const Kokkos::View<int*, Mem>& types() const { return type_; }
  const Kokkos::View<std::int64_t*, Mem>& ids() const { return id_; }
  const Kokkos::View<Real*, Mem>& charges() const { return q_; }
  const Units& units() const { return params_.units; }
  // The k-space settings chosen for this system (charged styles with kspace.style: ewald).
  const EwaldSetup* ewald_setup() const {
    return params_.kspace.ewald ? &ewald_.settings() : nullptr;
  }
  const CoulombSettings& coulomb() const { return coulomb_; }
  const TypeSet& type_set() const { return types_; }

  // Switches the force variant (tests and benchmarks compare them on one state).
  void set_force_options(const ForceOptions& o, Layout layout) {
    params_.force = o;
    params_.layout = layout;
    list_.layout = layout;
    list_.kind = o.list;
    list_.use_ghosts = o.positions == Positions::Packed;
    update_charge_lookup();
    build_list();
  }

  // Charged styles read q_j from j's type when every atom carries its type's charge (and
  // tuning.charges allows it): the pair loop then loads no charges.
  void update_charge_lookup() {
    charge_by_type_ = false;
    if constexpr (is_charged<Style>::value) {
      if (params_.force.charges == ChargeLookup::PerAtom) return;
      // Several ranks decide from the whole system, which each of them read (the input, or
      // a checkpoint): the same arithmetic on every rank, and no message during set-up.
      if (comm_) {
        charge_by_type_ = whole_by_type_;
        return;
      }
      const auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q_);
      const auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), type_);
      for (int i = 0; i < natoms_; ++i)
        if (hq(i) != Real(types_.charge[std::size_t(ht(i))])) return;
      charge_by_type_ = true;
    }
  }
  bool charges_by_type() const { return charge_by_type_; }

  // Styles with tables: stops the run (exit 3) if a pair came closer than its table's first
  // point since the run began; checked at rebuilds, with energies and before output.
  void check_tables() const {
    if (force_.below_range())
      throw core::RuntimeFailure(
          "md: pair style table: by step " + std::to_string(step_) +
          " a pair inside the cutoff came closer than its table's first point (the inner "
          "radius); extend the table to smaller distances or shorten the time step");
  }

  // Wraps positions into the box, reorders atoms by cell for locality, records the build
  // positions and builds the list from them.
  // On several ranks the atoms that left the sub-box migrate first (and the rebuild stops
  // there when any rank lost atoms), and the ghosts are exchanged after the reorder.
  void rebuild() {
    check_tables();
    owned_packed_ = false;
    lost_ = wrap();
    if (comm_) {
      lost_ = int(comm_->max(std::int64_t(lost_)));
      if (lost_ > 0) return;
      migrate();
    }
    bins_.bin(space_, ConstVec(x_), nbox_, cutneigh_);
    // Several ranks with overlap: the interior atoms first, so that the pair loop over them is
    // one launch before the ghosts arrive.
    permute(overlaps() ? domain_->interior_first(bins_.atoms, x_, natoms_) : bins_.atoms);
    if (comm_) {
      x_build_ = domain_->with_rows(x_, natoms_, natoms_);
      attach_ghosts();
    } else {
      Kokkos::deep_copy(space_, x_build_, x_);
    }
    build_list();
    last_build_ = step_;
    ++rebuilds_;
  }

  // The list is a pure function of the build positions, so a restored run rebuilds exactly
  // the list the uninterrupted run was using.
  void build_list() {
    bins_.bin(space_, ConstVec(x_build_), nbox_, cutneigh_);
    if (comm_) list_.ids = id_;
    list_.build(space_, ConstVec(x_build_), Kokkos::View<const int*, Mem>(type_), bins_, nbox_,
                cutoffs_, cutneigh_, natoms_);
    if constexpr (is_charged<Style>::value) pack_charges();
  }

  // Charges of the packed records (atoms, then their periodic images), after each list build.
  void pack_charges();

  bool needs_rebuild() const {
    moved2_ = -1;
    if (params_.every > 0 && step_ - last_build_ >= params_.every) return true;
    if (!params_.check) return false;
    const double half = 0.5 * params_.skin;
    // A position that is not finite forces the rebuild that counts it (wrap()).
    moved2_ = max_displacement2();
    if (comm_) moved2_ = comm_->max(moved2_);
    return moved2_ > half * half;
  }

  // The largest squared displacement since the last build, as the last needs_rebuild() measured
  // it (1e300 for a position that is not finite); -1 when it measured none.
  double moved2() const { return moved2_; }
  std::int64_t last_build() const { return last_build_; }

  double max_displacement2() const;

  // Several ranks: the ghosts' positions from their owners after a drift. With overlap the
  // force call sends them itself, during the interior atoms' forces, and this leaves them to it
  // (as it does whenever the caller skips it).
  void update_ghosts() {
    if (!comm_ || ghosts_current_ || overlaps()) return;
    domain_->forward_positions(*comm_, x_, natoms_);
    ghosts_current_ = true;
  }
  // A team per atom (tuning.parallel: warp) computes every atom in one launch (ForceCompute).
  bool overlaps() const {
    return comm_ && params_.overlap && params_.force.parallel == Parallel::Thread;
  }
  // Several ranks: atoms [0, interior_atoms()) have no ghost in their list rows (their forces
  // are computed before the ghosts' positions arrive).
  int interior_atoms() const { return interior_; }

  void compute_forces(bool ev) {
    update_ghosts();
    local_forces(ev);
    return_ghost_forces();
  }

  // The pieces of compute_forces(), for callers that time them separately: the pair forces
  // (and the wave-space sum), then, on several ranks with a half list, the ghosts' shares of
  // the pair forces sent back to their owners. local_forces() is compiled with the force kernels
  // in its style's md_problem unit only: the tests and benchmarks link to that copy.
  void local_forces(bool ev);

  void return_ghost_forces() {
    if (newton_ghosts()) domain_->reverse_forces(*comm_, f_, natoms_);
  }

  // A half list on several ranks: pairs with ghosts are computed on one side only.
  bool newton_ghosts() const { return comm_ && params_.force.list == ListKind::Half; }

  // Atom (x, y, z) of type t as seen through image `code`: the one expression for the
  // records of both the drift and pack(), so that they agree to the bit.
  KOKKOS_INLINE_FUNCTION static PackedAtom<Real> packed_record(Real x, Real y, Real z, int t,
                                                               int code, const Box<Real>& box) {
    PackedAtom<Real> p;
    p.x = x + Real(image_shift(code, 0)) * box.length[0];
    p.y = y + Real(image_shift(code, 1)) * box.length[1];
    p.z = z + Real(image_shift(code, 2)) * box.length[2];
    p.type = Real(t);
    return p;
  }

  // The packed (x, y, z, type) records of the atoms and of their ghost images, from the
  // current positions (the images move with their atoms between rebuilds). Where the drift
  // has just written the atoms' records, only the ghosts are left. Several ranks with overlap
  // pack the records of this rank's atoms (and their images) before the ghosts' positions
  // arrive, and those of the ghosts (and theirs) after, on `on`.
  enum class PackRows { All, Owned, Ghosts };
  void pack(PackRows rows, const Space& on);

  // One velocity-Verlet step; energy and virial are computed when want_ev.
  void advance(bool want_ev) {
    kick_drift();
    advance_counter();
    if (needs_rebuild()) rebuild();
    compute_forces(want_ev);
    finish_step();
  }

  // The pieces of advance(), for callers that time them separately.
  void advance_counter() { ++step_; }
  // The final half kick is left pending (unless Berendsen needs the velocities now): the next
  // kick_drift() applies it in the same pass over v and f, and every reader of v settles it
  // first. The arithmetic is the unfused sequence's, so results are the same bits.
  void finish_step() {
    if (params_.thermostat == Thermostat::Langevin) langevin();
    if (params_.thermostat == Thermostat::Berendsen) {
      kick();
      berendsen();
    } else {
      kick_pending_ = true;
    }
  }

  // Applies a pending final half kick.
  void settle() const {
    if (!kick_pending_) return;
    kick_pending_ = false;
    kick();
  }

  // The first half kick and the drift, after the previous step's pending final kick; with packed
  // positions it also writes the atoms' records for the coming force call (pack() then adds
  // the ghosts only, unless a rebuild moves the atoms first).
  void kick_drift();

  void kick() const;

  // Langevin (as LAMMPS' fix langevin, with Gaussian noise): drag -m v / damp plus a random
  // force of variance 2 m k_B T / (damp dt), in the units' force units. The noise of atom `id`
  // at step s is a pure function of (seed, id, s), so runs are independent of backend, ordering
  // and restarts.
  void langevin();

  // Berendsen velocity rescaling towards the target temperature with time constant tau.
  void berendsen();

  double kinetic_energy() const;

  // Degrees of freedom as LAMMPS' compute temp: 3N minus the 3 of the fixed total momentum.
  double dof() const { return total_ > 1 ? 3.0 * double(total_) - 3.0 : 3.0 * double(total_); }
  double temperature() const { return 2.0 * kinetic_energy() / (dof() * params_.units.boltz); }
  double volume() const {
    return double(box_.length[0]) * double(box_.length[1]) * double(box_.length[2]);
  }

  // LAMMPS `thermo_style one` with thermo_modify norm yes: energies per atom, ke from the
  // temperature (0.5 dof k_B T), pressure (dof k_B T + virial) / (3 V) in the units' pressure.
  Thermo thermo() const {
    Thermo t;
    t.step = step_;
    t.temp = temperature();
    t.pe = ev_.energy / double(total_);
    const double kb = params_.units.boltz;
    t.ke = 0.5 * dof() * kb * t.temp / double(total_);
    t.etotal = t.pe + t.ke;
    t.press = (dof() * kb * t.temp + ev_.virial) / (3.0 * volume()) * params_.units.nktv2p;
    return t;
  }

  // On several ranks every rank calls it: each rank's atoms are its part of the per-atom entries
  // (the ranks' atoms in rank order, the one-rank layout), so a restart may take any number of
  // ranks.
  void save(core::CheckpointWriter& cp) const {
    settle();
    cp.put<std::int64_t>("natoms", total_);
    cp.put<std::int32_t>("real_bytes", static_cast<std::int32_t>(sizeof(Real)));
    cp.put_string("pair_style", types_.style);
    std::string names;
    for (const auto& t : types_.names) names += (names.empty() ? "" : " ") + t;
    cp.put_string("type_names", names);
    cp.put_vector("type_masses", types_.mass);
    cp.put("box", std::array<double, 3>{double(box_.length[0]), double(box_.length[1]),
                                        double(box_.length[2])});
    cp.put<double>("dt", params_.dt);
    cp.put<std::int64_t>("step", step_);
    cp.put<std::int64_t>("last_build", last_build_);
    cp.put<std::int64_t>("rebuilds", rebuilds_);
    cp.put<double>("energy", ev_.energy);
    cp.put<double>("virial", ev_.virial);
    put_owned(cp, "x", x_);
    put_owned(cp, "v", v_);
    put_owned(cp, "f", f_);
    put_owned(cp, "x_build", x_build_);
    put_owned(cp, "type", type_);
    put_owned(cp, "id", id_);
    put_owned(cp, "q", q_);
  }

  // Rows 0..size()-1 (this rank's atoms) of a per-atom view, column by column in host memory.
  template <class V>
  Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, Kokkos::HostSpace> owned_host(
      const V& view) const {
    using Out =
        Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, Kokkos::HostSpace>;
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    Out out(Kokkos::view_alloc(std::string("owned"), Kokkos::WithoutInitializing), natoms_);
    for (int i = 0; i < natoms_; ++i) {
      if constexpr (V::rank == 2) {
        for (int c = 0; c < 3; ++c) out(i, c) = host(i, c);
      } else {
        out(i) = host(i);
      }
    }
    return out;
  }
  template <class V>
  void put_owned(core::CheckpointWriter& cp, const std::string& name, const V& view) const {
    const auto host = owned_host(view);
    cp.put_distributed(name, host.data(), sizeof(typename V::non_const_value_type),
                       std::size_t(natoms_), V::rank == 2 ? 3 : 1);
  }

  // Rows 0..size()-1 of a per-atom view in host memory: on several ranks every rank's rows in
  // rank order on the first rank (none on the others). Every rank calls it.
  template <class V>
  Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, Kokkos::HostSpace> gathered(
      const V& view) const {
    using T = typename V::non_const_value_type;
    using Out =
        Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, Kokkos::HostSpace>;
    constexpr int columns = V::rank == 2 ? 3 : 1;
    const auto host = owned_host(view);
    if (!comm_) return host;
    const auto at = [](const auto& v, int i, int c) -> decltype(auto) {
      if constexpr (V::rank == 2)
        return v(i, c);
      else
        return v(i);
    };
    const int ranks = comm_->size();
    std::vector<std::int64_t> counts(std::size_t(ranks), 0);
    const std::int64_t n = natoms_;
    comm_->all_gather(&n, sizeof n, counts.data(),
                      std::vector<std::size_t>(std::size_t(ranks), sizeof n));
    std::vector<std::size_t> bytes;
    for (const std::int64_t c : counts) bytes.push_back(std::size_t(c) * sizeof(T));
    Out out(Kokkos::view_alloc(std::string("gathered"), Kokkos::WithoutInitializing),
            comm_->root() ? std::size_t(total_) : 0);
    std::vector<T> mine(static_cast<std::size_t>(natoms_));
    std::vector<T> all(comm_->root() ? static_cast<std::size_t>(total_) : 0);
    for (int c = 0; c < columns; ++c) {
      for (int i = 0; i < natoms_; ++i) mine[std::size_t(i)] = at(host, i, c);
      comm_->gather(mine.data(), mine.size() * sizeof(T), all.data(), bytes, 0);
      for (std::size_t i = 0; i < all.size(); ++i) at(out, int(i), c) = all[i];
    }
    return out;
  }

  // Restores every piece of state from a checkpoint that md::check_checkpoint accepted against
  // the input this system was made from; the counts and indices are checked again as they are
  // read (InputError naming the entry).
  void restore(const core::CheckpointReader& cp) {
    const auto natoms = cp.get<std::int64_t>("natoms", 0, std::numeric_limits<std::int32_t>::max());
    if (natoms != total_)
      cp.fail("natoms",
              "holds " + std::to_string(natoms) + " atoms, the input " + std::to_string(total_));
    if (cp.get<std::int32_t>("real_bytes", 4, 8) != std::int32_t(sizeof(Real)))
      cp.fail("real_bytes", "was written in another precision");
    step_ = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
    last_build_ = cp.get<std::int64_t>("last_build", 0, step_);
    rebuilds_ = cp.get<std::int64_t>("rebuilds", 0, std::numeric_limits<std::int64_t>::max());
    ev_.energy = cp.get<double>("energy");
    ev_.virial = cp.get<double>("virial");
    if (comm_) {
      restore_share(cp);
      return;
    }
    cp.get_view("x", x_);
    cp.get_view("v", v_);
    cp.get_view("f", f_);
    cp.get_view("x_build", x_build_);
    cp.get_view("type", type_, 0, types_.size() - 1);
    cp.get_view("id", id_, std::int64_t(1), std::numeric_limits<std::int64_t>::max());
    // Checkpoints from before charges existed hold none: the input's charges stand (all zero
    // for the styles those versions had).
    if (cp.has("q")) cp.get_view("q", q_);
    update_charge_lookup();
    kick_pending_ = false;
    owned_packed_ = false;
    build_list();
  }

  // Several ranks: this rank's atoms, those whose build position lies in its sub-box, in the
  // checkpoint's (the one-rank) order. The rebuild that made the build positions gave each atom
  // to the rank owning that position, so on the rank count that wrote the checkpoint every rank
  // gets back exactly its atoms in its order (the run continues to the bit); on another count
  // the sub-boxes hold the atoms they would have held after that rebuild.
  // A checkpoint in parts is read part by part, and no rank holds more than one part besides its
  // own atoms: on the rank count that wrote it each rank reads its own part only, when every rank
  // finds only its own atoms there; otherwise every rank reads every part in turn. Each rank
  // checks the values it reads, and the atom ids are checked across the ranks after.
  void restore_share(const core::CheckpointReader& cp) {
    const BrickGrid& grid = params_.grid;
    const int me = comm_->rank();
    struct Kept {
      std::vector<Real> x, v, f, b, q;  // 3 per atom (x, v, f, b), atom-major
      std::vector<int> type;
      std::vector<std::int64_t> id;
    } kept;
    // Atoms 0..n-1 of a set read from the checkpoint: real(e, i, d) is component d of atom i's
    // vectors[e] (below), type(i), id(i), charge(i). Returns how many were another rank's.
    const auto take = [&](std::size_t n, const auto& real, const auto& type, const auto& id,
                          const auto& charge) {
      std::size_t others = 0;
      for (std::size_t i = 0; i < n; ++i) {
        int g[3];
        for (int d = 0; d < 3; ++d)
          g[d] = brick_cell(double(real(3, i, d)), grid.p[d], grid.length[d]);
        if (grid.rank_of(g) != me) {
          ++others;
          continue;
        }
        for (int d = 0; d < 3; ++d) {
          kept.x.push_back(real(0, i, d));
          kept.v.push_back(real(1, i, d));
          kept.f.push_back(real(2, i, d));
          kept.b.push_back(real(3, i, d));
        }
        kept.type.push_back(type(i));
        kept.id.push_back(id(i));
        kept.q.push_back(charge(i));
      }
      return others;
    };
    const char* const* vectors = CheckpointPart<Real>::vectors;
    const int ntypes = types_.size();
    const auto by_type = [&](int t) { return Real(types_.charge[std::size_t(t)]); };
    // Part p of a checkpoint in parts.
    const auto take_part = [&](std::size_t p) {
      const auto part = CheckpointPart<Real>::read(cp, p, ntypes);
      cp.release_parts();
      const std::size_t n = part.n;
      return take(
          n, [&](int e, std::size_t i, int d) { return part.vec[e][std::size_t(d) * n + i]; },
          [&](std::size_t i) { return int(part.type[i]); },
          [&](std::size_t i) { return part.id[i]; },
          [&](std::size_t i) { return part.q.empty() ? by_type(part.type[i]) : part.q[i]; });
    };
    // The whole state of a one-rank checkpoint (it is in memory anyway).
    const auto take_whole = [&] {
      using HostVec = Kokkos::View<Real* [3], Kokkos::LayoutLeft, Kokkos::HostSpace>;
      const std::size_t total = std::size_t(total_);
      HostVec h[4];
      for (int e = 0; e < 4; ++e) {
        h[e] = HostVec(std::string(vectors[e]), total);
        cp.get_view(vectors[e], h[e]);
      }
      Kokkos::View<int*, Kokkos::HostSpace> ht("type", total);
      Kokkos::View<std::int64_t*, Kokkos::HostSpace> hid("id", total);
      Kokkos::View<Real*, Kokkos::HostSpace> hq("q", cp.has("q") ? total : 0);
      cp.get_view("type", ht, 0, ntypes - 1);
      cp.get_view("id", hid, std::int64_t(1), std::numeric_limits<std::int64_t>::max());
      if (cp.has("q")) cp.get_view("q", hq);
      take(
          total, [&](int e, std::size_t i, int d) { return h[e](i, d); },
          [&](std::size_t i) { return ht(i); }, [&](std::size_t i) { return hid(i); },
          [&](std::size_t i) { return cp.has("q") ? hq(i) : by_type(ht(i)); });
    };
    const auto take_every_part = [&] {
      kept = Kept{};
      for (std::size_t p = 0; p < cp.parts(); ++p) take_part(p);
    };
    // Reading may fail on some ranks only (a part one rank reads): agreed before any exchange.
    const bool own_part = cp.parts() == std::size_t(comm_->size());
    std::int64_t strays = 0;
    comm_->agree([&] {
      if (cp.parts() == 0)
        take_whole();
      else if (own_part)
        strays = std::int64_t(take_part(std::size_t(me)));
      else
        take_every_part();
    });
    if (own_part && comm_->max(strays) > 0) comm_->agree(take_every_part);
    const std::int64_t repeated = repeated_atom_id(*comm_, kept.id);
    if (repeated != 0) cp.fail("id", "holds atom id " + std::to_string(repeated) + " twice");
    std::int64_t count = std::int64_t(kept.id.size());
    comm_->sum(&count, 1);
    if (count != total_)
      throw std::logic_error("md: the ranks took " + std::to_string(count) + " of the " +
                             std::to_string(total_) + " atoms of the checkpoint");
    bool mine_by_type = true;
    for (std::size_t i = 0; i < kept.type.size(); ++i)
      if (kept.q[i] != by_type(kept.type[i])) mine_by_type = false;
    whole_by_type_ = comm_->min(std::int64_t(mine_by_type)) == 1;

    natoms_ = int(kept.id.size());
    nlocal_ = natoms_;
    const OwnedAtoms<Real, Mem> own = OwnedAtoms<Real, Mem>::allocate(natoms_);
    x_ = own.x;
    v_ = own.v;
    type_ = own.type;
    id_ = own.id;
    q_ = own.q;
    resize_owned();
    x_build_ =
        Vec(Kokkos::view_alloc(std::string("hayate::md::x_build"), Kokkos::WithoutInitializing),
            natoms_);
    auto mx = Kokkos::create_mirror_view(x_), mv = Kokkos::create_mirror_view(v_),
         mf = Kokkos::create_mirror_view(f_), mb = Kokkos::create_mirror_view(x_build_);
    auto mt = Kokkos::create_mirror_view(type_);
    auto mi = Kokkos::create_mirror_view(id_);
    auto mq = Kokkos::create_mirror_view(q_);
    for (int k = 0; k < natoms_; ++k) {
      const std::size_t i = std::size_t(k);
      for (int d = 0; d < 3; ++d) {
        mx(k, d) = kept.x[3 * i + std::size_t(d)];
        mv(k, d) = kept.v[3 * i + std::size_t(d)];
        mf(k, d) = kept.f[3 * i + std::size_t(d)];
        mb(k, d) = kept.b[3 * i + std::size_t(d)];
      }
      mt(k) = kept.type[i];
      mi(k) = kept.id[i];
      mq(k) = kept.q[i];
    }
    kept = Kept{};
    Kokkos::deep_copy(space_, x_, mx);
    Kokkos::deep_copy(space_, v_, mv);
    Kokkos::deep_copy(space_, f_, mf);
    Kokkos::deep_copy(space_, x_build_, mb);
    Kokkos::deep_copy(space_, type_, mt);
    Kokkos::deep_copy(space_, id_, mi);
    Kokkos::deep_copy(space_, q_, mq);
    space_.fence();
    attach_ghosts();
    update_charge_lookup();
    kick_pending_ = false;
    owned_packed_ = false;
    build_list();
  }

  // Several ranks, at a rebuild: the atoms that left this sub-box go to their new owners.
  void migrate() {
    settle();
    const OwnedAtoms<Real, Mem> now =
        domain_->migrate(*comm_, OwnedAtoms<Real, Mem>{x_, v_, type_, id_, q_, natoms_});
    natoms_ = now.n;
    nlocal_ = natoms_;
    x_ = now.x;
    v_ = now.v;
    type_ = now.type;
    id_ = now.id;
    q_ = now.q;
    resize_owned();
  }

  // Forces and the reorder's scratch arrays for the owned atoms.
  void resize_owned() {
    auto vec = [&](const char* label) {
      return Vec(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), natoms_);
    };
    f_ = Vec("hayate::md::f", natoms_);
    x_scratch_ = vec("hayate::md::x_scratch");
    v_scratch_ = vec("hayate::md::v_scratch");
    type_scratch_ = Kokkos::View<int*, Mem>("hayate::md::type_scratch", natoms_);
    id_scratch_ = Kokkos::View<std::int64_t*, Mem>("hayate::md::id_scratch", natoms_);
    q_scratch_ = Kokkos::View<Real*, Mem>("hayate::md::charge_scratch", natoms_);
  }

  // Several ranks: appends the ghost rows (the other ranks' atoms within cutoff + skin of
  // this sub-box, planned from the owned build positions) to x, the build positions, types,
  // charges and ids (which decide where a half list computes a pair across ranks).
  void attach_ghosts() {
    const int ghosts = domain_->plan(*comm_, x_build_, natoms_);
    nlocal_ = natoms_ + ghosts;
    x_ = domain_->with_rows(x_, natoms_, nlocal_);
    x_build_ = domain_->with_rows(x_build_, natoms_, nlocal_);
    type_ = domain_->with_rows(type_, natoms_, nlocal_);
    q_ = domain_->with_rows(q_, natoms_, nlocal_);
    id_ = domain_->with_rows(id_, natoms_, nlocal_);
    domain_->forward_positions(*comm_, x_, natoms_);
    domain_->forward_positions(*comm_, x_build_, natoms_);
    domain_->forward_values(*comm_, type_, natoms_);
    domain_->forward_values(*comm_, q_, natoms_);
    domain_->forward_values(*comm_, id_, natoms_);
    ghosts_current_ = true;
    // The interior atoms lead when a rebuild ordered them so (and on a restart of the rank
    // count that wrote the checkpoint, which kept that order); else fewer or none do.
    interior_ = overlaps() ? domain_->first_border(x_build_, natoms_) : 0;
  }

  // Wraps x into [0, L); returns the number of atoms lost (a position that is not finite).
  int wrap();

  // Atoms whose position was not finite at the last rebuild: the run has blown up.
  int lost_atoms() const { return lost_; }

  // New atom k is old atom perm(k).
  void permute(const Kokkos::View<int*, Mem>& perm);

 private:
  // Coulomb settings of charged styles and, with kspace.style ewald, the wave-space sum with the
  // splitting the accuracy chooses (which the real-space coul/long part then uses).
  void setup_coulomb(const InitialState& init, const InitialState::Whole& w) {
    if constexpr (!is_charged<Style>::value) return;
    coulomb_.qqr2e = params_.units.qqr2e;
    coulomb_.cutoff = types_.coul_cutoff;
    coulomb_.g_ewald = params_.kspace.g_ewald;
    coulomb_.eval = params_.coul_long;
    if (!params_.kspace.ewald) return;
    const EwaldSetup setup = EwaldSetup::choose(
        params_.kspace.accuracy, params_.units.qqr2e, params_.units.qqr2e * w.q2sum,
        double(w.natoms), init.box, types_.coul_cutoff, params_.kspace.g_ewald);
    coulomb_.g_ewald = setup.g_ewald;
    ewald_.setup(space_, setup, init.box, w.qsum, w.q2sum, params_.units.qqr2e);
  }

  void allocate() {
    auto vec = [&](const char* label) {
      return Vec(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), natoms_);
    };
    x_ = vec("hayate::md::x");
    v_ = vec("hayate::md::v");
    f_ = Vec("hayate::md::f", natoms_);
    x_build_ = vec("hayate::md::x_build");
    x_scratch_ = vec("hayate::md::x_scratch");
    v_scratch_ = vec("hayate::md::v_scratch");
    type_ = Kokkos::View<int*, Mem>("hayate::md::type", natoms_);
    type_scratch_ = Kokkos::View<int*, Mem>("hayate::md::type_scratch", natoms_);
    id_ = Kokkos::View<std::int64_t*, Mem>("hayate::md::id", natoms_);
    id_scratch_ = Kokkos::View<std::int64_t*, Mem>("hayate::md::id_scratch", natoms_);
    q_ = Kokkos::View<Real*, Mem>("hayate::md::charge", natoms_);
    q_scratch_ = Kokkos::View<Real*, Mem>("hayate::md::charge_scratch", natoms_);
  }

  MdParams params_;
  int natoms_ = 0;                    // owned by this rank
  int nlocal_ = 0;                    // owned, then ghosts from other ranks
  std::int64_t total_ = 0;            // on all ranks
  const core::Comm* comm_ = nullptr;  // several ranks; null on one
  std::shared_ptr<Domain<Space, Real>> domain_;
  int interior_ = 0;  // interior_atoms()
  // Where the arriving ghosts are unpacked while the interior forces run (GPUs; null: space_).
  std::shared_ptr<compat::IndependentInstance<Space>> ghost_instance_;
  Box<Real> nbox_;              // where the neighbor search bins (box_ on one rank)
  bool ghosts_current_ = true;  // ghost positions sent since the last drift
  TypeSet types_;
  Box<Real> box_;
  Space space_;
  CoulombSettings coulomb_;
  Ewald<Space> ewald_;
  PairCoeffs<Style, Real, Mem> coeffs_;
  NeighborCutoffs<Real, Mem> cutoffs_;
  TypeMass<Real> mass_;
  double cutneigh_ = 0;
  Vec x_, v_, f_, x_build_, x_scratch_, v_scratch_;
  Kokkos::View<PackedAtom<Real>*, Mem> packed_;  // atoms' records, then their ghosts'
  Kokkos::View<Real*, Mem> q_, q_scratch_;       // charges
  Kokkos::View<Real*, Mem> packed_q_;            // charges of the packed records
  bool charge_by_type_ = false;                  // update_charge_lookup()
  bool whole_by_type_ = true;                    // every atom of the system has its type's charge
  Kokkos::View<int*, Mem> type_, type_scratch_;
  Kokkos::View<std::int64_t*, Mem> id_, id_scratch_;
  CellBins<Space> bins_;
  NeighborList<Space> list_;
  ForceCompute<Space, Real, Style> force_;
  EnergyVirial ev_;
  std::int64_t step_ = 0, last_build_ = 0, rebuilds_ = 0;
  int lost_ = 0;                       // atoms lost at the last rebuild (wrap())
  mutable double moved2_ = -1;         // see moved2()
  mutable bool kick_pending_ = false;  // see finish_step()
  bool owned_packed_ = false;          // packed_ holds the atoms' current records (kick_drift())
};

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::local_forces(bool ev) {
  // Half lists on several ranks scatter to the ghost rows too.
  if (newton_ghosts() && int(f_.extent(0)) < nlocal_) f_ = domain_->with_rows(f_, natoms_, nlocal_);
  EnergyVirial result;
  const bool packed = params_.force.positions == Positions::Packed;
  // Ghost positions still to come (the drift moved them): they travel while the interior atoms'
  // forces are computed, and the border atoms' wait for them.
  const bool sending = comm_ && !ghosts_current_;
  if (sending) domain_->start_forward(*comm_, x_);
  typename ForceCompute<Space, Real, Style>::Phases phases{natoms_, {}};
  if (sending) {
    phases.at = interior_;
    phases.between = [&] {
      const Space& on = ghost_instance_ ? ghost_instance_->space() : space_;
      domain_->finish_forward(x_, natoms_, on);
      if (packed) pack(PackRows::Ghosts, on);
      if (ghost_instance_) on.fence();
      ghosts_current_ = true;
    };
  }
  if (packed) {
    pack(sending ? PackRows::Owned : PackRows::All, space_);
    const PackedPositions<Space, Real> pos{packed_, list_.ghosts.owner, nlocal_, packed_q_,
                                           charge_by_type_};
    list_.visit([&](const auto& rows) {
      result = force_.compute(params_.force, rows, pos, natoms_, f_, coeffs_, ev, phases);
    });
  } else {
    const SplitPositions<Real, Mem> pos{ConstVec(x_), type_, nbox_, q_, charge_by_type_};
    list_.visit([&](const auto& rows) {
      result = force_.compute(params_.force, rows, pos, natoms_, f_, coeffs_, ev, phases);
    });
  }
  // The pair sums of every rank; the wave-space part below is the whole system's already.
  if (comm_ && ev) {
    double sums[2] = {result.energy, result.virial};
    comm_->sum(sums, 2);
    result.energy = sums[0];
    result.virial = sums[1];
  }
  if (ev) check_tables();
  if (params_.kspace.ewald) {
    const EwaldResult k = ewald_.compute(ConstVec(x_), q_, f_, natoms_, ev);
    result.energy += k.energy;
    result.virial += k.virial;
  }
  if (ev) ev_ = result;
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::pack_charges() {
  if (!list_.use_ghosts || charge_by_type_) return;
  const int total = nlocal_ + list_.ghosts.count;
  if (int(packed_q_.extent(0)) < total)
    packed_q_ = Kokkos::View<Real*, Mem>(
        Kokkos::view_alloc(std::string("hayate::md::packed_charge"), Kokkos::WithoutInitializing),
        total + total / 5 + 1);
  const auto pq = packed_q_;
  const auto q = q_;
  const auto owner = list_.ghosts.owner;
  const int n = nlocal_;
  Kokkos::parallel_for(
      "hayate::md::pack_charges", Kokkos::RangePolicy<Space>(space_, 0, total),
      KOKKOS_LAMBDA(int k) { pq(k) = q(k < n ? k : owner(k - n)); });
}

template <class Space, class Real, class Style>
double MdSystem<Space, Real, Style>::max_displacement2() const {
  const auto x = x_, xb = x_build_;
  double m = 0;
  Kokkos::parallel_reduce(
      "hayate::md::displacement", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i, double& v) {
        const double dx = double(x(i, 0) - xb(i, 0)), dy = double(x(i, 1) - xb(i, 1)),
                     dz = double(x(i, 2) - xb(i, 2));
        const double d2 = dx * dx + dy * dy + dz * dz;
        // A position that is not finite counts as the farthest move (NaN would not compare).
        const double r2 = compat::isfinite(d2) ? d2 : 1e300;
        v = r2 > v ? r2 : v;
      },
      Kokkos::Max<double>(m));
  return m;
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::pack(PackRows rows, const Space& on) {
  const int total = nlocal_ + list_.ghosts.count;
  int first = rows == PackRows::Ghosts ? natoms_ : 0;
  if (rows != PackRows::Ghosts) {
    if (owned_packed_ && int(packed_.extent(0)) >= total) first = natoms_;
    owned_packed_ = false;
    if (int(packed_.extent(0)) < total)
      packed_ = Kokkos::View<PackedAtom<Real>*, Mem>(
          Kokkos::view_alloc(std::string("hayate::md::packed"), Kokkos::WithoutInitializing),
          total + total / 5 + 1);
  }
  if (first == total) return;
  // The records whose atom (the image's owner) is a row in [from, to).
  const int from = rows == PackRows::Ghosts ? natoms_ : 0;
  const int to = rows == PackRows::Owned ? natoms_ : nlocal_;
  const auto q = packed_;
  const auto x = x_;
  const auto type = type_;
  const auto owner = list_.ghosts.owner, code = list_.ghosts.code;
  const Box<Real> box = nbox_;
  const int n = nlocal_;
  Kokkos::parallel_for(
      "hayate::md::pack", Kokkos::RangePolicy<Space>(on, first, total), KOKKOS_LAMBDA(int k) {
        const int i = k < n ? k : owner(k - n);
        if (i < from || i >= to) return;
        const int c = k < n ? 13 : code(k - n);
        q(k) = packed_record(x(i, 0), x(i, 1), x(i, 2), type(i), c, box);
      });
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::kick_drift() {
  const bool pending = kick_pending_;
  kick_pending_ = false;
  ghosts_current_ = false;
  const bool write_q =
      params_.force.positions == Positions::Packed && int(packed_.extent(0)) >= natoms_;
  const auto x = x_, v = v_, f = f_;
  const auto q = packed_;
  const auto type = type_;
  const auto mass = mass_;
  const Box<Real> box = nbox_;
  const Real dt = Real(params_.dt), half = Real(0.5 * params_.dt * params_.units.ftm2v);
  Kokkos::parallel_for(
      "hayate::md::verlet_initial", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i) {
        const int t = type(i);
        const Real h = half / mass.mass[t];
        Real p[3];
        for (int d = 0; d < 3; ++d) {
          const Real fd = f(i, d);
          Real vd = v(i, d);
          if (pending) vd += h * fd;
          vd += h * fd;
          v(i, d) = vd;
          p[d] = x(i, d) + dt * vd;
          x(i, d) = p[d];
        }
        if (write_q) q(i) = packed_record(p[0], p[1], p[2], t, 13, box);
      });
  owned_packed_ = write_q;
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::kick() const {
  const auto v = v_, f = f_;
  const auto type = type_;
  const auto mass = mass_;
  const Real half = Real(0.5 * params_.dt * params_.units.ftm2v);
  Kokkos::parallel_for(
      "hayate::md::verlet_final", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i) {
        const Real h = half / mass.mass[type(i)];
        for (int d = 0; d < 3; ++d) v(i, d) += h * f(i, d);
      });
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::langevin() {
  const auto v = v_, f = f_;
  const auto type = type_;
  const auto id = id_;
  const auto mass = mass_;
  const double damp = params_.damp, kt = params_.units.boltz * params_.t_target, dt = params_.dt,
               mvv2e = params_.units.mvv2e, ftm2v = params_.units.ftm2v;
  const std::uint64_t seed = params_.seed, step = static_cast<std::uint64_t>(step_);
  Kokkos::parallel_for(
      "hayate::md::langevin", Kokkos::RangePolicy<Space>(space_, 0, natoms_), KOKKOS_LAMBDA(int i) {
        const double m = double(mass.mass[type(i)]);
        const double sigma = compat::sqrt(2.0 * m * kt / (damp * dt * mvv2e)) / ftm2v;
        const std::uint64_t stream = static_cast<std::uint64_t>(id(i));
        for (int d = 0; d < 3; ++d) {
          const double g = util::normal01(seed, stream, 3 * step + std::uint64_t(d));
          f(i, d) += Real(-m * double(v(i, d)) / damp / ftm2v + sigma * g);
        }
      });
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::berendsen() {
  const double t = temperature();
  if (!(t > 0)) return;
  const double lambda2 = 1.0 + params_.dt / params_.tau * (params_.t_target / t - 1.0);
  const Real lambda = Real(std::sqrt(lambda2 > 0 ? lambda2 : 0.0));
  const auto v = v_;
  Kokkos::parallel_for(
      "hayate::md::berendsen", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i) {
        for (int d = 0; d < 3; ++d) v(i, d) *= lambda;
      });
}

template <class Space, class Real, class Style>
double MdSystem<Space, Real, Style>::kinetic_energy() const {
  settle();
  const auto v = v_;
  const auto type = type_;
  const auto mass = mass_;
  double ke = 0;
  Kokkos::parallel_reduce(
      "hayate::md::kinetic", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i, double& s) {
        const double vx = v(i, 0), vy = v(i, 1), vz = v(i, 2);
        s += 0.5 * double(mass.mass[type(i)]) * (vx * vx + vy * vy + vz * vz);
      },
      ke);
  if (comm_) comm_->sum(&ke, 1);
  return ke * params_.units.mvv2e;
}

template <class Space, class Real, class Style>
int MdSystem<Space, Real, Style>::wrap() {
  owned_packed_ = false;
  const auto x = x_;
  const Box<Real> box = box_;
  int lost = 0;
  Kokkos::parallel_reduce(
      "hayate::md::wrap", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
      KOKKOS_LAMBDA(int i, int& count) {
        bool finite = true;
        for (int d = 0; d < 3; ++d) {
          const Real l = box.length[d];
          Real p = x(i, d);
          finite = finite && compat::isfinite(p);
          p -= l * compat::floor(p / l);
          if (p >= l) p -= l;  // rounding of tiny negative values
          x(i, d) = p;
        }
        if (!finite) ++count;
      },
      lost);
  return lost;
}

template <class Space, class Real, class Style>
void MdSystem<Space, Real, Style>::permute(const Kokkos::View<int*, Mem>& perm) {
  settle();  // f is not permuted
  owned_packed_ = false;
  const auto x = x_, v = v_, xs = x_scratch_, vs = v_scratch_;
  const auto type = type_, ts = type_scratch_;
  const auto id = id_, is = id_scratch_;
  const auto q = q_, qs = q_scratch_;
  Kokkos::parallel_for(
      "hayate::md::reorder", Kokkos::RangePolicy<Space>(space_, 0, natoms_), KOKKOS_LAMBDA(int k) {
        const int p = perm(k);
        for (int d = 0; d < 3; ++d) {
          xs(k, d) = x(p, d);
          vs(k, d) = v(p, d);
        }
        ts(k) = type(p);
        is(k) = id(p);
        qs(k) = q(p);
      });
  std::swap(x_, x_scratch_);
  std::swap(v_, v_scratch_);
  std::swap(type_, type_scratch_);
  std::swap(id_, id_scratch_);
  std::swap(q_, q_scratch_);
}

// The members above that launch kernel lambdas are compiled once per built (style, precision),
// in that style's md_problem_<style>_<real>.cpp (exec/instantiate.hpp says why).
#define HAYATE_MD_SYSTEM_KERNELS(EXTERN, S, R, ST)                      \
  EXTERN template void MdSystem<S, R, ST>::local_forces(bool);          \
  EXTERN template void MdSystem<S, R, ST>::pack_charges();              \
  EXTERN template double MdSystem<S, R, ST>::max_displacement2() const; \
  EXTERN template void MdSystem<S, R, ST>::pack(PackRows, const S&);    \
  EXTERN template void MdSystem<S, R, ST>::kick_drift();                \
  EXTERN template void MdSystem<S, R, ST>::kick() const;                \
  EXTERN template void MdSystem<S, R, ST>::langevin();                  \
  EXTERN template void MdSystem<S, R, ST>::berendsen();                 \
  EXTERN template double MdSystem<S, R, ST>::kinetic_energy() const;    \
  EXTERN template int MdSystem<S, R, ST>::wrap();                       \
  EXTERN template void MdSystem<S, R, ST>::permute(const Kokkos::View<int*, S::memory_space>&);
#define HAYATE_MD_SYSTEM_BUILT_(EXTERN, S) \
  HAYATE_MD_FOR_EACH_BUILT_STYLE(HAYATE_MD_SYSTEM_KERNELS, EXTERN, S)
HAYATE_FOR_EACH_SPACE(HAYATE_MD_SYSTEM_BUILT_, extern)

}  // namespace hayate::md
