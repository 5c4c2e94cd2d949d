// pair_style table: a table made from the lj/cut expression reproduces lj/cut in every force
// variant to the interpolation error and converges at second order in the table spacing; a pair
// closer than the table's first point stops the run; LAMMPS table files are read as LAMMPS reads
// them (the morse pairs of in.morse, written by LAMMPS' pair_write, give LAMMPS' energy and
// pressure with pair_style table linear 1000).
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "md/md_setup.hpp"
#include "md/pair_table.hpp"
#include "md/potentials/styles.hpp"
#include "md_test_util.hpp"
#include "run/registry.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace hayate::md::test {
namespace {

template <class Space>
class MdTable : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(MdTable);

// The pairs of `lj` (lj/cut) as tables of the lj/cut expression from `inner` to each cutoff.
TypeSet lj_as_tables(const TypeSet& lj, double inner, const TableSampling& sampling,
                     const std::string& style = "table") {
  const int n = lj.size();
  TypeSet t = TypeSet::empty(style, 1, n);
  t.names = lj.names;
  t.mass = lj.mass;
  t.charge = lj.charge;
  t.coul_cutoff = lj.coul_cutoff;
  for (int a = 0; a < n; ++a)
    for (int b = a; b < n; ++b) {
      const double* p = lj.pair(a, b);
      t.tables.push_back(table_of_style("lj/cut", {p[0], p[1]}, inner, lj.cut(a, b), sampling));
      for (const auto [i, j] : {std::pair{a, b}, std::pair{b, a}}) {
        t.pair(i, j)[0] = double(t.tables.size() - 1);
        t.cutoff[i * n + j] = lj.cut(a, b);
      }
    }
  return t;
}

template <class Space, class Real, class Style>
std::vector<double> forces_of(const InitialState& init, const ForceOptions& o, Layout layout,
                              double* energy = nullptr, double* virial = nullptr) {
  MdParams params;
  params.skin = 0.2;
  MdSystem<Space, Real, Style> sys(init, params);
  sys.initialize();
  sys.set_force_options(o, layout);
  sys.compute_forces(true);
  if (energy) *energy = sys.energy_virial().energy;
  if (virial) *virial = sys.energy_virial().virial;
  return download_forces(sys);
}

template <class Space, class Real>
void check_every_variant(double tolerance) {
  const InitialState lj = rattled_lattice(4, 0.8442, 0.08, true);
  InitialState tab = lj;
  tab.types = lj_as_tables(lj.types, 0.75, TableSampling{40000, false});
  // The system sorts atoms by cell at its first list build, the same way for both styles.
  const auto [o0, l0] = all_variants<Space>().front();
  double e_ref, w_ref;
  const auto f_ref = forces_of<Space, double, LjCut>(lj, o0, l0, &e_ref, &w_ref);
  for (const auto& [options, layout] : all_variants<Space>()) {
    SCOPED_TRACE(variant_name(options) + "/" + layout_name(layout));
    double e, w;
    const auto f = forces_of<Space, Real, Table>(tab, options, layout, &e, &w);
    EXPECT_LE(max_relative(f, f_ref), tolerance);
    EXPECT_NEAR(e, e_ref, tolerance * std::fabs(e_ref));
    EXPECT_NEAR(w, w_ref, tolerance * std::fabs(w_ref));
  }
}

TYPED_TEST(MdTable, LjTableMatchesLjCutInEveryVariant) {
  // 40,000 points in r^2 from 0.75: interpolation error of |F|/r about 3e-7 of its size, so
  // that the virial (pair terms of both signs summing to about 1/60 of their magnitudes) also
  // checks the variants' plumbing, not the interpolation, which MdTableAccuracy measures.
  check_every_variant<TypeParam, double>(1e-4);
  check_every_variant<TypeParam, float>(2e-4);
}

// The largest error of |F|/r of an lj/cut table against the expression, relative to the largest
// |F|/r of the range (at the inner end), sampled on a grid far finer than any table's spacing
// (every interval's worst point is seen). Not relative pointwise: |F| crosses zero at 2^(1/6).
double table_error(int points, bool spline) {
  const double inner = 0.75, cutoff = 2.5, p[2] = {1.0, 1.0};
  TypeSet t = TypeSet::empty("table", 1, 1);
  t.tables.push_back(
      table_of_style("lj/cut", {p[0], p[1]}, inner, cutoff, TableSampling{points, spline}));
  const std::vector<double> data = Table::flatten<double>(t);
  const double index = 0.0;
  const auto c = Table::coeff<double>(&index, data.data(), t);
  const auto lj = LjCut::coeff<double>(p);
  double worst = 0, largest = 0;
  const int samples = 200000;
  for (int s = 0; s <= samples; ++s) {
    const double r2 = inner * inner + (cutoff * cutoff - inner * inner) * s / samples;
    const double exact = LjCut::compute(r2, lj).fpair;
    worst = std::max(worst, std::fabs(Table::compute(r2, c).fpair - exact));
    largest = std::max(largest, std::fabs(exact));
  }
  return worst / largest;
}

// The lookup's interval from additions alone: in bounds for any x (NaN included), and inside
// the table x - start in [0, 1] (1 only at an integer x, where the interpolation is the same).
template <class T>
void check_table_interval() {
  const T last = T(998);
  const T xs[] = {
      T(0),     T(1e-20), T(0.25), T(0.5),    T(0.75),  T(1),
      T(2),     T(2.5),   T(3),    T(17.999), T(997.5), last,
      T(998.4), T(999),   T(-3),   T(5000),   T(1e30),  std::numeric_limits<T>::quiet_NaN()};
  for (const T x : xs) {
    T start = T(-1);
    const int k = compat::table_interval(x, last, start);
    EXPECT_EQ(T(k), start) << x;
    EXPECT_GE(k, 0) << x;
    EXPECT_LE(T(k), last) << x;
    if (x >= T(0) && x <= last + T(1)) {
      EXPECT_GE(x - start, T(0)) << x;
      EXPECT_LE(x - start, T(1)) << x;
      EXPECT_TRUE(T(k) == std::floor(x) || (x == std::floor(x) && T(k) == x - T(1))) << x;
    }
  }
}

TEST(MdTableAccuracy, IntervalIndexFromAdditions) {
  check_table_interval<double>();
  check_table_interval<float>();
}

TEST(MdTableAccuracy, LinearTableConvergesAtSecondOrder) {
  const double e500 = table_error(500, false), e1000 = table_error(1000, false),
               e2000 = table_error(2000, false);
  EXPECT_NEAR(e500 / e1000, 4.0, 0.3);
  EXPECT_NEAR(e1000 / e2000, 4.0, 0.3);
  // Cubic splines in r^2: fourth order, far below linear at the same size.
  const double s1000 = table_error(1000, true), s2000 = table_error(2000, true);
  EXPECT_LT(s1000, 0.01 * e1000);
  EXPECT_NEAR(s1000 / s2000, 16.0, 4.0);
}

// The flattened layout (each interval's force values paired for one aligned load): every
// table's pairs aligned whatever the sizes, coul/long's table after them on 16 bytes, and the
// lookup the interpolation of the table's own points, a f_k + b f_{k+1} (+ the spline terms).
template <class Real>
void check_table_layout(bool spline) {
  TypeSet t = TypeSet::empty("table", 1, 1);
  for (const int n : {999, 1000, 7, 2})
    t.tables.push_back(table_of_style("lj/cut", {1.0, 1.0}, 0.8, 2.5, TableSampling{n, spline}));
  alignas(16) static Real data[16384];
  const std::vector<Real> flat = Table::flatten<Real>(t);
  ASSERT_EQ(flat.size(), Table::size<Real>(t));
  ASSERT_LE(flat.size(), std::size(data));
  EXPECT_EQ(flat.size() * sizeof(Real) % 16, 0u);  // coul/long's table follows on 16 bytes
  std::copy(flat.begin(), flat.end(), data);
  for (std::size_t i = 0; i < t.tables.size(); ++i) {
    const double index = double(i);
    const auto c = Table::coeff<Real>(&index, data, t);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c.f) % (2 * sizeof(Real)), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c.f2) % (2 * sizeof(Real)), 0u);
    const TableData& tab = t.tables[i];
    for (int k = 0; k + 1 < tab.n; ++k)
      for (const double frac : {0.0, 0.3, 0.75}) {
        const Real r2 = Real(tab.innersq + (k + frac) * tab.delta);
        const Real x = (r2 - c.innersq) * c.invdelta;
        Real start;
        const int j = compat::table_interval(x, c.last, start);
        const Real b = x - start, a = Real(1) - b;
        auto at = [&](const std::vector<double>& v, int m) { return Real(v[std::size_t(m)]); };
        Real f = a * at(tab.f, j) + b * at(tab.f, j + 1);
        Real e = a * at(tab.e, j) + b * at(tab.e, j + 1);
        if (spline) {
          const Real ca = (a * a * a - a) * c.h2_6, cb = (b * b * b - b) * c.h2_6;
          e += ca * at(tab.e2, j) + cb * at(tab.e2, j + 1);
          f += ca * at(tab.f2, j) + cb * at(tab.f2, j + 1);
        }
        const PairForce<Real> p = Table::compute(r2, c);
        EXPECT_EQ(p.fpair, f) << "table " << i << " interval " << k;
        EXPECT_EQ(p.energy, e) << "table " << i << " interval " << k;
      }
  }
}

