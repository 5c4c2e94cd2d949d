#include "lammps_data.hpp"

#include "config/error.hpp"
#include "io/input_file.hpp"
#include "io/text_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace hayate::md {

namespace {

using Line = core::TextLine;

std::string joined_words(const Line& line, std::size_t from) {
  std::string s;
  for (std::size_t k = from; k < line.tokens.size(); ++k)
    s += (s.empty() ? "" : " ") + line.tokens[k].text;
  return s;
}

bool is_section(const Line& line) {
  return !line.tokens.empty() && std::isalpha(static_cast<unsigned char>(line.tokens[0].text[0]));
}

}  // namespace

LammpsData read_lammps_data(const std::string& path, const LammpsDataFilter& filter) {
  const std::uintmax_t bytes = core::check_input_file(path, "data file", core::max_data_file_bytes);
  core::TextReader r(path, "the data file");
  LammpsData d;
  Line line;
  if (!r.next(line)) r.fail(1, 1, "empty data file (the first line is a title)");

  // Header: counts and box bounds, up to the first section keyword.
  bool have_atoms = false, have_types = false, have_box[3] = {false, false, false};
  bool pending = r.next(line);
  for (; pending; pending = r.next(line)) {
    if (line.tokens.empty()) continue;
    if (is_section(line)) break;
    // Numbers first, then the keyword: "32000 atoms", "0.0 33.6 xlo xhi".
    std::size_t n = 0;
    while (n < line.tokens.size() &&
           !std::isalpha(static_cast<unsigned char>(line.tokens[n].text[0])))
      ++n;
    const std::string key = joined_words(line, n);
    if (n == 1 && key == "atoms") {
      d.natoms = r.integer(line, 0, "the atom count");
      if (d.natoms < 1 || d.natoms > 2147483647)
        r.fail(line, 0, "the atom count must be 1 .. 2^31 - 1");
      have_atoms = true;
    } else if (n == 1 && key == "atom types") {
      const std::int64_t t = r.integer(line, 0, "the atom type count");
      if (t < 1 || t > 4) r.fail(line, 0, "between 1 and 4 atom types are supported");
      d.ntypes = static_cast<int>(t);
      have_types = true;
    } else if (n == 2 && (key == "xlo xhi" || key == "ylo yhi" || key == "zlo zhi")) {
      const int dim = key[0] - 'x';
      d.lo[dim] = r.real(line, 0, "the lower bound");
      d.hi[dim] = r.real(line, 1, "the upper bound");
      if (!(d.hi[dim] > d.lo[dim])) r.fail(line, 1, "the upper box bound must exceed the lower");
      have_box[dim] = true;
    } else if (n == 3 && key == "xy xz yz") {
      for (std::size_t k = 0; k < 3; ++k)
        if (r.real(line, k, "a tilt factor") != 0.0)
          r.fail(line, k, "triclinic boxes are not supported (tilt factors must be 0)");
    } else if (n == 1 && (key == "bonds" || key == "angles" || key == "dihedrals" ||
                          key == "impropers" || key == "bond types" || key == "angle types" ||
                          key == "dihedral types" || key == "improper types")) {
      if (r.integer(line, 0, "a count") != 0)
        r.fail(
            line, 0,
            "molecular topology (" + key + ") is not supported: atom_style atomic or charge only");
    } else {
      r.fail(line, n < line.tokens.size() ? n : 0,
             "unknown header line '" + joined_words(line, 0) + "'");
    }
  }
  const int after_header = line.number;
  if (!have_atoms) r.fail(after_header, 1, "the header has no 'N atoms' line");
  if (!have_types) r.fail(after_header, 1, "the header has no 'N atom types' line");
  for (int dim = 0; dim < 3; ++dim)
    if (!have_box[dim])
      r.fail(after_header, 1,
             fmt::format("the header has no '{0}lo {0}hi' line", static_cast<char>('x' + dim)));

  if (filter.header) filter.header(d);
  const std::size_t natoms = static_cast<std::size_t>(d.natoms);
  // Every atom's id with where it was read, sorted by id after the Atoms section: repeats are
  // found there, and Velocities lines find their atoms (kept or not) by a binary search.
  struct Seen {
    std::int64_t id;
    int line, column;
    std::int32_t kept;  // index among the kept atoms, -1 if not kept
  };
  std::vector<Seen> ids;
  bool have_atom_section = false;

  // Reads `count` entry lines after a section keyword, calling f(line, k) for each.
  auto entries = [&](const std::string& name, std::size_t count, auto&& f) {
    std::size_t k = 0;
    while (k < count) {
      if (!r.next(line))
        r.fail(r.lines_read() + 1, 1,
               fmt::format("the {} section ends after {} of {} entries", name, k, count));
      if (line.tokens.empty()) continue;
      if (is_section(line))
        r.fail(line, 0, fmt::format("the {} section ends after {} of {} entries", name, k, count));
      f(line, k);
      ++k;
    }
  };

  while (pending) {
    if (line.tokens.empty()) {
      pending = r.next(line);
      continue;
    }
    const std::string section = joined_words(line, 0);
    const Line keyword = line;
    if (section == "Masses") {
      if (!d.mass.empty()) r.fail(keyword, 0, "a second Masses section");
      d.mass.assign(d.ntypes, 0.0);
      d.mass_line.assign(d.ntypes, 0);
      std::vector<bool> seen(d.ntypes, false);
      entries("Masses", std::size_t(d.ntypes), [&](const Line& l, std::size_t) {
        if (l.tokens.size() != 2) r.fail(l, 0, "a Masses line is 'type mass'");
        const std::int64_t t = r.integer(l, 0, "the type");
        if (t < 1 || t > d.ntypes || seen[t - 1])
          r.fail(l, 0, fmt::format("type {} is out of range 1..{} or repeated", t, d.ntypes));
        seen[t - 1] = true;
        d.mass[t - 1] = r.real(l, 1, "the mass");
        d.mass_line[t - 1] = l.number;
        if (!(d.mass[t - 1] > 0)) r.fail(l, 1, "masses must be positive");
      });
    } else if (section == "Atoms") {
      if (!keyword.comment.empty() && keyword.comment != "atomic" && keyword.comment != "charge")
        r.fail(keyword.number, 1,
               "atom_style '" + keyword.comment +
                   "' is not supported: Atoms # atomic or Atoms # charge");
      if (have_atom_section) r.fail(keyword, 0, "a second Atoms section");
      // atom_style charge carries the charge between the type and the position.
      const bool charged = keyword.comment == "charge";
      const std::size_t first = charged ? 3 : 2;
      // The header's count is not trusted for memory: storage grows with the lines read, and an
      // Atoms line takes at least 10 bytes ("1 1 0 0 0" and a newline).
      const std::size_t likely = std::min<std::uintmax_t>(natoms, bytes / 10);
      ids.reserve(likely);
      if (!filter.keep) {
        d.id.reserve(likely);
        d.type.reserve(likely);
        d.x.reserve(3 * likely);
        if (charged) d.q.reserve(likely);
      }
      entries("Atoms", natoms, [&](const Line& l, std::size_t) {
        if (l.tokens.size() != first + 3 && l.tokens.size() != first + 6)
          r.fail(l, 0,
                 charged ? fmt::format("a charge Atoms line is 'id type q x y z [ix iy iz]' (6 "
                                       "or 9 columns), found {}",
                                       l.tokens.size())
                         : fmt::format("an atomic Atoms line is 'id type x y z [ix iy iz]' (5 "
                                       "or 8 columns), found {}",
                                       l.tokens.size()));
        const std::int64_t id = r.integer(l, 0, "the atom id");
        if (id < 1) r.fail(l, 0, "atom ids must be positive");
        const std::int64_t t = r.integer(l, 1, "the atom type");
        if (t < 1 || t > d.ntypes)
          r.fail(l, 1, fmt::format("atom type {} is out of range 1..{}", t, d.ntypes));
        const double q = charged ? r.real(l, 2, "the charge") : 0.0;
        double x[3];
        for (std::size_t c = 0; c < 3; ++c) x[c] = r.real(l, first + c, "a coordinate");
        // Image flags only record how often an atom crossed the box; positions are wrapped.
        for (std::size_t c = first + 3; c < l.tokens.size(); ++c) r.integer(l, c, "an image flag");
        const bool keep = !filter.keep || filter.keep(id, int(t), charged ? &q : nullptr, x);
        ids.push_back(Seen{id, l.number, l.tokens[0].column,
                           keep ? std::int32_t(d.id.size()) : std::int32_t(-1)});
        if (!keep) return;
        d.id.push_back(id);
        d.type.push_back(static_cast<int>(t));
        if (charged) d.q.push_back(q);
        for (std::size_t c = 0; c < 3; ++c) d.x.push_back(x[c]);
      });
      have_atom_section = true;
      // A repeated id: reported at the first line that repeats an earlier one.
      std::sort(ids.begin(), ids.end(), [](const Seen& a, const Seen& b) {
        return a.id < b.id || (a.id == b.id && a.line < b.line);
      });
      const Seen* repeat = nullptr;
      for (std::size_t k = 1; k < ids.size(); ++k)
        if (ids[k].id == ids[k - 1].id && (!repeat || ids[k].line < repeat->line)) repeat = &ids[k];
      if (repeat)
        r.fail(repeat->line, repeat->column, fmt::format("atom id {} repeats", repeat->id));
    } else if (section == "Velocities") {
      if (!have_atom_section)
        r.fail(keyword.number, 1, "the Velocities section must follow the Atoms section");
      if (!d.v.empty()) r.fail(keyword, 0, "a second Velocities section");
      d.v.assign(3 * d.id.size(), 0.0);
      std::vector<bool> seen(natoms, false);
      entries("Velocities", natoms, [&](const Line& l, std::size_t) {
        if (l.tokens.size() != 4) r.fail(l, 0, "a Velocities line is 'id vx vy vz'");
        const std::int64_t id = r.integer(l, 0, "the atom id");
        const auto it = std::lower_bound(ids.begin(), ids.end(), id,
                                         [](const Seen& s, std::int64_t v) { return s.id < v; });
        const std::size_t k = std::size_t(it - ids.begin());
        if (it == ids.end() || it->id != id || seen[k])
          r.fail(l, 0, fmt::format("atom id {} is not in the Atoms section or repeats", id));
        seen[k] = true;
        double v[3];
        for (int c = 0; c < 3; ++c) v[c] = r.real(l, 1 + c, "a velocity");
        if (it->kept >= 0)
          for (int c = 0; c < 3; ++c) d.v[3 * std::size_t(it->kept) + std::size_t(c)] = v[c];
      });
    } else if (section == "Pair Coeffs" || section == "PairIJ Coeffs") {
      // The input's pair section defines the potential; these lines are skipped.
      const std::size_t count = section == "Pair Coeffs"
                                    ? std::size_t(d.ntypes)
                                    : std::size_t(d.ntypes) * (d.ntypes + 1) / 2;
      entries(section, count, [](const Line&, std::size_t) {});
    } else {
      r.fail(
          keyword, 0,
          "section '" + section +
              "' is not supported (Masses, Atoms # atomic or # charge, Velocities, Pair Coeffs)");
    }
    pending = r.next(line);
  }
  if (!have_atom_section) r.fail(r.lines_read(), 1, "the data file has no Atoms section");
  return d;
}

}  // namespace hayate::md
