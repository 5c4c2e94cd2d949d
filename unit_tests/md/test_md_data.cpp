// LAMMPS data files as initial state: a hand-written file read back exactly, a lattice written
// as a data file giving the lattice run's thermodynamics, malformed files reported at their line.
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "io/xyz.hpp"
#include "md/lammps_data.hpp"
#include "md_test_util.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hayate::md::test {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Two types, Masses, image flags, comments, a skipped Pair Coeffs section and velocities
// listed in another order than the atoms.
const char* small_data = R"(LAMMPS data file written by hand

4 atoms
2 atom types
0 bonds

-1.0 3.0 xlo xhi
0.5 4.5 ylo yhi
10.0 14.25 zlo zhi
0.0 0.0 0.0 xy xz yz

Masses

1 1.0
2 2.0  # heavier

Pair Coeffs # lj/cut

1 1.0 1.0
2 0.5 1.1

Atoms # atomic

7 1 -0.5 1.0 11.0
3 2 0.25 2.0 12.5 0 1 -1
12 1 1.5 3.5 13.0
5 2 2.75 4.0 10.5 0 0 0

Velocities

12 0.3 0.2 0.1
7 0.1 -0.2 0.3
5 -0.4 0.5 -0.6
3 0.0 0.25 -0.125
)";

const char* small_yaml = R"(problem: md
system:
  source: lammps_data
  lammps_data: {file: md_small.data}
  types:
    - {name: A, cutoff: 1.0}
    - {name: B, mass: 2.0, cutoff: 1.0}
neighbor: {skin: 0.3}
run: {steps: 0}
output: {thermo_every: 1, dump_every: 1}
)";

