#include "md_setup.hpp"

#include "io/input_file.hpp"
#include "io/xyz.hpp"
#include "lammps_data.hpp"
#include "potentials/styles.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hayate::md {

using core::Config;

void declare_schema(core::Schema& s) {
  s.choice("precision", {"float", "double"}, "Floating-point type of positions, velocities, forces")
      .defaults("double");

  s.section("system", "Atoms, box and types (LJ reduced units: epsilon, sigma, mass = 1)");
  s.choice("system.source", {"lattice", "xyz", "lammps_data"},
           "Initial positions: fcc lattice, an extended XYZ file or a LAMMPS data file")
      .defaults("lattice");
  s.section("system.lattice", "fcc lattice (source: lattice), as LAMMPS `lattice fcc rho`");
  s.real("system.lattice.density", "Reduced number density rho; cubic cell side (4/rho)^(1/3)")
      .defaults(0.8442)
      .above(0);
  s.integers("system.lattice.cells", "Unit cells along x, y, z (4 atoms each)")
      .defaults("[10, 10, 10]")
      .items(3, 3);
  s.strings("system.lattice.types",
            "Type names given to the 4 basis atoms of each cell, cyclically")
      .defaults("[A]")
      .items(1, 4);
  s.section("system.xyz", "Extended XYZ input (source: xyz): species, pos, optional velo, Lattice");
  s.string("system.xyz.file", "Path of the extended XYZ file").defaults("\"\"");
  s.integer("system.xyz.frame", "Frame to read: 0 = first, -1 = last").defaults(0).at_least(-1);
  s.section("system.lammps_data",
            "LAMMPS data file (source: lammps_data): Atoms # atomic, optional Masses, Velocities");
  s.string("system.lammps_data.file",
           "Path of the data file; data type k is the k-th entry of system.types")
      .defaults("\"\"");
  s.real("system.temperature",
         "Initial temperature of created velocities (and of files without velo)")
      .defaults(1.44)
      .at_least(0);
  s.integer("system.seed", "Seed of the initial velocities").defaults(87287).at_least(0);
  s.records(
       "system.types",
       "Atom types (at most 64); default: one type A of mass 1 (lj/cut: epsilon, sigma 1)",
       [](core::Section& t) {
         t.string("name", "Type name (XYZ species)");
         t.real("mass", "Mass").defaults(1.0).above(0);
         t.real("epsilon", "lj/cut: well depth of the like pair (default 1)")
             .optional_key()
             .above(0);
         t.real("sigma", "lj/cut: diameter of the like pair (default 1)").optional_key().above(0);
         t.real("d0", "morse: well depth D0 of the like pair").optional_key().above(0);
         t.real("alpha", "morse: stiffness alpha of the like pair").optional_key().above(0);
         t.real("r0", "morse: equilibrium distance r0 of the like pair").optional_key().above(0);
         t.real("cutoff", "Cutoff of the like pair; absent = pair.cutoff").optional_key().above(0);
       })
      .optional_key()
      .items(1, max_types);

  s.section("pair", "Pair potential, as LAMMPS pair_style and pair_coeff");
  s.choice("pair.style", {"lj/cut", "morse"},
           "lj/cut: 4 eps [(s/r)^12 - (s/r)^6]; morse: D0 [e^(-2 a (r - r0)) - 2 e^(-a (r - r0))]")
      .defaults("lj/cut");
  s.real("pair.cutoff", "Global cutoff (LAMMPS' pair_style argument) for pairs without their own")
      .defaults(2.5)
      .above(0);
  s.choice("pair.mixing", {"geometric", "arithmetic"},
           "lj/cut, unlike pairs: geometric (all sqrt) or arithmetic (sigma, cutoff averaged); "
           "morse has no mixing rule: give every unlike pair in pair.coeffs")
      .defaults("geometric");
  s.boolean("pair.shift",
            "Shift the energy to zero at the cutoff (forces unchanged); LAMMPS' "
            "in.lj does not")
      .defaults(false);
  s.records("pair.coeffs",
            "Coefficients of one type pair (LAMMPS pair_coeff), overriding the mixing rule",
            [](core::Section& p) {
              p.strings("types", "The two type names").items(2, 2);
              p.real("epsilon", "lj/cut: well depth").optional_key().above(0);
              p.real("sigma", "lj/cut: diameter").optional_key().above(0);
              p.real("d0", "morse: well depth D0").optional_key().above(0);
              p.real("alpha", "morse: stiffness alpha").optional_key().above(0);
              p.real("r0", "morse: equilibrium distance r0").optional_key().above(0);
              p.real("cutoff", "Cutoff; absent = the mixed value or pair.cutoff")
                  .optional_key()
                  .above(0);
            })
      .optional_key();

  s.section("neighbor", "Cell binning and Verlet list");
  s.real("neighbor.skin", "Extra distance beyond the cutoff kept in the list")
      .defaults(0.3)
      .at_least(0);
  s.integer("neighbor.every", "Rebuild at least every this many steps; 0 = only on displacement")
      .defaults(20)
      .at_least(0);
  s.boolean("neighbor.check", "Also rebuild as soon as an atom moved more than skin/2")
      .defaults(true);

  s.section("tuning", "Performance switches; every one auto by default (docs/dev/tuning.md)");
  s.choice("tuning.list", {"auto", "full", "half"},
           "full: each pair twice, no scatter; half: each pair once, the j-forces scattered "
           "(Newton's third law). auto: full on GPUs, half on CPUs")
      .defaults("auto");
  s.choice("tuning.scatter", {"auto", "atomic", "duplicated"},
           "Half list: atomic adds, or one force copy per thread (CPUs only). auto: atomic on "
           "GPUs, duplicated on CPUs")
      .defaults("auto");
  s.choice("tuning.parallel", {"auto", "thread", "warp"},
           "thread per atom, or a team per atom with its neighbors over the vector lanes (a "
           "warp on GPUs). auto: thread")
      .defaults("auto");
  s.choice("tuning.positions", {"auto", "split", "packed"},
           "split: x, y, z arrays and a minimum-image test per pair; packed: (x, y, z, type) "
           "records plus the periodic images of atoms near a face, no image test. auto: "
           "packed, split where the records and images would pass 2^31")
      .defaults("auto");
  s.choice("tuning.layout", {"auto", "csr", "padded", "transposed"},
           "Neighbor-list storage. auto: transposed (thread per atom) or padded (warp per "
           "atom) on GPUs, padded on CPUs")
      .defaults("auto");
  for (const char* key : {"list", "scatter", "parallel", "positions"})
    s.moved(std::string("force.") + key, std::string("tuning.") + key);
  s.moved("neighbor.layout", "tuning.layout");
  s.removed("neighbor.sort",
            "atoms are always reordered by cell at each rebuild (unsorted runs were several "
            "times slower on every device)");

  s.section("run", "Integration");
  s.integer("run.steps", "Number of time steps").defaults(100).at_least(0);
  s.real("run.dt", "Time step (LJ time units)").defaults(0.005).above(0);
  s.choice("run.ensemble", {"nve", "langevin", "berendsen"},
           "nve: velocity Verlet; langevin: NVT with the Langevin thermostat; berendsen: "
           "velocity rescaling for equilibration")
      .defaults("nve");
  s.section("thermostat", "Target and coupling of the langevin and berendsen ensembles");
  s.real("thermostat.temperature", "Target temperature").defaults(1.0).above(0);
  s.real("thermostat.damp", "Langevin damping time (LJ time units)").defaults(1.0).above(0);
  s.real("thermostat.tau", "Berendsen coupling time (LJ time units)").defaults(0.5).above(0);
  s.integer("thermostat.seed", "Seed of the Langevin random forces").defaults(12345).at_least(0);

  s.integer("output.thermo_every", "Write a thermo.csv row every this many steps")
      .defaults(10)
      .at_least(1);
  s.integer("output.dump_every", "Append a frame to dump.xyz every this many steps; 0 = never")
      .defaults(0)
      .at_least(0);
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

int type_index(const TypeSet& t, const std::string& name) {
  const auto it = std::find(t.names.begin(), t.names.end(), name);
  return it == t.names.end() ? -1 : static_cast<int>(it - t.names.begin());
}

}  // namespace