TEST(MdTableAccuracy, RecordsAlignedAndTheLookupInterpolatesThePoints) {
  for (const bool spline : {false, true}) {
    check_table_layout<double>(spline);
    check_table_layout<float>(spline);
  }
}

TYPED_TEST(MdTable, TableWithCoulombMatchesLjCutCoulLong) {
  using Space = TypeParam;
  InitialState lj = rattled_lattice(3, 0.8442, 0.08, true);
  lj.types.style = "lj/cut/coul/long";
  lj.types.charge = {1.0, -1.0};
  lj.types.coul_cutoff = 2.8;
  InitialState tab = lj;
  tab.types = lj_as_tables(lj.types, 0.75, TableSampling{4000, true}, "table/coul/long");
  MdParams params;
  params.skin = 0.2;
  params.kspace.ewald = true;
  params.kspace.accuracy = 1e-6;
  MdSystem<Space, double, LjCutCoulLong> ref(lj, params);
  MdSystem<Space, double, TableCoulLong> sys(tab, params);
  ref.initialize();
  sys.initialize();
  EXPECT_LE(max_relative(download_forces(sys), download_forces(ref)), 1e-6);
  EXPECT_NEAR(sys.thermo().pe, ref.thermo().pe, 1e-6 * std::fabs(ref.thermo().pe));
  EXPECT_NEAR(sys.thermo().press, ref.thermo().press, 1e-6 * std::fabs(ref.thermo().press));
}

