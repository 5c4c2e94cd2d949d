#include "md_setup.hpp"

#include "io/xyz.hpp"
#include "lammps_data.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  s.records("system.types", "Atom types (at most 4); default: one type A with the defaults below",
            [](core::Section& t) {
              t.string("name", "Type name (XYZ species)");
              t.real("mass", "Mass").defaults(1.0).above(0);
              t.real("epsilon", "LJ well depth of the like pair").defaults(1.0).above(0);
              t.real("sigma", "LJ diameter of the like pair").defaults(1.0).above(0);
              t.real("cutoff", "Interaction cutoff of the like pair").defaults(2.5).above(0);
            })
      .optional_key()
      .items(1, max_types);

  s.section("pair", "Unlike-pair coefficients");
  s.choice("pair.mixing", {"geometric", "arithmetic"},
           "Mixing of unlike pairs: geometric (all sqrt) or arithmetic (sigma, cutoff averaged)")
      .defaults("geometric");
  s.boolean("pair.shift",
            "Shift the energy to zero at the cutoff (forces unchanged); LAMMPS' "
            "in.lj does not")
      .defaults(false);
  s.records("pair.coeffs", "Explicit coefficients for a type pair, overriding the mixing rule",
            [](core::Section& p) {
              p.strings("types", "The two type names").items(2, 2);
              p.real("epsilon", "Well depth").above(0);
              p.real("sigma", "Diameter").above(0);
              p.real("cutoff", "Cutoff; absent = the mixed value").optional_key().above(0);
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
  s.boolean("neighbor.sort",
            "Reorder the atoms by cell at every rebuild, so that neighbors in space are "
            "neighbors in memory")
      .defaults(true);
  s.choice("neighbor.layout", {"auto", "csr", "padded", "transposed"},
           "List storage; auto = transposed (thread) or padded (warp) on GPUs, padded on CPUs")
      .defaults("auto");

  s.section("force", "Force kernel variant");
  s.choice("force.list", {"auto", "full", "half"},
           "full: each pair twice, no scatter; half: each pair once, j-forces scattered")
      .defaults("auto");
  s.choice("force.scatter", {"auto", "atomic", "duplicated"},
           "Half list: atomic adds, or one force copy per thread (CPU only); auto per backend")
      .defaults("auto");
  s.choice("force.parallel", {"auto", "thread", "warp"},
           "thread per atom, or a team per atom with neighbors over vector lanes (a warp on GPUs)")
      .defaults("auto");

  s.choice("force.positions", {"auto", "split", "packed"},
           "split: x, y, z arrays and a minimum-image test per pair; packed: (x, y, z, type) "
           "records plus periodic images of atoms near a face, no image test")
      .defaults("auto");

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
  TypeSet t;
  double eps[max_types], sig[max_types], cut[max_types];
  if (config.has("system.types")) {
    for (const auto& item : config.records("system.types")) {
      const std::string name = item.string("name");
      if (type_index(t, name) >= 0) item.fail("name", "type '" + name + "' is declared twice");
      const int k = t.size();
      t.names.push_back(name);
      t.mass.push_back(item.real("mass"));
      eps[k] = item.real("epsilon");
      sig[k] = item.real("sigma");
      cut[k] = item.real("cutoff");
    }
  } else {
    t.names = {"A"};
    t.mass = {1.0};
    eps[0] = 1.0;
    sig[0] = 1.0;
    cut[0] = 2.5;
  }
  t.shift = config.boolean("pair.shift");
  const bool geometric = config.string("pair.mixing") == "geometric";
  for (int a = 0; a < t.size(); ++a)
    for (int b = 0; b < t.size(); ++b) {
      t.epsilon[a][b] = std::sqrt(eps[a] * eps[b]);
      t.sigma[a][b] = geometric ? std::sqrt(sig[a] * sig[b]) : 0.5 * (sig[a] + sig[b]);
      t.cutoff[a][b] = geometric ? std::sqrt(cut[a] * cut[b]) : 0.5 * (cut[a] + cut[b]);
    }
  if (config.has("pair.coeffs")) {
    for (const auto& item : config.records("pair.coeffs")) {
      const auto names = item.strings("types");
      int idx[2];
      for (int k = 0; k < 2; ++k) {
        idx[k] = type_index(t, names[k]);
        if (idx[k] < 0)
          item.fail("types",
                    "unknown type '" + names[k] + "' (declared types: " + joined(t.names) + ")");
      }
      for (int k = 0; k < 2; ++k) {
        const int a = idx[k], b = idx[1 - k];
        t.epsilon[a][b] = item.real("epsilon");
        t.sigma[a][b] = item.real("sigma");
        if (item.has("cutoff")) t.cutoff[a][b] = item.real("cutoff");
      }
    }
  }
  return t;
}

// The measured winners (benchmarks/results/h200/2026-11-22-physics/md.json, md_openmp.json and
// the development machine, docs/md.md). H200, both precisions: full list, thread per atom,
// transposed rows beat every half-list and warp variant at 100k atoms and at 4M atoms (warp
// per atom was ahead by 4% only at rho 0.5 in float, below the 10% a change needs). 16 host
// threads: half list with duplicated scatter beats the full list by 1.3x at rho 1.0 (equal at
// rho 0.5). Packed positions: 1-2% less CPU time on the 2-core host (within its noise); on the
// H100 (benchmarks/results/h100/2026-11-22-round2) 1.4x faster than split at 4M atoms.
ForceOptions auto_force_options(const std::string& backend) {
  ForceOptions o;
  if (backend == "cuda") {
    o.list = ListKind::Full;
    o.scatter = Scatter::Atomic;
  } else {
    o.list = ListKind::Half;
    o.scatter = Scatter::Duplicated;
  }
  o.parallel = Parallel::Thread;
  // Packed records won on the H100 (4M atoms, double: 1.56e9 vs 1.13e9 atom-steps/s split) and
  // are no slower on CPUs.
  o.positions = Positions::Packed;
  return o;
}

Layout auto_layout(const std::string& backend, Parallel parallel) {
  // CPUs: padded rows need one search pass where CSR needs two (count, then fill).
  if (backend != "cuda") return Layout::Padded;
  // Thread per atom: lane l reads atom l's k-th neighbor, contiguous when transposed.
  // Warp per atom: the lanes read one atom's neighbors, contiguous in a row.
  return parallel == Parallel::Thread ? Layout::Transposed : Layout::Padded;
}

MdParams read_params(const Config& config, const std::string& backend) {
  MdParams p;
  p.dt = config.real("run.dt");
  p.skin = config.real("neighbor.skin");
  p.every = static_cast<int>(config.integer("neighbor.every"));
  p.check = config.boolean("neighbor.check");
  p.sort = config.boolean("neighbor.sort");
  if (p.every == 0 && !p.check)
    config.fail("neighbor.every",
                "with neighbor.check false the list would never be rebuilt; "
                "give a period >= 1 or set check: true");
  const ForceOptions a = auto_force_options(backend);
  const std::string list = config.string("force.list");
  const std::string scatter = config.string("force.scatter");
  const std::string parallel = config.string("force.parallel");
  p.force.list = list == "auto" ? a.list : (list == "full" ? ListKind::Full : ListKind::Half);
  p.force.scatter = scatter == "auto"
                        ? (backend == "cuda" ? Scatter::Atomic : Scatter::Duplicated)
                        : (scatter == "atomic" ? Scatter::Atomic : Scatter::Duplicated);
  p.force.parallel =
      parallel == "auto" ? a.parallel : (parallel == "thread" ? Parallel::Thread : Parallel::Team);
  const std::string positions = config.string("force.positions");
  p.force.positions = positions == "auto"    ? a.positions
                      : positions == "split" ? Positions::Split
                                             : Positions::Packed;
  if (backend == "cuda" && p.force.list == ListKind::Half && p.force.scatter == Scatter::Duplicated)
    config.fail("force.scatter",
                "duplicated scatter keeps one force array per thread and is not "
                "available on cuda; use atomic or auto");
  const std::string layout = config.string("neighbor.layout");
  p.layout = layout == "auto"     ? auto_layout(backend, p.force.parallel)
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
  const LammpsData d = read_lammps_data(file);
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

InitialState make_initial_state(const Config& config) {
  const TypeSet types = read_types(config);
  const double reach = 2.0 * (types.max_cutoff() + config.real("neighbor.skin"));
  InitialState s;
  std::string where;
  if (config.string("system.source") == "lattice") {
    std::vector<int> lattice_types;
    for (const auto& name : config.strings("system.lattice.types")) {
      const int t = type_index(types, name);
      if (t < 0)
        config.fail("system.lattice.types",
                    "unknown type '" + name + "' (declared types: " + joined(types.names) + ")");
      lattice_types.push_back(t);
    }
    const auto cells = config.integers("system.lattice.cells");
    for (const auto c : cells)
      if (c < 1) config.fail("system.lattice.cells", "cell counts must be >= 1");
    const double n = 4.0 * double(cells[0]) * double(cells[1]) * double(cells[2]);
    if (n > 2147483647.0)
      config.fail("system.lattice.cells", fmt::format("{:.0f} atoms exceed 2^31 - 1", n));
    s = fcc_lattice(config.real("system.lattice.density"), int(cells[0]), int(cells[1]),
                    int(cells[2]), lattice_types);
    s.types = types;
    create_velocities(s, config.real("system.temperature"),
                      static_cast<std::uint64_t>(config.integer("system.seed")));
    where = "system.lattice.cells";
  } else if (config.string("system.source") == "lammps_data") {
    s = lammps_data_state(config, types);
    where = "system.lammps_data.file";
  } else {
    const std::string file = config.string("system.xyz.file");
    if (file.empty()) config.fail("system.xyz.file", "source: xyz needs a file name");
    const core::XyzFrame frame =
        core::read_xyz(file, static_cast<int>(config.integer("system.xyz.frame")));
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
                    fmt::format("atom {} of '{}' has species '{}', which is not a declared type "
                                "(declared types: {})",
                                i + 1, file, frame.species[i], joined(types.names)));
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
  for (int d = 0; d < 3; ++d)
    if (s.box[d] < reach)
      config.fail(where, fmt::format("the box ({:.6g} x {:.6g} x {:.6g}) is smaller than 2 x "
                                     "(cutoff + skin) = {:.6g} along {}; enlarge it or reduce "
                                     "the cutoff or skin",
                                     s.box[0], s.box[1], s.box[2], reach, "xyz"[d]));
  if (s.size() < 2) config.fail(where, "at least 2 atoms are needed");
  // Packed positions index atoms and up to 7 periodic images each with an int.
  if (config.string("force.positions") != "split" && double(s.size()) * 8.0 > 2147483647.0)
    config.fail("force.positions",
                fmt::format("{} atoms and their periodic images exceed 2^31 - 1 packed records; "
                            "use force.positions: split",
                            s.size()));
  return s;
}

}  // namespace hayate::md