TypeSet read_types(const Config& config) {
  const StyleInfo& style = style_info(config.string("pair.style"));
  const int np = static_cast<int>(style.params.size());
  const double global_cut = config.real("pair.cutoff");
  std::vector<std::string> all_params;
  for (const auto& st : pair_styles())
    for (const auto& p : st.params)
      if (std::find(all_params.begin(), all_params.end(), p) == all_params.end())
        all_params.push_back(p);
  // A parameter of another style is a mistake worth naming.
  auto check_params = [&](const Config& item) {
    for (const auto& p : all_params)
      if (item.has(p) &&
          std::find(style.params.begin(), style.params.end(), p) == style.params.end())
        item.fail(p, fmt::format("'{}' is not a parameter of pair style {} (its parameters: {})", p,
                                 style.name, joined(style.params)));
  };

  std::vector<std::string> names;
  std::vector<double> mass, cut;
  std::vector<std::vector<double>> like;  // per type; empty when the type gives none
  if (config.has("system.types")) {
    for (const auto& item : config.records("system.types")) {
      const std::string name = item.string("name");
      if (std::find(names.begin(), names.end(), name) != names.end())
        item.fail("name", "type '" + name + "' is declared twice");
      check_params(item);
      names.push_back(name);
      mass.push_back(item.real("mass"));
      cut.push_back(item.has("cutoff") ? item.real("cutoff") : global_cut);
      std::vector<double> values;
      int given = 0;
      for (const auto& p : style.params) given += item.has(p) ? 1 : 0;
      // A style without mixing takes a type's like-pair parameters all together or not at all.
      if (!style.mixes && given > 0 && given < np)
        item.fail("name", fmt::format("type '{}' gives some of the {} parameters; give all of {}",
                                      name, style.name, joined(style.params)));
      if (given == np || style.mixes)
        for (int k = 0; k < np; ++k)
          values.push_back(item.has(style.params[k]) ? item.real(style.params[k])
                                                     : style.defaults[k]);
      like.push_back(values);
    }
  } else {
    names = {"A"};
    mass = {1.0};
    cut = {global_cut};
    like.push_back(style.mixes ? style.defaults : std::vector<double>{});
  }

  const int n = static_cast<int>(names.size());
  TypeSet t = TypeSet::empty(style.name, np, n);
  t.names = names;
  t.mass = mass;
  t.shift = config.boolean("pair.shift");
  const Mixing rule =
      config.string("pair.mixing") == "geometric" ? Mixing::Geometric : Mixing::Arithmetic;
  std::vector<char> set(std::size_t(n) * n, 0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      double* out = t.pair(a, b);
      if (a == b && !like[a].empty()) {
        std::copy(like[a].begin(), like[a].end(), out);
      } else if (a != b && style.mixes && !like[a].empty() && !like[b].empty()) {
        style.mix(like[a].data(), like[b].data(), rule, out);
      } else {
        continue;
      }
      t.cutoff[a * n + b] = a == b                      ? cut[a]
                            : rule == Mixing::Geometric ? std::sqrt(cut[a] * cut[b])
                                                        : 0.5 * (cut[a] + cut[b]);
      set[a * n + b] = 1;
    }

  if (config.has("pair.coeffs")) {
    for (const auto& item : config.records("pair.coeffs")) {
      check_params(item);
      const auto pair_names = item.strings("types");
      int idx[2];
      for (int k = 0; k < 2; ++k) {
        const auto it = std::find(names.begin(), names.end(), pair_names[k]);
        if (it == names.end())
          item.fail("types",
                    "unknown type '" + pair_names[k] + "' (declared types: " + joined(names) + ")");
        idx[k] = static_cast<int>(it - names.begin());
      }
      for (const auto& p : style.params)
        if (!item.has(p))
          item.fail("types", fmt::format("pair style {} needs {} for the pair [{}, {}]", style.name,
                                         joined(style.params), pair_names[0], pair_names[1]));
      for (int k = 0; k < 2; ++k) {
        const int a = idx[k], b = idx[1 - k];
        for (int q = 0; q < np; ++q) t.pair(a, b)[q] = item.real(style.params[q]);
        if (item.has("cutoff"))
          t.cutoff[a * n + b] = item.real("cutoff");
        else if (!set[a * n + b])
          t.cutoff[a * n + b] = global_cut;
        set[a * n + b] = 1;
      }
    }
  }
  for (int a = 0; a < n; ++a)
    for (int b = a; b < n; ++b)
      if (!set[a * n + b])
        config.fail(config.has("pair.coeffs") ? "pair.coeffs" : "pair.style",
                    fmt::format("pair style {} has no mixing rule: give the coefficients ({}) of "
                                "the type pair [{}, {}] in pair.coeffs",
                                style.name, joined(style.params), names[a], names[b]));
  return t;
}