TYPED_TEST(MdTable, PairCloserThanTheTableIsAnError) {
  using Space = TypeParam;
  InitialState s = rattled_lattice(3, 0.8442, 0.0, false);
  s.x[0] = s.x[3] + 0.6;  // atom 0 at distance 0.6 from atom 1 along x
  s.x[1] = s.x[4];
  s.x[2] = s.x[5];
  s.types = lj_as_tables(s.types, 0.75, TableSampling{1000, false});
  MdParams params;
  params.skin = 0.2;
  MdSystem<Space, double, Table> sys(s, params);
  EXPECT_THROW(sys.initialize(), core::RuntimeFailure);
}

// From a YAML input: exit 3 with the reason, and the thermo rows already written kept. The
// device's flag is read with energies and at rebuilds: with thermo rows every step the run
// stops in the step the pair came too close, with rows every 1000 steps at the next rebuild.
TEST(MdTableInput, CompressedLatticeStopsWithExit3) {
  for (const int thermo_every : {1, 1000}) {
    const auto dir = hayate::test::scratch_path("table_range");
    std::filesystem::create_directories(dir);
    {
      std::ofstream in(dir / "in.yaml");
      in << "problem: md\nsystem: {lattice: {density: 1.6, cells: [5, 5, 5]}, temperature: 1.0}\n"
            "pair:\n  style: table\n  coeffs:\n"
            "    - {types: [A, A], expression: lj/cut, epsilon: 1, sigma: 1, inner: 0.95}\n"
            "neighbor: {every: 10, check: false}\n"
            "run: {steps: 400, dt: 0.005}\noutput: {thermo_every: "
         << thermo_every << "}\n";
    }
    const auto r = hayate::test::run_cli("run " + (dir / "in.yaml").string() + " --output " +
                                         (dir / "out").string());
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("closer than its table's first point"), std::string::npos) << r.output;
    std::filesystem::remove_all(dir);
  }
}

