#include "md_setup.hpp"

#include "io/input_file.hpp"
#include "io/xyz.hpp"
#include "io/xyz_filter.hpp"
#include "lammps_data.hpp"
#include "pair_table.hpp"
#include "parallel/comm.hpp"
#include "potentials/styles.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace hayate::md {

using core::Config;

void declare_schema(core::Schema& s) {
  s.choice("precision", {"float", "double"}, "Floating-point type of positions, velocities, forces")
      .defaults("double");
  s.choice("units", {"lj", "real", "metal"},
           "LAMMPS unit style: lj (reduced), real (kcal/mol, Angstrom, fs, e), metal (eV, "
           "Angstrom, ps, e)")
      .defaults("lj");

  s.section("system", "Atoms, box and types (lj units: epsilon, sigma, mass = 1)");
  s.choice("system.source", {"lattice", "xyz", "lammps_data"},
           "Initial positions: fcc lattice, an extended XYZ file or a LAMMPS data file")
      .defaults("lattice");
  s.section("system.lattice", "Cubic lattice (source: lattice), as LAMMPS `lattice fcc rho`");
  s.choice("system.lattice.style", {"fcc", "rocksalt"},
           "fcc: 4 atoms per cubic cell; rocksalt: two interpenetrating fcc lattices (NaCl), 8 "
           "atoms per cell, the first type on one, the second on the other")
      .defaults("fcc");
  s.real("system.lattice.density",
         "Number density rho; cubic cell side (atoms per cell / rho)^(1/3)")
      .defaults(0.8442)
      .above(0);
  s.real("system.lattice.constant", "Cubic cell side a; absent = from the density")
      .optional_key()
      .above(0);
  s.integers("system.lattice.cells", "Unit cells along x, y, z")
      .defaults("[10, 10, 10]")
      .items(3, 3);
  s.strings("system.lattice.types",
            "Type names given to the basis atoms of each cell, cyclically (rocksalt: cation, "
            "anion)")
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
         t.real("charge",
                "Point charge of the type, for the charged styles (coul/*, */coul/*): units of e "
                "in real and metal units, reduced in lj")
             .defaults(0.0);
       })
      .optional_key()
      .items(1, max_types);

  s.section("pair", "Pair potential, as LAMMPS pair_style and pair_coeff");
  s.choice("pair.style",
           {"lj/cut", "morse", "table", "coul/cut", "coul/long", "lj/cut/coul/cut",
            "lj/cut/coul/long", "table/coul/cut", "table/coul/long"},
           "lj/cut: 4 eps [(s/r)^12 - (s/r)^6]; morse: D0 [e^(-2 a (r - r0)) - 2 e^(-a (r - r0))]; "
           "table: any central force from a table in r^2 (pair.coeffs: file or expression); "
           "coul/cut: C q_i q_j / r; coul/long: the real-space Ewald part C q_i q_j erfc(g r) / r "
           "(needs kspace.style: ewald); lj/cut/coul/*, table/coul/*: the sum")
      .defaults("lj/cut");
  s.real("pair.cutoff", "Global cutoff (LAMMPS' pair_style argument) for pairs without their own")
      .defaults(2.5)
      .above(0);
  s.real("pair.coul_cutoff", "Charged styles: the Coulomb cutoff; absent = pair.cutoff")
      .optional_key()
      .above(0);
  s.choice("pair.coul_long", {"table", "analytic"},
           "*/coul/long styles, how erfc(g r) / r is evaluated: table: from cubics on 64 "
           "segments per octave of r^2, as MDGRAPE and LAMMPS' default (force within 6e-8 and "
           "energy within 1e-9 of their unscreened values; LAMMPS' table: about 1e-6); analytic: "
           "from the expression (LAMMPS: pair_modify table 0)")
      .defaults("table");
  s.section("pair.table",
            "Tables of pair style table (and table/coul/*), as LAMMPS' pair_style "
            "table arguments");
  s.integer("pair.table.points", "Points of each table, equally spaced in r^2")
      .defaults(1000)
      .at_least(2)
      .at_most(2000000);
  s.choice("pair.table.interpolation", {"linear", "spline"},
           "Between points: linear, or cubic splines in r^2 (smoother forces, a few more "
           "operations)")
      .defaults("linear");

  s.section("kspace", "Long-range Coulomb (with pair.style coul/long or lj/cut/coul/long)");
  s.choice("kspace.style", {"none", "ewald"},
           "ewald: the Ewald sum's wave-space part, as LAMMPS' kspace_style ewald")
      .defaults("none");
  s.real("kspace.accuracy",
         "Relative RMS force accuracy (LAMMPS' kspace_style ewald argument); sets the splitting "
         "g and the wave vectors")
      .defaults(1e-5)
      .above(0)
      .below(1);
  s.real("kspace.g_ewald", "Splitting parameter g (1/distance); absent = chosen from the accuracy")
      .optional_key()
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
              p.real("cutoff",
                     "Cutoff; absent = the mixed value or pair.cutoff (a table file: its last "
                     "distance)")
                  .optional_key()
                  .above(0);
              p.string("file",
                       "table: LAMMPS table file to read (relative to the working "
                       "directory, as the data file)")
                  .optional_key();
              p.string("keyword", "table: the file's section to read").optional_key();
              p.choice("expression", {"lj/cut", "morse"},
                       "table: tabulate this built-in style with the parameters given here")
                  .optional_key();
              p.real("inner", "table with an expression: the table's first distance")
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
  s.choice("tuning.charges", {"auto", "per_atom"},
           "Charged styles: where the pair loop finds q_j. auto: from j's type when every atom "
           "carries its type's charge, else per atom; per_atom: always per atom (one more load "
           "per pair)")
      .defaults("auto");
  s.choice("tuning.layout", {"auto", "csr", "padded", "transposed"},
           "Neighbor-list storage. auto: transposed (thread per atom) or padded (warp per "
           "atom) on GPUs, padded on CPUs")
      .defaults("auto");
  s.choice("tuning.overlap", {"auto", "on", "off"},
           "Several ranks: compute the forces on atoms farther than cutoff + skin from every "
           "cut face while the ghosts' positions travel (on), or wait for them first (off; "
           "always with tuning.parallel warp). auto: on")
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