// The choices `auto` makes, from the backend's traits (docs/dev/decisions.md has the
// measurements): GPUs run the full list (no scatter) with one thread per atom and transposed
// rows, so that lane l reads atom l's k-th neighbor from consecutive addresses; CPUs run the
// half list with a force copy per thread, padded rows (one search pass where CSR needs two).
// Packed positions everywhere, unless the records of atoms and images would pass 2^31.
ForceOptions auto_force_options(const core::BackendTraits& traits) {
  ForceOptions o;
  o.list = traits.is_gpu ? ListKind::Full : ListKind::Half;
  o.scatter = traits.is_gpu ? Scatter::Atomic : Scatter::Duplicated;
  o.parallel = Parallel::Thread;
  o.positions = Positions::Packed;
  return o;
}

Layout auto_layout(const core::BackendTraits& traits, Parallel parallel) {
  if (!traits.is_gpu) return Layout::Padded;
  return parallel == Parallel::Thread ? Layout::Transposed : Layout::Padded;
}

namespace {
// Packed positions index atoms and up to 7 periodic images each with an int.
bool packed_fits(std::size_t natoms) {
  return double(natoms) * 8.0 <= 2147483647.0;
}
}  // namespace

MdParams read_params(const Config& config, const std::string& backend, std::size_t natoms) {
  const core::BackendTraits traits = core::backend_traits(backend);
  MdParams p;
  p.dt = config.real("run.dt");
  p.skin = config.real("neighbor.skin");
  p.every = static_cast<int>(config.integer("neighbor.every"));
  p.check = config.boolean("neighbor.check");
  if (p.every == 0 && !p.check)
    config.fail("neighbor.every",
                "with neighbor.check false the list would never be rebuilt; "
                "give a period >= 1 or set check: true");
  const ForceOptions a = auto_force_options(traits);
  const std::string list = config.string("tuning.list");
  const std::string scatter = config.string("tuning.scatter");
  const std::string parallel = config.string("tuning.parallel");
  const std::string positions = config.string("tuning.positions");
  p.force.list = list == "auto" ? a.list : (list == "full" ? ListKind::Full : ListKind::Half);
  p.force.scatter = scatter == "auto"     ? a.scatter
                    : scatter == "atomic" ? Scatter::Atomic
                                          : Scatter::Duplicated;
  p.force.parallel =
      parallel == "auto" ? a.parallel : (parallel == "thread" ? Parallel::Thread : Parallel::Team);
  p.force.positions = positions == "auto" ? (packed_fits(natoms) ? a.positions : Positions::Split)
                      : positions == "split" ? Positions::Split
                                             : Positions::Packed;
  if (p.force.positions == Positions::Packed && !packed_fits(natoms))
    config.fail("tuning.positions",
                fmt::format("{} atoms and their periodic images exceed 2^31 - 1 packed records; "
                            "use split or auto",
                            natoms));
  if (traits.is_gpu && p.force.list == ListKind::Half && p.force.scatter == Scatter::Duplicated)
    config.fail("tuning.scatter",
                "duplicated scatter keeps one force array per thread and is not "
                "available on " +
                    backend + "; use atomic or auto");
  const std::string layout = config.string("tuning.layout");
  p.layout = layout == "auto"     ? auto_layout(traits, p.force.parallel)
             : layout == "csr"    ? Layout::Csr
             : layout == "padded" ? Layout::Padded
                                  : Layout::Transposed;
  const std::string ensemble = config.string("run.ensemble");
  p.thermostat = ensemble == "langevin"    ? Thermostat::Langevin
                 : ensemble == "berendsen" ? Thermostat::Berendsen
                                           : Thermostat::None;
  p.t_target = config.real("thermostat.temperature");
  p.damp = config.real("thermostat.damp");
  p.tau = config.real("thermostat.tau");
  p.seed = static_cast<std::uint64_t>(config.integer("thermostat.seed"));
  return p;
}

