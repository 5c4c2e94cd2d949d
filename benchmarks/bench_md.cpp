// Lennard-Jones MD (pair style lj/cut) on every backend:
//   md/force/<case>/<variant>/<layout>/<precision>/<backend>
//       100 force evaluations per iteration (the iteration time); the counter
//       s_per_100_with_transfer adds copying positions to the device and forces back before
//       and after every call, as the source study measured. Cases: rho1.0 (100,000 atoms) and
//       rho0.5 (62,500 atoms), cutoff 2.5, skin 0.3, lattice rattled by up to 0.15 sigma.
//   md/steps/<atoms>/<variant>/<precision>/<backend>
//       100 full velocity-Verlet steps of the in.lj set-up (fcc 0.8442, T 1.44, rebuild every
//       20 steps) per iteration; counter atom_steps_per_second.
// Variants are named list_scatter_parallel[_packed] (full_thread, half_atomic_warp_packed, ...);
// "auto" is what the tuning keys' auto picks on that backend. Step variants ending in _shuffled
// start from a randomly ordered lattice, sorted by cell at the first rebuild.
#include "bench_util.hpp"
#include "md/ewald.hpp"
#include "md/md_setup.hpp"
#include "md/md_system.hpp"
#include "md/pair_table.hpp"
#include "md/potentials/coulomb.hpp"
#include "md/potentials/lj_cut.hpp"
#include "md/potentials/table.hpp"

#include <fmt/format.h>
#include "util/random.hpp"

#include <string>
#include <vector>

namespace hayate::bench {
namespace {

using md::ForceOptions;
using md::Layout;
using md::ListKind;
using md::Parallel;
using md::Scatter;

// Rock salt of unit charges at a = 2.2 (lj units), two types of LJ ions: a charged LJ salt.
md::InitialState charged_salt(int cells, const std::string& style) {
  md::InitialState s = md::rocksalt_lattice(2.2, cells, cells, cells, 0, 1);
  const bool lj = style.rfind("lj/cut", 0) == 0;
  s.types = md::TypeSet::empty(style, 2, 2);
  s.types.charge = {1.0, -1.0};
  s.types.mass = {1.0, 1.5};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      s.types.pair(a, b)[0] = 0.5;
      s.types.pair(a, b)[1] = 1.0;
      s.types.cutoff[a * 2 + b] = 2.5;
    }
  // The same reach as lj/cut, so both run on the same neighbor lists.
  s.types.coul_cutoff = lj && style != "lj/cut" ? 2.5 : 0.0;
  md::create_velocities(s, 1.0, 7);
  return s;
}

md::InitialState bench_state(double density, int nx, int ny, int nz, double rattle) {
  md::InitialState s = md::fcc_lattice(density, nx, ny, nz, {0});
  s.types = md::TypeSet::single();
  for (std::size_t k = 0; k < s.x.size(); ++k)
    s.x[k] += rattle * (2.0 * util::uniform01(2024, k, 0) - 1.0);
  md::create_velocities(s, 1.44, 87287);
  return s;
}

// The same atoms in a random memory order (as a data file of a long run may hold them).
void shuffle(md::InitialState& s) {
  const std::size_t n = s.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  for (std::size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[std::size_t(util::uniform01(77, i, 0) * double(i + 1)) % (i + 1)]);
  md::InitialState t = s;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = order[k];
    for (int d = 0; d < 3; ++d) {
      t.x[3 * k + d] = s.x[3 * i + d];
      t.v[3 * k + d] = s.v[3 * i + d];
    }
    t.type[k] = s.type[i];
    t.id[k] = s.id[i];
  }
  s = std::move(t);
}

struct Variant {
  ForceOptions options;
  bool is_auto;
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (const auto positions : {md::Positions::Split, md::Positions::Packed})
    for (const ForceOptions o :
         {ForceOptions{ListKind::Full, Scatter::Atomic, Parallel::Thread},
          ForceOptions{ListKind::Full, Scatter::Atomic, Parallel::Team},
          ForceOptions{ListKind::Half, Scatter::Atomic, Parallel::Thread},
          ForceOptions{ListKind::Half, Scatter::Atomic, Parallel::Team},
          ForceOptions{ListKind::Half, Scatter::Duplicated, Parallel::Thread},
          ForceOptions{ListKind::Half, Scatter::Duplicated, Parallel::Team}}) {
      ForceOptions v = o;
      v.positions = positions;
      out.push_back({v, false});
    }
  out.push_back({{}, true});
  return out;
}