TEST(MdData, HandWrittenFileReadsExactly) {
  write_file("md_small.data", small_data);
  const LammpsData d = read_lammps_data("md_small.data");
  ASSERT_EQ(d.natoms, 4);
  EXPECT_EQ(d.ntypes, 2);
  EXPECT_EQ(d.lo[0], -1.0);
  EXPECT_EQ(d.hi[2], 14.25);
  EXPECT_EQ(d.mass, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(d.id, (std::vector<std::int64_t>{7, 3, 12, 5}));
  EXPECT_EQ(d.type, (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(d.x[3], 0.25);
  EXPECT_EQ(d.x[11], 10.5);
  // Velocities are matched to atoms by id.
  EXPECT_EQ(d.v[0], 0.1);
  EXPECT_EQ(d.v[5], -0.125);
  EXPECT_EQ(d.v[6], 0.3);

  // Round trip: the run's dump (in id order) holds the file's atoms, shifted to [0, L).
  auto& registry = core::Registry::instance();
  core::run_problem(registry.loader().load_string(small_yaml, "small.yaml"),
                    {"serial", "md_small_out", true});
  const core::XyzFrame f = core::read_xyz("md_small_out/dump.xyz", 0);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f.species, (std::vector<std::string>{"B", "B", "A", "A"}));  // ids 3, 5, 7, 12
  ASSERT_TRUE(f.box.has_value());
  EXPECT_EQ((*f.box)[0], 4.0);
  EXPECT_EQ((*f.box)[2], 4.25);
  const std::vector<double> pos{1.25, 1.5, 2.5, 3.75, 3.5, 0.5, 0.5, 0.5, 1.0, 2.5, 3.0, 3.0};
  const std::vector<double> velo{0.0, 0.25, -0.125, -0.4, 0.5, -0.6, 0.1, -0.2, 0.3, 0.3, 0.2, 0.1};
  EXPECT_EQ(f.column("pos")->values, pos);
  EXPECT_EQ(f.column("velo")->values, velo);
}

// The 4x4x4 fcc lattice written as a data file (shifted box, ids in reverse order) gives the
// same thermodynamics as the lattice source.
TEST(MdData, LatticeAsDataFileMatchesLatticeRun) {
  InitialState s = fcc_lattice(0.8442, 4, 4, 4, {0});
  s.types = TypeSet::single();
  create_velocities(s, 1.44, 87287);
  const double lo[3] = {-2.5, 0.0, 7.125};
  std::string text = "fcc 4x4x4\n\n256 atoms\n1 atom types\n";
  for (int d = 0; d < 3; ++d)
    text += fmt::format("{:.17g} {:.17g} {}lo {}hi\n", lo[d], lo[d] + s.box[d], "xyz"[d], "xyz"[d]);
  text += "\nMasses\n\n1 1.0\n\nAtoms # atomic\n\n";
  for (int i = 255; i >= 0; --i)
    text += fmt::format("{} 1 {:.17g} {:.17g} {:.17g}\n", s.id[i], s.x[3 * i] + lo[0],
                        s.x[3 * i + 1] + lo[1], s.x[3 * i + 2] + lo[2]);
  text += "\nVelocities\n\n";
  for (int i = 0; i < 256; ++i)
    text += fmt::format("{} {:.17g} {:.17g} {:.17g}\n", s.id[i], s.v[3 * i], s.v[3 * i + 1],
                        s.v[3 * i + 2]);
  write_file("md_fcc.data", text);

  const std::string yaml =
      "problem: md\nsystem:\n  lattice: {cells: [4, 4, 4]}\n"
      "run: {steps: 20}\noutput: {thermo_every: 10}\n";
  auto& registry = core::Registry::instance();
  core::run_problem(registry.loader().load_string(yaml, "fcc.yaml"), {"serial", "md_fcc_a", true});
  core::run_problem(
      registry.loader().load_string(
          yaml, "fcc.yaml", {"system.source=lammps_data", "system.lammps_data.file=md_fcc.data"}),
      {"serial", "md_fcc_b", true});
  std::istringstream a(read_all("md_fcc_a/thermo.csv")), b(read_all("md_fcc_b/thermo.csv"));
  std::string la, lb;
  std::getline(a, la);
  std::getline(b, lb);
  ASSERT_EQ(la, lb);
  int rows = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    double va[6], vb[6];
    ASSERT_EQ(std::sscanf(la.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &va[0], &va[1], &va[2], &va[3],
                          &va[4], &va[5]),
              6);
    ASSERT_EQ(std::sscanf(lb.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &vb[0], &vb[1], &vb[2], &vb[3],
                          &vb[4], &vb[5]),
              6);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(va[k], vb[k], 1e-9 * (1 + std::fabs(va[k]))) << la;
    ++rows;
  }
  EXPECT_EQ(rows, 3);  // steps 0, 10, 20
}

std::string data_error(const std::string& data, const std::string& yaml_extra = "") {
  write_file("md_bad.data", data);
  try {
    const auto config = core::Registry::instance().loader().load_string(
        "problem: md\nsystem:\n  source: lammps_data\n  lammps_data:\n    file: md_bad.data\n" +
            yaml_extra,
        "bad.yaml");
    core::Registry::instance().find("md").create(config, "serial");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

const char* header = "t\n\n2 atoms\n1 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n0 6 zlo zhi\n";

TEST(MdData, BadFilesGiveDataFileLineColumn) {
  const std::string atoms = "\nAtoms # atomic\n\n1 1 1 1 1\n2 1 2 2 2\n";
  struct Case {
    std::string data, where, what;
  };
  const Case cases[] = {
      {std::string(header) + atoms, "", ""},  // the valid file these break
      {"t\n\n2 atoms\n1 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n" + atoms, "md_bad.data:8:1",
       "no 'zlo zhi'"},
      {"t\n\n2 atomz\n", "md_bad.data:3:3", "unknown header line"},
      {std::string(header) + "0.5 0 0 xy xz yz\n" + atoms, "md_bad.data:8:1", "triclinic"},
      {std::string(header) + "\nAtoms # full\n\n1 1 1 0 1 1 1\n2 1 1 0 2 2 2\n", "md_bad.data:9:1",
       "atom_style 'full' is not supported"},
      {std::string(header) + "\nAtoms\n\n1 1 1 1 1\n2 3 2 2 2\n", "md_bad.data:12:3",
       "atom type 3 is out of range"},
      {std::string(header) + "\nAtoms\n\n1 1 1 1 1\n1 1 2 2 2\n", "md_bad.data:12:1",
       "atom id 1 repeats"},
      {std::string(header) + "\nAtoms\n\n1 1 1 1 1\n2 1 2 2.x 2\n", "md_bad.data:12:7",
       "expected a number"},
      {std::string(header) + "\nAtoms\n\n1 1 1 1 1\n", "md_bad.data:12:1",
       "ends after 1 of 2 entries"},
      {std::string(header) + "\nAtoms\n\n1 1 1 1\n2 1 2 2 2\n", "md_bad.data:11:1", "5 or 8"},
      {std::string(header) + atoms + "\nVelocities\n\n1 0 0 0\n9 0 0 0\n", "md_bad.data:17:1",
       "atom id 9"},
      {std::string(header) + atoms + "\nBonds\n\n1 1 1 2\n", "md_bad.data:14:1",
       "section 'Bonds' is not supported"},
      {std::string(header) + "\nMasses\n\n1 -1\n" + atoms, "md_bad.data:11:3", "positive"},
      {"t\n\n2 atoms\n1 atom types\n", "md_bad.data:4:1", "no 'xlo xhi'"},
  };
  for (const auto& c : cases) {
    const std::string e = data_error(c.data);
    if (c.where.empty()) {
      EXPECT_EQ(e, "");
      continue;
    }
    EXPECT_NE(e.find(c.where), std::string::npos) << c.data << "\n-> " << e;
    EXPECT_NE(e.find(c.what), std::string::npos) << c.data << "\n-> " << e;
  }
  // Checks against the input: more types than declared, a mass that differs.
  std::string e =
      data_error("t\n\n2 atoms\n2 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n0 6 zlo zhi\n" + atoms);
  EXPECT_NE(e.find("bad.yaml:5:11"), std::string::npos) << e;
  EXPECT_NE(e.find("2 atom types but the input declares 1"), std::string::npos) << e;
  e = data_error(std::string(header) + "\nMasses\n\n1 2.0\n" + atoms);
  EXPECT_NE(e.find("md_bad.data:11: type 1 has mass"), std::string::npos) << e;
  // A box too small for the cutoff, as for the other sources.
  e = data_error("t\n\n2 atoms\n1 atom types\n0 5 xlo xhi\n0 6 ylo yhi\n0 6 zlo zhi\n" + atoms);
  EXPECT_NE(e.find("smaller than 2 x (cutoff + skin)"), std::string::npos) << e;

  // The CLI exits with 2 and names the data file's position.
  write_file("md_bad.data", std::string(header) + "\nAtoms\n\n1 1 1 1 1\n2 3 2 2 2\n");
  write_file("md_bad_data.yaml",
             "problem: md\nsystem:\n  source: lammps_data\n  lammps_data: {file: md_bad.data}\n");
  const auto r = hayate::test::run_cli("run md_bad_data.yaml --quiet --output md_bad_data_out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("md_bad.data:12:3"), std::string::npos) << r.output;
}

// An input error at a key, met while a file is read (its species, its type count), is reported
// at that key once, also when the key came from the command line.
TEST(MdData, KeyErrorsMetWhileReadingNameTheKeyOnce) {
  write_file("md_species.xyz",
             "2\nLattice=\"6 0 0 0 6 0 0 0 6\" Properties=species:S:1:pos:R:3\n"
             "A 1 1 1\nC 2 2 2\n");
  write_file("md_types.data",
             "t\n\n2 atoms\n2 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n0 6 zlo "
             "zhi\n\nAtoms\n\n1 1 1 1 1\n2 2 2 2 2\n");
  write_file("md_plain.yaml", "problem: md\nsystem:\n  types: [{name: A, mass: 1.0}]\n");
  for (const auto& [sets, key, what] : std::vector<std::array<std::string, 3>>{
           {"--set system.source=xyz --set system.xyz.file=md_species.xyz", "'system.xyz.file'",
            "species 'C', which is not a declared type"},
           {"--set system.source=lammps_data --set system.lammps_data.file=md_types.data",
            "'system.lammps_data.file'", "2 atom types but the input declares 1"}}) {
    const auto r = hayate::test::run_cli("check md_plain.yaml " + sets);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(what), std::string::npos) << r.output;
    const std::size_t first = r.output.find(key);
    EXPECT_NE(first, std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(key, first + 1), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace hayate::md::test