InitialState fcc_lattice(double density, int nx, int ny, int nz, const std::vector<int>& types) {
  static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  const double a = std::cbrt(4.0 / density);
  InitialState s;
  s.box[0] = a * nx;
  s.box[1] = a * ny;
  s.box[2] = a * nz;
  const std::size_t n = std::size_t(4) * nx * ny * nz;
  s.x.reserve(3 * n);
  s.type.reserve(n);
  s.id.reserve(n);
  std::int64_t id = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (int b = 0; b < 4; ++b) {
          s.x.push_back(a * (i + basis[b][0]));
          s.x.push_back(a * (j + basis[b][1]));
          s.x.push_back(a * (k + basis[b][2]));
          s.type.push_back(types[b % types.size()]);
          s.id.push_back(++id);
        }
  s.v.assign(3 * n, 0.0);
  return s;
}

void create_velocities(InitialState& s, double temperature, std::uint64_t seed) {
  const std::size_t n = s.size();
  s.v.assign(3 * n, 0.0);
  if (n == 0 || temperature <= 0) return;
  double p[3] = {0, 0, 0}, mtot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double m = s.types.mass[s.type[i]];
    for (int d = 0; d < 3; ++d) {
      const double v = util::normal01(seed, static_cast<std::uint64_t>(s.id[i]), d) / std::sqrt(m);
      s.v[3 * i + d] = v;
      p[d] += m * v;
    }
    mtot += m;
  }
  double twice_ke = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double m = s.types.mass[s.type[i]];
    for (int d = 0; d < 3; ++d) {
      double& v = s.v[3 * i + d];
      v -= p[d] / mtot;
      twice_ke += m * v * v;
    }
  }
  const double dof = n > 1 ? 3.0 * n - 3.0 : 3.0 * n;
  const double scale = twice_ke > 0 ? std::sqrt(temperature * dof / twice_ke) : 0.0;
  for (auto& v : s.v) v *= scale;
}

