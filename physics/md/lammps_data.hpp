#pragma once
// LAMMPS data files (`read_data`) of atom_style atomic or charge: header counts and orthogonal box
// bounds, the Masses, Atoms and Velocities sections. Coefficient sections are skipped (the input's
// pair section defines the potential); anything else is reported as an input error at the
// offending line and column of the data file.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hayate::md {

struct LammpsData {
  std::int64_t natoms = 0;
  int ntypes = 0;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  std::vector<double> mass;      // per type (1-based type k at k - 1); empty without Masses
  std::vector<int> mass_line;    // data-file line of each mass, for messages
  std::vector<std::int64_t> id;  // per kept atom, in file order
  std::vector<int> type;         // 1-based, as in the file
  std::vector<double> x;         // 3 per atom, as in the file (not shifted to the box)
  std::vector<double> q;         // per atom (atom_style charge); empty for atom_style atomic
  std::vector<double> v;         // 3 per atom in Atoms order; empty without Velocities
};

// What to keep of a data file (several ranks each keep their sub-box's atoms). `header` is called
// once the header is read (counts and box known); `keep` for every line of the Atoms section in
// file order, with the 1-based type and the charge (null for atom_style atomic). Every line is
// read and checked whatever is kept, so every reader meets the same errors; only the kept atoms
// (and their velocities) are stored. Empty: keep every atom.
struct LammpsDataFilter {
  std::function<void(const LammpsData& header)> header;
  std::function<bool(std::int64_t id, int type, const double* q, const double x[3])> keep;
};

// Throws core::InputError naming path:line:col for malformed content.
LammpsData read_lammps_data(const std::string& path, const LammpsDataFilter& filter = {});

}  // namespace hayate::md
