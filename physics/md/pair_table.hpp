#pragma once
// Tables for pair style table: LAMMPS table files (a keyword's section: 'N n [R|RSQ lo hi]
// [FPRIME lo hi]', then n lines 'index r energy force') read and resampled onto n points
// equally spaced in r^2, or tables made from a built-in style's expression.
#include "potentials/pair_style.hpp"

#include <string>
#include <vector>

namespace hayate::md {

// A keyword's section of a LAMMPS table file, as written.
struct TableFile {
  std::vector<double> r, e, f;  // distance, energy, force (not divided by r)
  double fplo = 0, fphi = 0;    // dF/dr at the ends: FPRIME, or from the end intervals
};

// Reads `keyword`'s section of `path`; throws core::InputError at the file's line and column.
TableFile read_table_file(const std::string& path, const std::string& keyword);

struct TableSampling {
  int points = 1000;
  bool spline = false;
};

// The file's table resampled from its first distance to `cutoff` (cubic splines through the
// file's points with LAMMPS' end slopes, so a table gives LAMMPS' values); cutoff <= 0 takes the
// file's last distance.
TableData resample(const TableFile& file, double cutoff, const TableSampling& sampling);

// A table of a built-in style (lj/cut, morse) with parameters `params` from `inner` to `cutoff`.
TableData table_of_style(const std::string& style, const std::vector<double>& params, double inner,
                         double cutoff, const TableSampling& sampling);

}  // namespace hayate::md