namespace {

// Data type k (1-based) is the k-th declared type; masses in the file must agree with the
// input's, which defines the potential.
InitialState lammps_data_state(const Config& config, const TypeSet& types) {
  const std::string key = "system.lammps_data.file";
  const std::string file = config.string(key);
  if (file.empty()) config.fail(key, "source: lammps_data needs a file name");
  const LammpsData d = core::read_named_file({config.where(key), key}, file, "LAMMPS data file",
                                             [&] { return read_lammps_data(file); });
  if (d.ntypes > types.size())
    config.fail(key, fmt::format("'{}' has {} atom types but the input declares {} ({}); declare "
                                 "one entry of system.types per data-file type, in order",
                                 file, d.ntypes, types.size(), joined(types.names)));
  for (int t = 0; t < int(d.mass.size()); ++t)
    if (std::fabs(d.mass[t] - types.mass[t]) > 1e-12 * types.mass[t])
      config.fail(
          key, fmt::format("{}:{}: type {} has mass {} but its type '{}' in system.types "
                           "has mass {}",
                           file, d.mass_line[t], t + 1, d.mass[t], types.names[t], types.mass[t]));
  InitialState s;
  s.types = types;
  const std::size_t n = d.id.size();
  for (int dim = 0; dim < 3; ++dim) s.box[dim] = d.hi[dim] - d.lo[dim];
  s.x.resize(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int dim = 0; dim < 3; ++dim) s.x[3 * i + dim] = d.x[3 * i + dim] - d.lo[dim];
  s.type.resize(n);
  for (std::size_t i = 0; i < n; ++i) s.type[i] = d.type[i] - 1;
  s.id = d.id;
  if (!d.v.empty())
    s.v = d.v;
  else
    create_velocities(s, config.real("system.temperature"),
                      static_cast<std::uint64_t>(config.integer("system.seed")));
  return s;
}

}  // namespace