TEST(MdTableInput, BadTableFileNamesLineAndColumn) {
  const auto dir = hayate::test::scratch_path("table_file");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.table").string();
  {
    std::ofstream f(path);
    f << "# a table\n\nPAIR\nN 3 R 1.0 2.0\n\n1 1.0 1.0 2.0\n3 1.5 0.5 1.0\n";
  }
  try {
    read_table_file(path, "PAIR");
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.table:7:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected point 2"), std::string::npos) << e.what();
  }
  try {
    read_table_file(path, "OTHER");
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no section 'OTHER'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// LAMMPS: in.table (pair_style table linear 1000 over morse.table, written by pair_write from
// in.morse's pairs) on unit_tests/md/data/two_type_256.data.
const double lammps_table_pe = -5.52462638106894, lammps_table_press = -3.01057676981627;

core::Config lammps_table_case() {
  const std::string table = hayate::test::source_path("unit_tests/md/data/morse.table");
  const std::string text =
      "problem: md\nsystem:\n  source: lammps_data\n  temperature: 0\n  lammps_data:\n"
      "    file: " +
      hayate::test::source_path("unit_tests/md/data/two_type_256.data") +
      "\n  types:\n    - {name: A, mass: 1.0}\n    - {name: B, mass: 2.0}\n"
      "pair:\n  style: table\n  table: {points: 1000, interpolation: linear}\n  coeffs:\n"
      "    - {types: [A, A], file: " +
      table + ", keyword: MORSE_AA}\n    - {types: [B, B], file: " + table +
      ", keyword: MORSE_BB}\n    - {types: [A, B], file: " + table + ", keyword: MORSE_AB}\n";
  return core::Registry::instance().loader().load_string(text, "table_case.yaml");
}

TYPED_TEST(MdTable, TableFileGivesLammpsEnergyAndPressure) {
  using Space = TypeParam;
  const core::Config config = lammps_table_case();
  const InitialState init = make_initial_state(config);
  ASSERT_EQ(init.types.tables.size(), 3u);
  EXPECT_DOUBLE_EQ(init.types.cut(1, 1), 2.3);  // the file's last distance
  const MdParams params = read_params(config, core::space_name<Space>(), init.size());
  MdSystem<Space, double, Table> sys(init, params);
  sys.initialize();
  const Thermo t = sys.thermo();
  EXPECT_NEAR(t.pe, lammps_table_pe, 1e-11 * std::fabs(lammps_table_pe));
  EXPECT_NEAR(t.press, lammps_table_press, 1e-10 * std::fabs(lammps_table_press));
}

TEST(MdTableLammps, KeptNumbersAreWhatLammpsPrints) {
  if (std::system("command -v lmp > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "LAMMPS (lmp) is not installed; the kept numbers are used as they are";
  const std::string cmd = "cd '" + hayate::test::source_path("unit_tests/md/data") +
                          "' && lmp -in in.table -log none -echo none 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  const auto header = out.find("Step PotEng");
  ASSERT_NE(header, std::string::npos) << out;
  std::istringstream row(out.substr(out.find('\n', header) + 1));
  long step = -1;
  double pe, press;
  row >> step >> pe >> press;
  EXPECT_EQ(step, 0);
  EXPECT_NEAR(pe, lammps_table_pe, 1e-13 * std::fabs(pe));
  EXPECT_NEAR(press, lammps_table_press, 1e-13 * std::fabs(press));
}

}  // namespace
}  // namespace hayate::md::test