Units units_of(const Config& config) {
  return Units::named(config.string("units"));
}

int type_index(const TypeSet& t, const std::string& name) {
  const auto it = std::find(t.names.begin(), t.names.end(), name);
  return it == t.names.end() ? -1 : static_cast<int>(it - t.names.begin());
}

}  // namespace

// pair style table: each pair.coeffs entry names a section of a LAMMPS table file or a built-in
// expression with its parameters; the pair's parameter is its table's index.
void read_tables(const Config& config, TypeSet& t, std::vector<char>& set) {
  if (!config.has("pair.coeffs"))
    config.fail("pair.style", "pair style " + t.style +
                                  " reads its tables from pair.coeffs (file and keyword, or "
                                  "expression and its parameters)");
  const TableSampling sampling{static_cast<int>(config.integer("pair.table.points")),
                               config.string("pair.table.interpolation") == "spline"};
  const int n = t.size();
  for (const auto& item : config.records("pair.coeffs")) {
    const auto pair_names = item.strings("types");
    int idx[2];
    for (int k = 0; k < 2; ++k) {
      idx[k] = type_index(t, pair_names[k]);
      if (idx[k] < 0)
        item.fail("types",
                  "unknown type '" + pair_names[k] + "' (declared types: " + joined(t.names) + ")");
    }
    if (item.has("file") == item.has("expression"))
      item.fail("types", "a table entry gives either file (with keyword) or expression");
    const std::vector<std::string> own = item.has("expression")
                                             ? style_info(item.string("expression")).params
                                             : std::vector<std::string>{};
    for (const auto& st : pair_styles())
      for (const auto& p : st.params)
        if (item.has(p) && std::find(own.begin(), own.end(), p) == own.end())
          item.fail(p, item.has("expression")
                           ? fmt::format("'{}' is not a parameter of {} (its parameters: {})", p,
                                         item.string("expression"), joined(own))
                           : fmt::format("'{}' belongs to a table made from an expression, not "
                                         "to a table file",
                                         p));
    TableData table;
    double cutoff = 0;
    if (item.has("file")) {
      if (!item.has("keyword")) item.fail("file", "a table file needs the keyword of its section");
      if (item.has("inner")) item.fail("inner", "inner belongs to a table made from an expression");
      const TableFile file = read_table_file(item.string("file"), item.string("keyword"));
      cutoff = item.has("cutoff") ? item.real("cutoff") : file.r.back();
      try {
        table = resample(file, cutoff, sampling);
      } catch (const std::invalid_argument& e) {
        item.fail(item.has("cutoff") ? "cutoff" : "file", e.what());
      }
    } else {
      if (item.has("keyword")) item.fail("keyword", "keyword belongs to a table file");
      std::vector<double> params;
      for (const auto& p : own) {
        if (!item.has(p))
          item.fail("expression",
                    fmt::format("{} needs {}", item.string("expression"), joined(own)));
        params.push_back(item.real(p));
      }
      if (!item.has("inner"))
        item.fail("expression", "a table made from an expression needs its first distance, inner");
      cutoff = item.has("cutoff") ? item.real("cutoff") : config.real("pair.cutoff");
      if (!(item.real("inner") < cutoff))
        item.fail("inner", fmt::format("inner must lie below the cutoff {}", cutoff));
      table =
          table_of_style(item.string("expression"), params, item.real("inner"), cutoff, sampling);
    }
    t.tables.push_back(std::move(table));
    for (int k = 0; k < 2; ++k) {
      const int a = idx[k], b = idx[1 - k];
      t.pair(a, b)[0] = double(t.tables.size() - 1);
      t.cutoff[a * n + b] = cutoff;
      set[a * n + b] = 1;
    }
  }
}

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
  std::vector<double> mass, cut, charge;
  std::vector<std::vector<double>> like;  // per type's like pair: the style's parameters
  std::vector<char> like_given;           // whether the type gives them (a style without any: yes)
  if (config.has("system.types")) {
    for (const auto& item : config.records("system.types")) {
      const std::string name = item.string("name");
      if (std::find(names.begin(), names.end(), name) != names.end())
        item.fail("name", "type '" + name + "' is declared twice");
      check_params(item);
      names.push_back(name);
      mass.push_back(item.real("mass"));
      charge.push_back(item.real("charge"));
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
      like_given.push_back(given == np || style.mixes);
    }
  } else {
    names = {"A"};
    mass = {1.0};
    charge = {0.0};
    cut = {global_cut};
    like.push_back(style.mixes ? style.defaults : std::vector<double>{});
    like_given.push_back(style.mixes || np == 0);
  }

  const int n = static_cast<int>(names.size());
  TypeSet t = TypeSet::empty(style.name, np, n);
  t.names = names;
  t.mass = mass;
  t.charge = charge;
  t.shift = config.boolean("pair.shift");
  if (style.charged)
    t.coul_cutoff = config.has("pair.coul_cutoff") ? config.real("pair.coul_cutoff") : global_cut;
  const Mixing rule =
      config.string("pair.mixing") == "geometric" ? Mixing::Geometric : Mixing::Arithmetic;
  std::vector<char> set(std::size_t(n) * n, 0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      double* out = t.pair(a, b);
      if (a == b && like_given[a]) {
        std::copy(like[a].begin(), like[a].end(), out);
      } else if (a != b && like_given[a] && like_given[b] && (style.mixes || np == 0)) {
        // A style without parameters (coul/cut, coul/long) has nothing to mix but the cutoff.
        if (np > 0) style.mix(like[a].data(), like[b].data(), rule, out);
      } else {
        continue;
      }
      t.cutoff[a * n + b] = a == b                      ? cut[a]
                            : rule == Mixing::Geometric ? std::sqrt(cut[a] * cut[b])
                                                        : 0.5 * (cut[a] + cut[b]);
      set[a * n + b] = 1;
    }

  if (style.tables) {
    read_tables(config, t, set);
  } else if (config.has("pair.coeffs")) {
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
      if (!set[a * n + b] && style.tables)
        config.fail(config.has("pair.coeffs") ? "pair.coeffs" : "pair.style",
                    fmt::format("pair style {} needs a table (file or expression) for every type "
                                "pair: none for [{}, {}] in pair.coeffs",
                                style.name, names[a], names[b]));
      else if (!set[a * n + b])
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
  p.units = Units::named(config.string("units"));
  const std::string style = config.string("pair.style");
  const std::string long_suffix = "coul/long";
  const bool long_range =
      style.size() >= long_suffix.size() &&
      style.compare(style.size() - long_suffix.size(), std::string::npos, long_suffix) == 0;
  p.coul_long =
      config.string("pair.coul_long") == "analytic" ? CoulLongEval::Analytic : CoulLongEval::Table;
  p.kspace.ewald = config.string("kspace.style") == "ewald";
  if (long_range && !p.kspace.ewald)
    config.fail("pair.style", "pair style " + style +
                                  " is the real-space part of the Ewald sum: set kspace.style: "
                                  "ewald (or use a coul/cut style)");
  if (p.kspace.ewald && !long_range)
    config.fail("kspace.style",
                "the Ewald sum needs a */coul/long pair style (coul/long, lj/cut/coul/long, "
                "table/coul/long; pair.style is " +
                    style + ")");
  p.kspace.accuracy = config.real("kspace.accuracy");
  if (config.has("kspace.g_ewald")) p.kspace.g_ewald = config.real("kspace.g_ewald");
  p.dt = config.real("run.dt");
  p.skin = config.real("neighbor.skin");
  p.every = static_cast<int>(config.integer("neighbor.every"));
  p.check = config.boolean("neighbor.check");
  if (p.every == 0 && !p.check)
    config.fail("neighbor.every",
                "with neighbor.check false the list would never be rebuilt; "
                "give a period >= 1 or set check: true");
  // Several ranks choose as one does: a half list sends the ghosts' force shares back.
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
  p.force.charges =
      config.string("tuning.charges") == "per_atom" ? ChargeLookup::PerAtom : ChargeLookup::Auto;
  p.overlap = config.string("tuning.overlap") != "off";
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

namespace {

// Cells of side a filled with a basis (fractional coordinates), cell by cell with x fastest;
// basis atom b gets type type_of(b) and atom k id k + 1. Only the atoms at positions
// keep(x) accepts are stored, room made for `expected` of them.
template <class TypeOf, class Keep>
InitialState cubic_lattice(const std::vector<std::array<double, 3>>& basis, double a, int nx,
                           int ny, int nz, TypeOf type_of, Keep keep, std::size_t expected) {
  InitialState s;
  s.box[0] = a * nx;
  s.box[1] = a * ny;
  s.box[2] = a * nz;
  s.x.reserve(3 * expected);
  s.type.reserve(expected);
  s.id.reserve(expected);
  std::int64_t id = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (std::size_t b = 0; b < basis.size(); ++b) {
          ++id;
          const double x[3] = {a * (i + basis[b][0]), a * (j + basis[b][1]), a * (k + basis[b][2])};
          if (!keep(x)) continue;
          s.x.insert(s.x.end(), x, x + 3);
          s.type.push_back(type_of(b));
          s.id.push_back(id);
        }
  if (s.x.capacity() > s.x.size()) {
    s.x.shrink_to_fit();
    s.type.shrink_to_fit();
    s.id.shrink_to_fit();
  }
  s.v.assign(s.x.size(), 0.0);
  return s;
}

const std::vector<std::array<double, 3>> fcc_basis{
    {0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};

std::vector<std::array<double, 3>> rocksalt_basis() {
  std::vector<std::array<double, 3>> basis = fcc_basis;
  for (const auto& p : fcc_basis) basis.push_back({p[0] + 0.5, p[1], p[2]});
  return basis;
}

const auto keep_all = [](const double*) { return true; };

// Gaussian velocities keyed on (seed, atom id), zero total momentum, rescaled to exactly
// temperature T, for the atoms s holds of a system of n atoms whose atom k has the id and
// type atom_of(k) gives. s holds all of them or some, in the system's order. The sums run
// over the whole system in its order whatever s holds, so every rank's share has the bits of
// one rank's whole system.
template <class AtomOf>
void system_velocities(InitialState& s, std::size_t n, AtomOf atom_of, double temperature,
                       std::uint64_t seed, const Units& units) {
  s.v.assign(3 * s.size(), 0.0);
  if (n == 0 || temperature <= 0) return;
  auto raw = [&](std::int64_t id, int d, double m) {
    return util::normal01(seed, static_cast<std::uint64_t>(id), d) / std::sqrt(m);
  };
  // Atom k of the system is s's atom `held` when their ids agree (s follows the system's order).
  double p[3] = {0, 0, 0}, mtot = 0;
  for (std::size_t k = 0, held = 0; k < n; ++k) {
    const auto [id, type] = atom_of(k);
    const double m = s.types.mass[type];
    const bool here = held < s.size() && s.id[held] == id;
    for (int d = 0; d < 3; ++d) {
      const double v = raw(id, d, m);
      if (here) s.v[3 * held + d] = v;
      p[d] += m * v;
    }
    mtot += m;
    held += here;
  }
  double twice_ke = 0;
  for (std::size_t k = 0, held = 0; k < n; ++k) {
    const auto [id, type] = atom_of(k);
    const double m = s.types.mass[type];
    const bool here = held < s.size() && s.id[held] == id;
    for (int d = 0; d < 3; ++d) {
      double v = here ? s.v[3 * held + d] : raw(id, d, m);
      v -= p[d] / mtot;
      if (here) s.v[3 * held + d] = v;
      twice_ke += m * v * v;
    }
    held += here;
  }
  const double dof = n > 1 ? 3.0 * n - 3.0 : 3.0 * n;
  const double scale =
      twice_ke > 0 ? std::sqrt(temperature * dof * units.boltz / (twice_ke * units.mvv2e)) : 0.0;
  for (auto& v : s.v) v *= scale;
}

}  // namespace

InitialState fcc_lattice_with_side(double a, int nx, int ny, int nz,
                                   const std::vector<int>& types) {
  return cubic_lattice(
      fcc_basis, a, nx, ny, nz, [&](std::size_t b) { return types[b % types.size()]; }, keep_all,
      fcc_basis.size() * std::size_t(nx) * ny * nz);
}

InitialState fcc_lattice(double density, int nx, int ny, int nz, const std::vector<int>& types) {
  return fcc_lattice_with_side(std::cbrt(4.0 / density), nx, ny, nz, types);
}

InitialState rocksalt_lattice(double a, int nx, int ny, int nz, int cation, int anion) {
  return cubic_lattice(
      rocksalt_basis(), a, nx, ny, nz, [&](std::size_t b) { return b < 4 ? cation : anion; },
      keep_all, 2 * fcc_basis.size() * std::size_t(nx) * ny * nz);
}

void create_velocities(InitialState& s, double temperature, std::uint64_t seed,
                       const Units& units) {
  system_velocities(
      s, s.size(),
      [&](std::size_t k) {
        return std::pair{s.id[k], s.type[k]};
      },
      temperature, seed, units);
}

namespace {

// The lattice the input asks for, checked without making its atoms: the basis types, the cell
// counts and the atom count.
struct LatticeSpec {
  std::vector<int> types;
  std::vector<long long> cells;
  double a = 0;             // cubic cell side
  bool rocksalt = false;    // two interleaved fcc lattices (8 atoms per cell), else fcc (4)
  bool given_side = false;  // system.lattice.constant, else from the density
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
  l.rocksalt = config.string("system.lattice.style") == "rocksalt";
  if (l.rocksalt && l.types.size() != 2)
    config.fail("system.lattice.types",
                "a rocksalt lattice takes two types: the cation's and the anion's");
  const double per_cell = l.rocksalt ? 8.0 : 4.0;
  const double n = per_cell * double(l.cells[0]) * double(l.cells[1]) * double(l.cells[2]);
  if (n > 2147483647.0)
    config.fail("system.lattice.cells", fmt::format("{:.0f} atoms exceed 2^31 - 1", n));
  l.natoms = std::size_t(n);
  l.given_side = config.has("system.lattice.constant");
  l.a = l.given_side ? config.real("system.lattice.constant")
                     : std::cbrt(per_cell / config.real("system.lattice.density"));
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

namespace {

// An input error at one of the input's keys met in a reader's callback: carried past
// read_named_file, which would take it for the file's own and name the file twice.
struct KeyError {
  core::InputError error;
};
template <class F>
auto at_key(F f) {
  return [f](auto&&... args) {
    try {
      return f(std::forward<decltype(args)>(args)...);
    } catch (const core::InputError& e) {
      throw KeyError{e};
    }
  };
}
template <class Read>
auto read_file_at(const Config& config, const std::string& key, const std::string& file,
                  const std::string& what, Read read) {
  try {
    return core::read_named_file({config.where(key), key}, file, what, read);
  } catch (const KeyError& e) {
    throw e.error;
  }
}

// What a file's reader gathers of every atom as it passes on several ranks: the whole system's
// count and charge sums and, for velocities the file lacks, every atom's id and type in order.
struct WholeFile {
  InitialState::Whole whole;
  std::vector<std::int64_t> ids;
  std::vector<int> types;

  void add_charge(double q, double type_charge) {
    ++whole.natoms;
    whole.qsum += q;
    whole.q2sum += q * q;
    if (float(q) != float(type_charge)) whole.by_type_float = false;
    if (q != type_charge) whole.by_type_double = false;
  }
  // Velocities for the atoms s holds (a rank's share when `share`, else every atom), with the
  // sums over every atom of the file in order.
  void create_velocities(InitialState& s, const Config& config, bool share) const {
    const double t = config.real("system.temperature");
    const auto seed = static_cast<std::uint64_t>(config.integer("system.seed"));
    if (!share) return md::create_velocities(s, t, seed, units_of(config));
    system_velocities(
        s, whole.natoms,
        [&](std::size_t k) {
          return std::pair{ids[k], types[k]};
        },
        t, seed, units_of(config));
  }
};

// Data type k (1-based) is the k-th declared type; masses in the file must agree with the
// input's, which defines the potential. The state holds the atoms of sub-box grid.me of the grid
// grid_for picks once the header gives the box (every atom on one rank; none with `shape_only`,
// which reads and checks the file for its count and box). Several ranks: the whole system's
// count and charge sums, and the velocities the file lacks, are taken over every atom in file
// order as it is read, so that they have one rank's bits; no rank holds the whole file's atoms.
template <class GridFor>
InitialState lammps_data_state(const Config& config, const TypeSet& types, double reach,
                               GridFor grid_for, bool shape_only = false) {
  const std::string key = "system.lammps_data.file";
  const std::string file = data_file(config, key, "LAMMPS data file");
  InitialState s;
  s.types = types;
  BrickGrid grid;
  int me = 0;
  double lo[3] = {0, 0, 0};
  WholeFile all;
  LammpsDataFilter filter;
  filter.header = at_key([&](const LammpsData& h) {
    if (h.ntypes > types.size())
      config.fail(key, fmt::format("'{}' has {} atom types but the input declares {} ({}); "
                                   "declare one entry of system.types per data-file type, in "
                                   "order",
                                   file, h.ntypes, types.size(), joined(types.names)));
    for (int d = 0; d < 3; ++d) {
      lo[d] = h.lo[d];
      s.box[d] = h.hi[d] - h.lo[d];
    }
    check_box(config, key, s.box, std::size_t(h.natoms), 2.0 * reach);
    if (!shape_only) grid = grid_for(key, s.box, reach);
    me = grid.rank_of(grid.me);
  });
  filter.keep = [&](std::int64_t id, int type, const double* q, const double x[3]) {
    if (!shape_only && grid.ranks() <= 1) return true;
    const double qt = types.charge[std::size_t(type - 1)];
    all.add_charge(q ? *q : qt, qt);
    if (shape_only) return false;
    all.ids.push_back(id);
    all.types.push_back(type - 1);
    double p[3];
    for (int d = 0; d < 3; ++d) p[d] = x[d] - lo[d];
    return owner_rank(grid, p) == me;
  };
  const LammpsData d = read_file_at(config, key, file, "LAMMPS data file",
                                    [&] { return read_lammps_data(file, filter); });
  for (int t = 0; t < int(d.mass.size()); ++t)
    if (std::fabs(d.mass[t] - types.mass[t]) > 1e-12 * types.mass[t])
      config.fail(
          key, fmt::format("{}:{}: type {} has mass {} but its type '{}' in system.types "
                           "has mass {}",
                           file, d.mass_line[t], t + 1, d.mass[t], types.names[t], types.mass[t]));
  const std::size_t n = d.id.size();
  s.x.resize(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int dim = 0; dim < 3; ++dim) s.x[3 * i + dim] = d.x[3 * i + dim] - d.lo[dim];
  s.type.resize(n);
  for (std::size_t i = 0; i < n; ++i) s.type[i] = d.type[i] - 1;
  s.id = d.id;
  s.q = d.q;
  if (shape_only || grid.ranks() > 1) s.whole = all.whole;
  if (shape_only) return s;
  if (!d.v.empty())
    s.v = d.v;
  else
    all.create_velocities(s, config, grid.ranks() > 1);
  return s;
}

}  // namespace

namespace {

// The frame system.xyz.frame of an extended XYZ file, as lammps_data_state reads a data file:
// the grid is chosen once the frame's comment line gives the box, and each rank stores only its
// sub-box's atoms (atom k of the frame has id k + 1). Every particle's species is checked.
template <class GridFor>
InitialState xyz_state(const Config& config, const TypeSet& types, double reach, GridFor grid_for,
                       bool shape_only = false) {
  const std::string key = "system.xyz.file";
  const std::string file = data_file(config, key, "XYZ file");
  InitialState s;
  s.types = types;
  BrickGrid grid;
  int me = 0;
  WholeFile all;
  // Offsets of the columns among a particle's values (-1: absent).
  int pos = -1, velo = -1, charge = -1;
  core::XyzFilter filter;
  filter.frame = at_key([&](const core::XyzFrame& h, std::size_t n) {
    if (!h.box) config.fail(key, "'" + file + "' has no Lattice=\"...\" (the periodic box)");
    int at = 0;
    for (const auto& c : h.columns) {
      if (c.name == "pos" && pos < 0) {
        if (c.components != 3) config.fail(key, "'" + file + "' has no pos:R:3 property");
        pos = at;
      } else if ((c.name == "charge" || (c.name == "q" && !h.column("charge"))) && charge < 0) {
        if (c.components != 1)
          config.fail(key, "'" + file + "' has a charge property of more than 1 component");
        charge = at;
      } else if (c.name == "velo" && velo < 0) {
        if (c.components != 3)
          config.fail(key, "'" + file + "' has a velo property with other than 3 components");
        velo = at;
      }
      at += c.components;
    }
    if (pos < 0) config.fail(key, "'" + file + "' has no pos:R:3 property");
    for (int d = 0; d < 3; ++d) {
      s.box[d] = (*h.box)[d];
      if (!(s.box[d] > 0)) config.fail(key, "'" + file + "' has a non-positive box length");
    }
    check_box(config, key, s.box, n, 2.0 * reach);
    if (!shape_only) grid = grid_for(key, s.box, reach);
    me = grid.rank_of(grid.me);
  });
  filter.keep = at_key([&](std::size_t i, const std::string& species, const double* v) {
    const int t = type_index(types, species);
    if (t < 0)
      config.fail(key, fmt::format("atom {} of '{}' has species {}, which is not a declared type "
                                   "(declared types: {})",
                                   i + 1, file, core::quoted(species), joined(types.names)));
    if (!shape_only && grid.ranks() <= 1) return true;
    const double qt = types.charge[std::size_t(t)];
    all.add_charge(charge >= 0 ? v[charge] : qt, qt);
    if (shape_only) return false;
    all.ids.push_back(std::int64_t(i) + 1);
    all.types.push_back(t);
    return owner_rank(grid, v + pos) == me;
  });
  std::vector<std::size_t> rows;
  const core::XyzFrame frame = read_file_at(config, key, file, "XYZ file", [&] {
    return core::read_xyz(file, static_cast<int>(config.integer("system.xyz.frame")), filter, rows);
  });
  if (shape_only || grid.ranks() > 1) s.whole = all.whole;
  if (shape_only) return s;
  const core::XyzColumn* x = frame.column("pos");
  const core::XyzColumn* v = frame.column("velo");
  const core::XyzColumn* q = frame.column("charge") ? frame.column("charge") : frame.column("q");
  const std::size_t n = frame.size();
  for (std::size_t i = 0; i < n; ++i) {
    s.type.push_back(type_index(types, frame.species[i]));
    s.id.push_back(static_cast<std::int64_t>(rows[i] + 1));
    for (int d = 0; d < 3; ++d) s.x.push_back(x->values[3 * i + d]);
  }
  if (q) s.q = q->values;
  if (v)
    s.v = v->values;
  else
    all.create_velocities(s, config, grid.ranks() > 1);
  return s;
}

}  // namespace

namespace {

// The state of the atoms in sub-box grid.me of the grid grid_for(key, box, reach) picks once the
// box is known (every atom for a one-rank grid).
template <class GridFor>
InitialState make_state(const Config& config, GridFor grid_for) {
  const TypeSet types = read_types(config);
  const double reach = types.max_cutoff() + config.real("neighbor.skin");
  if (config.string("system.source") == "lattice") {
    const LatticeSpec l = lattice_spec(config, types);
    const std::string where = "system.lattice.cells";
    check_box(config, where, l.box, l.natoms, 2.0 * reach);
    // Several ranks: each makes only the atoms of its sub-box.
    const BrickGrid g = grid_for(where, l.box, reach);
    const int me = g.rank_of(g.me);
    const std::vector<std::array<double, 3>> basis = l.rocksalt ? rocksalt_basis() : fcc_basis;
    const auto type_of = [&](std::size_t b) {
      return l.rocksalt ? l.types[b < 4 ? 0 : 1] : l.types[b % l.types.size()];
    };
    // A rank's share of an even split, a tenth more for the lattice's steps at the sub-box faces.
    const std::size_t expected =
        g.ranks() <= 1 ? l.natoms
                       : std::min(l.natoms, l.natoms / std::size_t(g.ranks()) * 11 / 10 + 64);
    InitialState s = cubic_lattice(
        basis, l.a, int(l.cells[0]), int(l.cells[1]), int(l.cells[2]), type_of,
        [&](const double* x) { return g.ranks() <= 1 || owner_rank(g, x) == me; }, expected);
    s.types = types;
    const auto atom_of = [&](std::size_t k) {
      return std::pair{std::int64_t(k) + 1, type_of(k % basis.size())};
    };
    system_velocities(s, l.natoms, atom_of, config.real("system.temperature"),
                      static_cast<std::uint64_t>(config.integer("system.seed")), units_of(config));
    if (g.ranks() > 1) {
      InitialState::Whole w;
      w.natoms = l.natoms;
      for (std::size_t k = 0; k < l.natoms; ++k) {
        const double q = types.charge[std::size_t(atom_of(k).second)];
        w.qsum += q;
        w.q2sum += q * q;
      }
      s.whole = w;
    }
    return s;
  }
  if (config.string("system.source") == "lammps_data")
    return lammps_data_state(config, types, reach, grid_for);
  return xyz_state(config, types, reach, grid_for);
}

}  // namespace

InitialState make_initial_state(const Config& config, BrickGrid* grid) {
  return make_state(config, [&](const std::string& key, const double* box, double reach) {
    const BrickGrid g = grid ? rank_grid(config, key, box, reach) : BrickGrid{};
    if (grid) *grid = g;
    return g;
  });
}

InitialState make_initial_state(const Config& config, const BrickGrid& grid) {
  return make_state(config, [&](const std::string&, const double*, double) { return grid; });
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
  // A file: read and checked, its atoms not kept.
  const double reach = shape.types.max_cutoff() + config.real("neighbor.skin");
  const auto one_rank = [](const std::string&, const double*, double) { return BrickGrid{}; };
  const InitialState s = config.string("system.source") == "xyz"
                             ? xyz_state(config, shape.types, reach, one_rank, true)
                             : lammps_data_state(config, shape.types, reach, one_rank, true);
  shape.key =
      config.string("system.source") == "xyz" ? "system.xyz.file" : "system.lammps_data.file";
  for (int d = 0; d < 3; ++d) shape.box[d] = s.box[d];
  shape.natoms = s.total();
  return shape;
}

BrickGrid rank_grid(const Config& config, const std::string& key, const double box[3],
                    double reach) {
  const core::Comm& world = core::Comm::world();
  if (!world.distributed()) return BrickGrid{};
  const BrickGrid grid = BrickGrid::choose(world.size(), world.rank(), box, reach);
  if (grid.p[0] == 0)
    config.fail(key, fmt::format("the box {:.6g} x {:.6g} x {:.6g} cannot be cut into {} "
                                 "sub-boxes at least cutoff + skin = {:.6g} wide along each cut "
                                 "direction; run on fewer ranks or a larger box",
                                 box[0], box[1], box[2], world.size(), reach));
  return grid;
}

void check_input(const Config& config, const std::string& backend) {
  const SystemShape shape = system_shape(config);
  read_params(config, backend, shape.natoms);
  rank_grid(config, shape.key, shape.box, shape.types.max_cutoff() + config.real("neighbor.skin"));
}

void check_checkpoint(const Config& config, const core::CheckpointReader& cp,
                      PartChecks part_checks) {
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
  // Several ranks and a checkpoint in parts: the sizes from the manifest, then each part read by
  // one rank (part p by rank p mod R), one at a time, and the ids across the ranks.
  const core::Comm& world = core::Comm::world();
  if (cp.parts() > 0 && world.distributed()) {
    for (const char* entry : {"x", "v", "f", "x_build"})
      cp.check_size(entry, 3 * count * std::size_t(real_bytes));
    cp.check_size("type", count * sizeof(std::int32_t));
    cp.check_size("id", count * sizeof(std::int64_t));
    if (cp.has("q")) cp.check_size("q", count * std::size_t(real_bytes));
    if (part_checks == PartChecks::sizes) return;
    std::vector<std::int64_t> ids;
    const int ntypes = int(shape.types.names.size());
    // A part only this rank reads may fail: agreed before the ids pass between the ranks.
    world.agree([&] {
      for (std::size_t p = std::size_t(world.rank()); p < cp.parts();
           p += std::size_t(world.size())) {
        const auto part_ids = real_bytes == 4 ? CheckpointPart<float>::read(cp, p, ntypes).id
                                              : CheckpointPart<double>::read(cp, p, ntypes).id;
        cp.release_parts();
        ids.insert(ids.end(), part_ids.begin(), part_ids.end());
      }
    });
    if (const std::int64_t id = repeated_atom_id(world, std::move(ids)))
      cp.fail("id", fmt::format("holds atom id {} twice", id));
    return;
  }
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