namespace {

// The lattice the input asks for, checked without making its atoms: the basis types, the cell
// counts and the atom count.
struct LatticeSpec {
  std::vector<int> types;
  std::vector<long long> cells;
  double a = 0;  // cubic cell side
  double box[3] = {0, 0, 0};
  std::size_t natoms = 0;
};

LatticeSpec lattice_spec(const Config& config, const TypeSet& types) {
  LatticeSpec l;
  for (const auto& name : config.strings("system.lattice.types")) {
    const int t = type_index(types, name);
    if (t < 0)
      config.fail("system.lattice.types", "unknown type " + core::quoted(name) +
                                              " (declared types: " + joined(types.names) + ")");
    l.types.push_back(t);
  }
  l.cells = config.integers("system.lattice.cells");
  for (const auto c : l.cells)
    if (c < 1) config.fail("system.lattice.cells", "cell counts must be >= 1");
  const double n = 4.0 * double(l.cells[0]) * double(l.cells[1]) * double(l.cells[2]);
  if (n > 2147483647.0)
    config.fail("system.lattice.cells", fmt::format("{:.0f} atoms exceed 2^31 - 1", n));
  l.natoms = std::size_t(n);
  l.a = std::cbrt(4.0 / config.real("system.lattice.density"));
  for (int d = 0; d < 3; ++d) l.box[d] = l.a * double(l.cells[d]);
  return l;
}

// The box must hold twice the neighbor reach, and the system at least 2 atoms.
void check_box(const Config& config, const std::string& where, const double box[3],
               std::size_t natoms, double reach) {
  for (int d = 0; d < 3; ++d)
    if (box[d] < reach)
      config.fail(where, fmt::format("the box ({:.6g} x {:.6g} x {:.6g}) is smaller than 2 x "
                                     "(cutoff + skin) = {:.6g} along {}; enlarge it or reduce "
                                     "the cutoff or skin",
                                     box[0], box[1], box[2], reach, "xyz"[d]));
  if (natoms < 2) config.fail(where, "at least 2 atoms are needed");
}

// A particle or data file the input names: a regular file, checked at its key.
std::string data_file(const Config& config, const std::string& key, const std::string& what) {
  const std::string file = config.string(key);
  if (file.empty())
    config.fail(key, "source: " + config.string("system.source") + " needs a file name");
  core::check_input_file(file, what, core::max_data_file_bytes, {config.where(key), key});
  return file;
}

}  // namespace

