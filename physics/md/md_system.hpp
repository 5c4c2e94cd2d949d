#pragma once
// The MD state on one execution-space instance and the algorithms that advance it: velocity
// Verlet with optional Langevin or Berendsen thermostats, neighbor rebuilds with cell-sorted
// reordering, thermodynamic output in LAMMPS' conventions, and bitwise checkpoints. The pair
// style is a template argument: the whole run uses one.
#include "compat/kokkos_compat.hpp"
#include "ewald.hpp"
#include "force.hpp"
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
#include <stdexcept>
#include <string>
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
  std::size_t size() const { return type.size(); }
  double charge(std::size_t i) const { return q.empty() ? types.charge[type[i]] : q[i]; }
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
  double dt = 0.005;
  double skin = 0.3;
  int every = 20;     // forced rebuild period in steps; 0 = only on displacement
  bool check = true;  // also rebuild when an atom moved more than skin / 2
  Layout layout = Layout::Csr;
  ForceOptions force;
  Thermostat thermostat = Thermostat::None;
  double t_target = 1.0, damp = 1.0, tau = 0.5;
  std::uint64_t seed = 12345;
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
    setup_coulomb(init);
    coeffs_ = PairCoeffs<Style, Real, Mem>::make(types_, coulomb_);
    // Each pair's list reaches the larger of its own cutoff and the Coulomb cutoff.
    std::vector<double> reach(types_.cutoff);
    for (double& r : reach) r = r > types_.coul_cutoff ? r : types_.coul_cutoff;
    cutoffs_ = NeighborCutoffs<Real, Mem>::make(reach, types_.size(), params.skin);
    for (int t = 0; t < types_.size(); ++t) mass_.mass[t] = Real(types_.mass[t]);
    cutneigh_ = types_.max_cutoff() + params.skin;
    list_.layout = params.layout;
    list_.kind = params.force.list;
    list_.use_ghosts = params.force.positions == Positions::Packed;
    allocate();
    auto hx = Kokkos::create_mirror_view(x_);
    auto hv = Kokkos::create_mirror_view(v_);
    auto ht = Kokkos::create_mirror_view(type_);
    auto hi = Kokkos::create_mirror_view(id_);
    auto hq = Kokkos::create_mirror_view(q_);
    for (int i = 0; i < natoms_; ++i) {
      for (int d = 0; d < 3; ++d) {
        hx(i, d) = Real(init.x[3 * i + d]);
        hv(i, d) = Real(init.v[3 * i + d]);
      }
      ht(i) = init.type[i];
      hi(i) = init.id[i];
      hq(i) = Real(init.charge(i));
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

  int size() const { return natoms_; }
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
      const auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q_);
      const auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), type_);
      for (int i = 0; i < natoms_; ++i)
        if (hq(i) != Real(types_.charge[std::size_t(ht(i))])) return;
      charge_by_type_ = true;
    }
  }
  bool charges_by_type() const { return charge_by_type_; }

  // Wraps positions into the box, reorders atoms by cell for locality, records the build
  // positions and builds the list from them.
  void rebuild() {
    owned_packed_ = false;
    lost_ = wrap();
    bins_.bin(space_, ConstVec(x_), box_, cutneigh_);
    permute(bins_.atoms);
    Kokkos::deep_copy(space_, x_build_, x_);
    build_list();
    last_build_ = step_;
    ++rebuilds_;
  }

  // The list is a pure function of the build positions, so a restored run rebuilds exactly
  // the list the uninterrupted run was using.
  void build_list() {
    bins_.bin(space_, ConstVec(x_build_), box_, cutneigh_);
    list_.build(space_, ConstVec(x_build_), Kokkos::View<const int*, Mem>(type_), bins_, box_,
                cutoffs_, cutneigh_);
    if constexpr (is_charged<Style>::value) pack_charges();
  }

  // Charges of the packed records (atoms, then their periodic images), after each list build.
  void pack_charges() {
    if (!list_.use_ghosts || charge_by_type_) return;
    const int total = natoms_ + list_.ghosts.count;
    if (int(packed_q_.extent(0)) < total)
      packed_q_ = Kokkos::View<Real*, Mem>(
          Kokkos::view_alloc(std::string("hayate::md::packed_charge"), Kokkos::WithoutInitializing),
          total + total / 5 + 1);
    const auto pq = packed_q_;
    const auto q = q_;
    const auto owner = list_.ghosts.owner;
    const int n = natoms_;
    Kokkos::parallel_for(
        "hayate::md::pack_charges", Kokkos::RangePolicy<Space>(space_, 0, total),
        KOKKOS_LAMBDA(int k) { pq(k) = q(k < n ? k : owner(k - n)); });
  }

  bool needs_rebuild() const {
    moved2_ = -1;
    if (params_.every > 0 && step_ - last_build_ >= params_.every) return true;
    if (!params_.check) return false;
    const double half = 0.5 * params_.skin;
    // A position that is not finite forces the rebuild that counts it (wrap()).
    moved2_ = max_displacement2();
    return moved2_ > half * half;
  }

  // The largest squared displacement since the last build, as the last needs_rebuild() measured
  // it (1e300 for a position that is not finite); -1 when it measured none.
  double moved2() const { return moved2_; }
  std::int64_t last_build() const { return last_build_; }

  double max_displacement2() const {
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

  void compute_forces(bool ev) {
    EnergyVirial result;
    if (params_.force.positions == Positions::Packed) {
      pack();
      const PackedPositions<Space, Real> pos{packed_, list_.ghosts.owner, natoms_, packed_q_,
                                             charge_by_type_};
      list_.visit([&](const auto& rows) {
        result = force_.compute(params_.force, rows, pos, natoms_, f_, coeffs_, ev);
      });
    } else {
      const SplitPositions<Real, Mem> pos{ConstVec(x_), type_, box_, q_, charge_by_type_};
      list_.visit([&](const auto& rows) {
        result = force_.compute(params_.force, rows, pos, natoms_, f_, coeffs_, ev);
      });
    }
    if (params_.kspace.ewald) {
      const EwaldResult k = ewald_.compute(ConstVec(x_), q_, f_, natoms_, ev);
      result.energy += k.energy;
      result.virial += k.virial;
    }
    if (ev) ev_ = result;
  }

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
  // has just written the atoms' records, only the ghosts are left.
  void pack() {
    const int total = natoms_ + list_.ghosts.count;
    const int first = owned_packed_ && int(packed_.extent(0)) >= total ? natoms_ : 0;
    owned_packed_ = false;
    if (int(packed_.extent(0)) < total)
      packed_ = Kokkos::View<PackedAtom<Real>*, Mem>(
          Kokkos::view_alloc(std::string("hayate::md::packed"), Kokkos::WithoutInitializing),
          total + total / 5 + 1);
    if (first == total) return;
    const auto q = packed_;
    const auto x = x_;
    const auto type = type_;
    const auto owner = list_.ghosts.owner, code = list_.ghosts.code;
    const Box<Real> box = box_;
    const int n = natoms_;
    Kokkos::parallel_for(
        "hayate::md::pack", Kokkos::RangePolicy<Space>(space_, first, total), KOKKOS_LAMBDA(int k) {
          const int i = k < n ? k : owner(k - n);
          const int c = k < n ? 13 : code(k - n);
          q(k) = packed_record(x(i, 0), x(i, 1), x(i, 2), type(i), c, box);
        });
  }

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
  void kick_drift() {
    const bool pending = kick_pending_;
    kick_pending_ = false;
    const bool write_q =
        params_.force.positions == Positions::Packed && int(packed_.extent(0)) >= natoms_;
    const auto x = x_, v = v_, f = f_;
    const auto q = packed_;
    const auto type = type_;
    const auto mass = mass_;
    const Box<Real> box = box_;
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

  void kick() const {
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

  // Langevin (as LAMMPS' fix langevin, with Gaussian noise): drag -m v / damp plus a random
  // force of variance 2 m k_B T / (damp dt), in the units' force units. The noise of atom `id`
  // at step s is a pure function of (seed, id, s), so runs are independent of backend, ordering
  // and restarts.
  void langevin() {
    const auto v = v_, f = f_;
    const auto type = type_;
    const auto id = id_;
    const auto mass = mass_;
    const double damp = params_.damp, kt = params_.units.boltz * params_.t_target, dt = params_.dt,
                 mvv2e = params_.units.mvv2e, ftm2v = params_.units.ftm2v;
    const std::uint64_t seed = params_.seed, step = static_cast<std::uint64_t>(step_);
    Kokkos::parallel_for(
        "hayate::md::langevin", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
        KOKKOS_LAMBDA(int i) {
          const double m = double(mass.mass[type(i)]);
          const double sigma = compat::sqrt(2.0 * m * kt / (damp * dt * mvv2e)) / ftm2v;
          const std::uint64_t stream = static_cast<std::uint64_t>(id(i));
          for (int d = 0; d < 3; ++d) {
            const double g = util::normal01(seed, stream, 3 * step + std::uint64_t(d));
            f(i, d) += Real(-m * double(v(i, d)) / damp / ftm2v + sigma * g);
          }
        });
  }

  // Berendsen velocity rescaling towards the target temperature with time constant tau.
  void berendsen() {
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

  double kinetic_energy() const {
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
    return ke * params_.units.mvv2e;
  }

  // Degrees of freedom as LAMMPS' compute temp: 3N minus the 3 of the fixed total momentum.
  double dof() const { return natoms_ > 1 ? 3.0 * natoms_ - 3.0 : 3.0 * natoms_; }
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
    t.pe = ev_.energy / natoms_;
    const double kb = params_.units.boltz;
    t.ke = 0.5 * dof() * kb * t.temp / natoms_;
    t.etotal = t.pe + t.ke;
    t.press = (dof() * kb * t.temp + ev_.virial) / (3.0 * volume()) * params_.units.nktv2p;
    return t;
  }

  void save(core::CheckpointWriter& cp) const {
    settle();
    cp.put<std::int64_t>("natoms", natoms_);
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
    cp.put_view("x", x_);
    cp.put_view("v", v_);
    cp.put_view("f", f_);
    cp.put_view("x_build", x_build_);
    cp.put_view("type", type_);
    cp.put_view("id", id_);
    cp.put_view("q", q_);
  }

  // Restores every piece of state from a checkpoint that md::check_checkpoint accepted against
  // the input this system was made from; the counts and indices are checked again as they are
  // read (InputError naming the entry).
  void restore(const core::CheckpointReader& cp) {
    const auto natoms = cp.get<std::int64_t>("natoms", 0, std::numeric_limits<std::int32_t>::max());
    if (natoms != natoms_)
      cp.fail("natoms",
              "holds " + std::to_string(natoms) + " atoms, the input " + std::to_string(natoms_));
    if (cp.get<std::int32_t>("real_bytes", 4, 8) != std::int32_t(sizeof(Real)))
      cp.fail("real_bytes", "was written in another precision");
    step_ = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
    last_build_ = cp.get<std::int64_t>("last_build", 0, step_);
    rebuilds_ = cp.get<std::int64_t>("rebuilds", 0, std::numeric_limits<std::int64_t>::max());
    ev_.energy = cp.get<double>("energy");
    ev_.virial = cp.get<double>("virial");
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

  // Wraps x into [0, L); returns the number of atoms lost (a position that is not finite).
  int wrap() {
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

  // Atoms whose position was not finite at the last rebuild: the run has blown up.
  int lost_atoms() const { return lost_; }

  // New atom k is old atom perm(k).
  void permute(const Kokkos::View<int*, Mem>& perm) {
    settle();  // f is not permuted
    owned_packed_ = false;
    const auto x = x_, v = v_, xs = x_scratch_, vs = v_scratch_;
    const auto type = type_, ts = type_scratch_;
    const auto id = id_, is = id_scratch_;
    const auto q = q_, qs = q_scratch_;
    Kokkos::parallel_for(
        "hayate::md::reorder", Kokkos::RangePolicy<Space>(space_, 0, natoms_),
        KOKKOS_LAMBDA(int k) {
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

 private:
  // Coulomb settings of charged styles and, with kspace.style ewald, the wave-space sum with the
  // splitting the accuracy chooses (which the real-space coul/long part then uses).
  void setup_coulomb(const InitialState& init) {
    if constexpr (!is_charged<Style>::value) return;
    coulomb_.qqr2e = params_.units.qqr2e;
    coulomb_.cutoff = types_.coul_cutoff;
    coulomb_.g_ewald = params_.kspace.g_ewald;
    if (!params_.kspace.ewald) return;
    double qsum = 0, q2sum = 0;
    for (std::size_t i = 0; i < init.size(); ++i) {
      qsum += init.charge(i);
      q2sum += init.charge(i) * init.charge(i);
    }
    const EwaldSetup setup = EwaldSetup::choose(
        params_.kspace.accuracy, params_.units.qqr2e, params_.units.qqr2e * q2sum,
        double(init.size()), init.box, types_.coul_cutoff, params_.kspace.g_ewald);
    coulomb_.g_ewald = setup.g_ewald;
    ewald_.setup(space_, setup, init.box, qsum, q2sum, params_.units.qqr2e);
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
  int natoms_ = 0;
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

}  // namespace hayate::md