// Resolves `auto` for a space and skips variants the space cannot run.
template <class Space, class Real>
bool resolve(const Variant& v, ForceOptions& o, Layout& layout, bool fixed_layout,
             benchmark::State& state) {
  const core::BackendTraits traits = core::backend_traits(core::space_name<Space>());
  o = v.is_auto ? md::auto_force_options(traits) : v.options;
  if (!fixed_layout) layout = md::auto_layout(traits, o.parallel);
  if (!md::ForceCompute<Space, Real, md::LjCut>::supports(o)) {
    state.SkipWithError("duplicated scatter needs one force copy per thread: not on GPUs");
    return false;
  }
  return true;
}

struct ForceCase {
  const char* name;
  double density;
  int cells[3];
};

template <class Real>
void register_force(const ForceCase& c, const Variant& v, Layout layout, bool fixed_layout) {
  const std::string variant = v.is_auto ? "auto" : md::variant_name(v.options);
  const std::string name = std::string("md/force/") + c.name + "/" + variant + "/" +
                           (fixed_layout ? md::layout_name(layout) : "auto_layout") + "/" +
                           (sizeof(Real) == 4 ? "float" : "double");
  register_for_each_space(
      name,
      [c, v, layout, fixed_layout](auto space, benchmark::State& state) {
        using Space = decltype(space);
        ForceOptions o;
        Layout l = layout;
        if (!resolve<Space, Real>(v, o, l, fixed_layout, state)) {
          for (auto _ : state) {
          }
          return;
        }
        md::MdParams params;
        params.force = o;
        params.layout = l;
        md::MdSystem<Space, Real, md::LjCut> sys(
            bench_state(c.density, c.cells[0], c.cells[1], c.cells[2], 0.15), params);
        sys.initialize();
        auto hx = Kokkos::create_mirror_view(sys.positions());
        auto hf = Kokkos::create_mirror_view(sys.forces());
        Kokkos::deep_copy(hx, sys.positions());
        const int calls = 100;
        sys.compute_forces(false);  // warm-up: scatter buffers, caches, clocks
        double with_transfer = 0;
        for (auto _ : state) {
          time_region(state, space, [&] {
            for (int k = 0; k < calls; ++k) sys.compute_forces(false);
          });
          space.fence();
          const auto start = std::chrono::steady_clock::now();
          for (int k = 0; k < calls; ++k) {
            Kokkos::deep_copy(sys.positions(), hx);
            sys.compute_forces(false);
            Kokkos::deep_copy(hf, sys.forces());
          }
          space.fence();
          with_transfer +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        const double pairs = double(sys.neighbors().total);
        state.counters["atoms"] = sys.size();
        state.counters["neighbors_per_atom"] = pairs / sys.size();
        state.counters["atoms_per_second"] = rate(double(sys.size()) * calls);
        state.counters["s_per_100_with_transfer"] =
            benchmark::Counter(with_transfer, benchmark::Counter::kAvgIterations);
        state.SetLabel(md::variant_name(o) + "/" + md::layout_name(l));
      },
      [](benchmark::internal::Benchmark* b) { b->Iterations(3); });
}

// order: "" (lattice order) or "shuffled" (random initial order); atoms are sorted by cell at
// each rebuild.
template <class Real>
void register_steps(int cells, const Variant& v, const std::string& order = "") {
  const std::string variant =
      (v.is_auto ? "auto" : md::variant_name(v.options)) + (order.empty() ? "" : "_" + order);
  const int atoms = 4 * cells * cells * cells;
  const std::string name = "md/steps/" + std::to_string(atoms) + "/" + variant + "/" +
                           (sizeof(Real) == 4 ? "float" : "double");
  register_for_each_space(
      name,
      [cells, v, order](auto space, benchmark::State& state) {
        using Space = decltype(space);
        ForceOptions o;
        Layout l = Layout::Csr;
        if (!resolve<Space, Real>(v, o, l, false, state)) {
          for (auto _ : state) {
          }
          return;
        }
        md::MdParams params;
        params.force = o;
        params.layout = l;
        params.dt = 0.005;
        params.skin = 0.3;
        params.every = 20;
        params.check = false;
        md::InitialState init = bench_state(0.8442, cells, cells, cells, 0.0);
        if (!order.empty()) shuffle(init);
        md::MdSystem<Space, Real, md::LjCut> sys(init, params);
        sys.initialize();
        const int steps = 100;
        for (auto _ : state) {
          // As LAMMPS' loop time: energies only where thermo would print (every 50 steps).
          time_region(state, space, [&] {
            for (int s = 1; s <= steps; ++s) sys.advance(s % 50 == 0);
          });
        }
        state.counters["atoms"] = sys.size();
        state.counters["atom_steps_per_second"] = rate(double(sys.size()) * steps);
        state.counters["temp"] = sys.thermo().temp;
        state.SetLabel(md::variant_name(o) + "/" + md::layout_name(l));
      },
      [](benchmark::internal::Benchmark* b) { b->Iterations(2); });
}

// A charged LJ salt (rock salt, unit charges, lj units) of about n atoms: 100 steps of the pair
// forces of `Style` (coul/long with the splitting the Ewald sum would take, but its wave-space
// part left out), against lj/cut on the same atoms; and the wave-space part alone. per_atom:
// charges read per pair (tuning.charges: per_atom) rather than from the pair's types; eval:
// coul/long from its table (the default) or the expression (pair.coul_long: analytic); half:
// a half list with atomic adds (tuning.list: half) instead of the backend's automatic choice.
struct ChargedCase {
  bool per_atom = false;
  md::CoulLongEval eval = md::CoulLongEval::Table;
  bool half = false;
};
template <class Style>
void register_charged_pairs(int cells, ChargedCase v = {}) {
  const int atoms = 8 * cells * cells * cells;
  const std::string name = std::string("md/charged/") + std::to_string(atoms) + "/" +
                           (std::string(Style::name) == "lj/cut" ? "lj_cut" : "lj_cut_coul_long") +
                           (v.per_atom ? "_per_atom" : "") +
                           (v.eval == md::CoulLongEval::Analytic ? "_analytic" : "") +
                           (v.half ? "_half" : "") + "/double";
  register_for_each_space(
      name,
      [cells, v](auto space, benchmark::State& state) {
        using Space = decltype(space);
        md::MdParams params;
        params.force = md::auto_force_options(core::backend_traits(core::space_name<Space>()));
        if (v.per_atom) params.force.charges = md::ChargeLookup::PerAtom;
        if (v.half) {
          params.force.list = md::ListKind::Half;
          params.force.scatter = md::Scatter::Atomic;
        }
        params.coul_long = v.eval;
        params.layout =
            md::auto_layout(core::backend_traits(core::space_name<Space>()), params.force.parallel);
        params.skin = 0.3;
        params.every = 20;
        params.check = false;
        params.kspace.g_ewald = 1.1;
        md::MdSystem<Space, double, Style> sys(charged_salt(cells, std::string(Style::name)),
                                               params);
        sys.initialize();
        const int steps = 100;
        for (auto _ : state)
          time_region(state, space, [&] {
            for (int s = 1; s <= steps; ++s) sys.advance(false);
          });
        state.counters["atoms"] = sys.size();
        state.counters["atom_steps_per_second"] = rate(double(sys.size()) * steps);
      },
      [](benchmark::internal::Benchmark* b) { b->Iterations(2); });
}

// The wave-space part alone (structure factors and forces, no energy), LAMMPS' "Kspace" time.
void register_ewald(int cells, double accuracy) {
  const int atoms = 8 * cells * cells * cells;
  const std::string name = "md/ewald/" + std::to_string(atoms) +
                           "/accuracy:" + fmt::format("{:g}", accuracy) + "/double";
  register_for_each_space(
      name,
      [cells, accuracy](auto space, benchmark::State& state) {
        using Space = decltype(space);
        using Mem = typename Space::memory_space;
        const md::InitialState init = charged_salt(cells, md::LjCutCoulLong::name);
        const int n = init.size();
        Kokkos::View<double*[3], Kokkos::LayoutRight, Mem> x("x", n), f("f", n);
        Kokkos::View<double*, Mem> q("q", n);
        auto hx = Kokkos::create_mirror_view(x);
        auto hq = Kokkos::create_mirror_view(q);
        double q2 = 0;
        for (int i = 0; i < n; ++i) {
          for (int d = 0; d < 3; ++d) hx(i, d) = init.x[3 * i + d];
          hq(i) = init.charge(i);
          q2 += hq(i) * hq(i);
        }
        Kokkos::deep_copy(x, hx);
        Kokkos::deep_copy(q, hq);
        // A real-space cutoff of 5 (4.5 ion spacings, as 12 Angstrom in NaCl): at 2.5 the
        // wave-space sum would need eight times the vectors.
        const md::EwaldSetup setup = md::EwaldSetup::choose(accuracy, 1.0, q2, n, init.box, 5.0);
        md::Ewald<Space> ewald;
        ewald.setup(space, setup, init.box, 0.0, q2, 1.0);
        for (auto _ : state) time_region(state, space, [&] { ewald.compute(x, q, f, n, false); });
        state.counters["atoms"] = n;
        state.counters["k_vectors"] = ewald.kcount();
        state.counters["calls_per_second"] = rate(1.0);
      },
      [](benchmark::internal::Benchmark* b) { b->MinTime(0.2); });
}

// pair style table against the analytic lj/cut it tabulates, in.lj's atoms (fcc at 0.8442,
// cutoff 2.5), 100 steps each; the same neighbor lists and variants (auto).
template <class Real>
void register_table_vs_lj(int cells) {
  const int atoms = 4 * cells * cells * cells;
  for (const bool table : {false, true}) {
    const std::string name = "md/table/" + std::to_string(atoms) + "/" +
                             (table ? "table_linear" : "lj_cut") + "/" +
                             (sizeof(Real) == 4 ? "float" : "double");
    register_for_each_space(
        name,
        [cells, table](auto space, benchmark::State& state) {
          using Space = decltype(space);
          md::MdParams params;
          params.force = md::auto_force_options(core::backend_traits(core::space_name<Space>()));
          params.layout = md::auto_layout(core::backend_traits(core::space_name<Space>()),
                                          params.force.parallel);
          params.skin = 0.3;
          params.every = 20;
          params.check = false;
          md::InitialState s = bench_state(0.8442, cells, cells, cells, 0.0);
          auto run = [&](auto style) {
            md::MdSystem<Space, Real, decltype(style)> sys(s, params);
            sys.initialize();
            for (auto _ : state)
              time_region(state, space, [&] {
                for (int k = 1; k <= 100; ++k) sys.advance(false);
              });
            state.counters["atoms"] = sys.size();
            state.counters["atom_steps_per_second"] = rate(double(sys.size()) * 100);
          };
          if (table) {
            s.types = md::TypeSet::empty("table", 1, 1);
            s.types.tables.push_back(
                md::table_of_style("lj/cut", {1.0, 1.0}, 0.5, 2.5, md::TableSampling{1000, false}));
            s.types.cutoff = {2.5};
            run(md::Table{});
          } else {
            run(md::LjCut{});
          }
        },
        [](benchmark::internal::Benchmark* b) { b->Iterations(2); });
  }
}

}  // namespace