InitialState make_initial_state(const Config& config) {
  const TypeSet types = read_types(config);
  const double reach = 2.0 * (types.max_cutoff() + config.real("neighbor.skin"));
  InitialState s;
  std::string where;
  if (config.string("system.source") == "lattice") {
    const LatticeSpec l = lattice_spec(config, types);
    where = "system.lattice.cells";
    check_box(config, where, l.box, l.natoms, reach);
    s = fcc_lattice(config.real("system.lattice.density"), int(l.cells[0]), int(l.cells[1]),
                    int(l.cells[2]), l.types);
    s.types = types;
    create_velocities(s, config.real("system.temperature"),
                      static_cast<std::uint64_t>(config.integer("system.seed")));
  } else if (config.string("system.source") == "lammps_data") {
    data_file(config, "system.lammps_data.file", "LAMMPS data file");
    s = lammps_data_state(config, types);
    where = "system.lammps_data.file";
  } else {
    const std::string file = data_file(config, "system.xyz.file", "XYZ file");
    const core::XyzFrame frame = core::read_named_file(
        {config.where("system.xyz.file"), "system.xyz.file"}, file, "XYZ file",
        [&] { return core::read_xyz(file, static_cast<int>(config.integer("system.xyz.frame"))); });
    if (!frame.box)
      config.fail("system.xyz.file", "'" + file + "' has no Lattice=\"...\" (the periodic box)");
    const core::XyzColumn* pos = frame.column("pos");
    if (!pos || pos->components != 3)
      config.fail("system.xyz.file", "'" + file + "' has no pos:R:3 property");
    const core::XyzColumn* velo = frame.column("velo");
    if (velo && velo->components != 3)
      config.fail("system.xyz.file",
                  "'" + file + "' has a velo property with other than 3 components");
    const std::size_t n = frame.size();
    s.types = types;
    for (int d = 0; d < 3; ++d) {
      s.box[d] = (*frame.box)[d];
      if (!(s.box[d] > 0))
        config.fail("system.xyz.file", "'" + file + "' has a non-positive box length");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const int t = type_index(types, frame.species[i]);
      if (t < 0)
        config.fail("system.xyz.file",
                    fmt::format("atom {} of '{}' has species {}, which is not a declared type "
                                "(declared types: {})",
                                i + 1, file, core::quoted(frame.species[i]), joined(types.names)));
      s.type.push_back(t);
      s.id.push_back(static_cast<std::int64_t>(i + 1));
      for (int d = 0; d < 3; ++d) s.x.push_back(pos->values[3 * i + d]);
    }
    if (velo)
      s.v = velo->values;
    else
      create_velocities(s, config.real("system.temperature"),
                        static_cast<std::uint64_t>(config.integer("system.seed")));
    where = "system.xyz.file";
  }
  check_box(config, where, s.box, s.size(), reach);
  return s;
}

SystemShape system_shape(const Config& config) {
  SystemShape shape;
  shape.types = read_types(config);
  if (config.string("system.source") == "lattice") {
    const LatticeSpec l = lattice_spec(config, shape.types);
    shape.key = "system.lattice.cells";
    check_box(config, shape.key, l.box, l.natoms,
              2.0 * (shape.types.max_cutoff() + config.real("neighbor.skin")));
    for (int d = 0; d < 3; ++d) shape.box[d] = l.box[d];
    shape.natoms = l.natoms;
    return shape;
  }
  const InitialState s = make_initial_state(config);  // a file: read (and checked) whole
  shape.key =
      config.string("system.source") == "xyz" ? "system.xyz.file" : "system.lammps_data.file";
  for (int d = 0; d < 3; ++d) shape.box[d] = s.box[d];
  shape.natoms = s.size();
  return shape;
}

void check_input(const Config& config, const std::string& backend) {
  const SystemShape shape = system_shape(config);
  read_params(config, backend, shape.natoms);
}

