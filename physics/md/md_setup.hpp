#pragma once
// From a validated input to an initial state and run parameters (host code, double precision).
#include "config/config.hpp"
#include "config/schema.hpp"
#include "exec/exec_traits.hpp"
#include "md_system.hpp"
#include "run/checkpoint.hpp"

#include <cstdint>
#include <string>

namespace hayate::md {

void declare_schema(core::Schema& schema);

// Types and pair coefficients of the input's pair style (mixing rule plus explicit pairs).
TypeSet read_types(const core::Config& config);

// Run parameters; `auto` tuning choices are resolved for `backend` and the atom count.
MdParams read_params(const core::Config& config, const std::string& backend, std::size_t natoms);

// fcc or rock-salt lattice, LAMMPS data or extended XYZ file, velocities created where the file
// has none. Fails with file:line:col for boxes too small for the cutoff, unknown types and
// similar input problems.
// With `grid`: the ranks' grid of sub-boxes is chosen (rank_grid) and written there, and the
// state holds the atoms of this rank's sub-box only, with the whole system's count and charge
// sums in InitialState::whole (one rank: every atom, as without). A lattice makes only those
// atoms, with the velocities the whole system gives them; a file (LAMMPS data, extended XYZ)
// is read line by line, each rank keeping its sub-box's atoms and taking the whole system's sums
// over every atom as it passes.
InitialState make_initial_state(const core::Config& config, BrickGrid* grid = nullptr);
// The same for sub-box grid.me of a given grid (grid.length: the input's box).
InitialState make_initial_state(const core::Config& config, const BrickGrid& grid);

// The atom count, box and types the input gives, and the key that sets the count and box; a
// lattice is checked without making its atoms (a file is read).
struct SystemShape {
  TypeSet types;
  double box[3] = {0, 0, 0};
  std::size_t natoms = 0;
  std::string key;
};
SystemShape system_shape(const core::Config& config);

// The ranks' grid of sub-boxes (one rank: the whole box); bad input at `key` (the key that sets
// the box) when the box cannot be cut for the ranks.
BrickGrid rank_grid(const core::Config& config, const std::string& key, const double box[3],
                    double reach);

// Every check of the input short of making the atoms (hayate check and run, before writing).
void check_input(const core::Config& config, const std::string& backend);

// Checks a checkpoint against the input, entry by entry, before anything is allocated from it:
// atom count, precision, pair style, types and masses, box, run.dt, the step within run.steps;
// finite positions, velocities and forces; types within the declared ones, unique atom ids.
// Several ranks with a checkpoint in parts: each part is read and checked by one rank, one part
// at a time, and the ids across the ranks; with PartChecks::sizes only the manifest's sizes (a
// restore, which checks what each rank reads as it reads it: MdSystem::restore_share).
enum class PartChecks { values, sizes };
void check_checkpoint(const core::Config& config, const core::CheckpointReader& checkpoint,
                      PartChecks part_checks = PartChecks::values);

// fcc lattice as LAMMPS `lattice fcc rho`: 4 atoms per cubic cell of side (4/rho)^(1/3).
// Atom b of each cell gets type types[b % types.size()].
InitialState fcc_lattice(double density, int nx, int ny, int nz, const std::vector<int>& types);
InitialState fcc_lattice_with_side(double a, int nx, int ny, int nz, const std::vector<int>& types);

// Rock salt (NaCl): cations on an fcc lattice of cell side a, anions on the same lattice shifted
// by a/2 along x; 8 atoms per cubic cell.
InitialState rocksalt_lattice(double a, int nx, int ny, int nz, int cation, int anion);

// Gaussian velocities keyed on (seed, atom id), zero total momentum, rescaled to exactly
// temperature T with 3N - 3 degrees of freedom in the given units, as LAMMPS `velocity all
// create T seed`.
void create_velocities(InitialState& state, double temperature, std::uint64_t seed,
                       const Units& units = Units{});

// The variants `auto` picks on a backend.
ForceOptions auto_force_options(const core::BackendTraits& traits);
Layout auto_layout(const core::BackendTraits& traits, Parallel parallel);

}  // namespace hayate::md