void register_md_suite() {
  const ForceCase cases[] = {{"rho1.0_100000", 1.0, {25, 25, 40}},
                             {"rho0.5_62500", 0.5, {25, 25, 25}}};
  for (const auto& c : cases)
    for (const auto& v : variants()) {
      register_force<double>(c, v, Layout::Csr, false);
      register_force<float>(c, v, Layout::Csr, false);
    }
  // Layout comparison on the denser case, one full and one half variant per parallel mode.
  for (const auto layout : {Layout::Csr, Layout::Padded, Layout::Transposed})
    for (const auto& v : variants()) {
      if (v.is_auto || v.options.scatter == Scatter::Duplicated) continue;
      register_force<double>(cases[0], v, layout, true);
    }
  for (const int cells : {20, 40, 80, 100})
    for (const auto& v : variants()) {
      register_steps<double>(cells, v);
      if (v.is_auto) register_steps<float>(cells, v);
      if (v.is_auto && cells >= 40) register_steps<double>(cells, v, "shuffled");
    }
  // Charges: 13,824 and 110,592 ions; the wave-space sum of 10k-100k charges at 1e-5.
  for (const int cells : {12, 24}) {
    register_charged_pairs<md::LjCut>(cells);
    register_charged_pairs<md::LjCutCoulLong>(cells);
    register_charged_pairs<md::LjCutCoulLong>(cells, {false, md::CoulLongEval::Analytic});
    register_charged_pairs<md::LjCutCoulLong>(cells, {true});
    register_charged_pairs<md::LjCut>(cells, {false, md::CoulLongEval::Table, true});
    register_charged_pairs<md::LjCutCoulLong>(cells, {false, md::CoulLongEval::Table, true});
    register_charged_pairs<md::LjCutCoulLong>(cells, {false, md::CoulLongEval::Analytic, true});
    register_ewald(cells, 1e-5);
  }
  for (const int cells : {20, 80}) {
    register_table_vs_lj<double>(cells);
    register_table_vs_lj<float>(cells);
  }
}

}  // namespace hayate::bench