void check_checkpoint(const Config& config, const core::CheckpointReader& cp) {
  const SystemShape shape = system_shape(config);
  const std::int64_t n = std::int64_t(shape.natoms);
  const auto saved_n = cp.get<std::int64_t>("natoms", 0, std::numeric_limits<std::int32_t>::max());
  if (saved_n != n)
    core::checkpoint_mismatch(config, shape.key, cp,
                              fmt::format("holds {} atoms, the input {}", saved_n, n));
  const int real_bytes = config.string("precision") == "float" ? 4 : 8;
  const auto saved_bytes = cp.get<std::int32_t>("real_bytes", 4, 8);
  if (saved_bytes != real_bytes || (saved_bytes != 4 && saved_bytes != 8))
    core::checkpoint_mismatch(
        config, "precision", cp,
        fmt::format("was written in {} precision", saved_bytes == 4 ? "float" : "double"));
  // The physics the state belongs to: pair style, types and masses, box, time step.
  const std::string style = cp.get_string("pair_style", 64);
  if (style != shape.types.style)
    core::checkpoint_mismatch(config, "pair.style", cp,
                              "was written with pair style " + core::quoted(style));
  const std::string names = cp.get_string("type_names", 64 * 1024);
  std::string expected_names;
  for (const auto& t : shape.types.names) expected_names += (expected_names.empty() ? "" : " ") + t;
  const std::string types_key = config.has("system.types") ? "system.types" : "pair.style";
  if (names != expected_names)
    core::checkpoint_mismatch(
        config, types_key, cp,
        "holds the types " + core::quoted(names) + ", the input " + core::quoted(expected_names));
  const auto masses = cp.get_vector<double>("type_masses", shape.types.names.size());
  for (std::size_t t = 0; t < masses.size(); ++t)
    if (masses[t] != shape.types.mass[t])
      core::checkpoint_mismatch(config, types_key, cp,
                                fmt::format("gives type {} mass {}, the input {}",
                                            shape.types.names[t], masses[t], shape.types.mass[t]));
  const auto box = cp.get<std::array<double, 3>>("box");
  for (int d = 0; d < 3; ++d) {
    const double want = real_bytes == 4 ? double(float(shape.box[d])) : shape.box[d];
    if (box[d] != want)
      core::checkpoint_mismatch(
          config,
          config.string("system.source") == "lattice" ? "system.lattice.density" : shape.key, cp,
          fmt::format("holds a {:.9g} x {:.9g} x {:.9g} box, the input {:.9g} x {:.9g} x {:.9g}",
                      box[0], box[1], box[2], shape.box[0], shape.box[1], shape.box[2]));
  }
  const double dt = cp.get<double>("dt");
  if (dt != config.real("run.dt"))
    core::checkpoint_mismatch(config, "run.dt", cp,
                              fmt::format("was written with run.dt = {}", dt));
  const std::int64_t steps = config.integer("run.steps");
  const auto step = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
  if (step > steps)
    core::checkpoint_mismatch(config, "run.steps", cp,
                              fmt::format("is at step {}, beyond run.steps = {}", step, steps));
  cp.get<std::int64_t>("last_build", 0, step);
  cp.get<std::int64_t>("rebuilds", 0, std::numeric_limits<std::int64_t>::max());
  cp.get<double>("energy");
  cp.get<double>("virial");
  const std::size_t count = std::size_t(n);
  for (const char* entry : {"x", "v", "f", "x_build"}) {
    if (real_bytes == 4)
      cp.check_reals<float>(entry, 3 * count);
    else
      cp.check_reals<double>(entry, 3 * count);
  }
  cp.get_vector<std::int32_t>("type", count, 0, std::int32_t(shape.types.names.size()) - 1);
  auto ids = cp.get_vector<std::int64_t>("id", count, 1, std::numeric_limits<std::int64_t>::max());
  std::sort(ids.begin(), ids.end());
  for (std::size_t k = 1; k < ids.size(); ++k)
    if (ids[k] == ids[k - 1]) cp.fail("id", fmt::format("holds atom id {} twice", ids[k]));
}

}  // namespace hayate::md
