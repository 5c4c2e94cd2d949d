// Point charges: the Coulomb pair styles in every kernel variant against a serial double
// reference, and the Ewald sum against what it must reproduce: the Madelung constant of rock
// salt, a direct lattice sum over many periodic images (with the surface term of spherical
// summation), independence of the splitting, and LAMMPS' lj/cut/coul/long + kspace_style ewald.
#include "cli_runner.hpp"
#include "compat/kokkos_special_math.hpp"
#include "md/md_setup.hpp"
#include "md/potentials/styles.hpp"
#include "md_test_util.hpp"
#include "run/registry.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

namespace hayate::md::test {
namespace {

template <class Space>
class MdCoulomb : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(MdCoulomb);

const double pi = 3.14159265358979323846;

// A two-type lattice whose types carry charges +1 and -1 (rattled rock salt at a = 2.2).
InitialState charged_salt(int cells, double rattle, const std::string& style) {
  TypeSet t = TypeSet::empty(style, style.rfind("lj/cut", 0) == 0 ? 2 : 0, 2);
  t.names = {"Na", "Cl"};
  t.mass = {1.0, 1.5};
  t.charge = {1.0, -1.0};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      if (t.nparams == 2) {
        t.pair(a, b)[0] = 0.5;
        t.pair(a, b)[1] = 1.0;
      }
      t.cutoff[a * 2 + b] = 2.5;
    }
  t.coul_cutoff = 3.0;
  InitialState s = rocksalt_lattice(2.2, cells, cells, cells, 0, 1);
  for (std::size_t k = 0; k < s.x.size(); ++k)
    s.x[k] += rattle * (2.0 * util::uniform01(31, k, 0) - 1.0);
  s.types = t;
  create_velocities(s, 1.0, 99);
  return s;
}

// What check_charged_variants compares. per_atom_charges: each atom its own charge (no lookup
// by type possible); eval: coul/long from its table or the expression.
struct ChargedCheck {
  double tolerance = 1e-12;
  double g = 0;  // splitting of coul/long
  bool per_atom_charges = false;
  CoulLongEval eval = CoulLongEval::Analytic;
};

// The pair part of a charged style (for coul/long the real-space part with splitting g) in every
// kernel variant, with charges looked up by type and per atom, against the serial double
// reference (the expression, in double).
template <class Space, class Real, class Style>
void check_charged_variants(const ChargedCheck& check) {
  const double tolerance = check.tolerance, g = check.g;
  const bool per_atom_charges = check.per_atom_charges;
  InitialState init = charged_salt(3, 0.15, Style::name);
  if (per_atom_charges)
    for (std::size_t i = 0; i < init.size(); ++i)
      init.q.push_back(init.types.charge[std::size_t(init.type[i])] *
                       (0.5 + util::uniform01(47, i, 0)));
  MdParams params;
  params.skin = 0.2;
  params.kspace.g_ewald = g;
  params.coul_long = check.eval;
  MdSystem<Space, Real, Style> sys(init, params);
  sys.initialize();
  std::vector<double> x;
  std::vector<int> type;
  download(sys, x, type);
  auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.charges());
  const std::vector<double> q(hq.data(), hq.data() + sys.size());
  const double box[3] = {sys.box().length[0], sys.box().length[1], sys.box().length[2]};
  const Reference ref =
      reference_forces(x, type, init.types, box, &q, CoulombPart{init.types.coul_cutoff, g, 1.0});
  const auto variants = all_variants<Space>();
  ASSERT_GE(variants.size(), 9u);
  for (auto [options, layout] : variants)
    for (const ChargeLookup lookup : {ChargeLookup::Auto, ChargeLookup::PerAtom}) {
      options.charges = lookup;
      SCOPED_TRACE(variant_name(options) + "/" + layout_name(layout) +
                   (lookup == ChargeLookup::Auto ? "/auto" : "/per_atom"));
      sys.set_force_options(options, layout);
      EXPECT_EQ(sys.charges_by_type(), lookup == ChargeLookup::Auto && !per_atom_charges);
      sys.compute_forces(true);
      const std::vector<double> forces = download_forces(sys);
      EXPECT_LE(max_relative(forces, ref.f), tolerance);
      EXPECT_NEAR(sys.energy_virial().energy, ref.energy, tolerance * std::fabs(ref.energy));
      EXPECT_NEAR(sys.energy_virial().virial, ref.virial, tolerance * std::fabs(ref.virial));
      // Without energies the kernels skip the energy's work (coul/long: its table's cubic),
      // never the force's: the same forces, bit for bit where the sums' order is fixed (atomic
      // adds from several threads take any order).
      sys.compute_forces(false);
      if (options.list == ListKind::Half && options.scatter == Scatter::Atomic)
        EXPECT_LE(max_relative(download_forces(sys), forces),
                  1000 * std::numeric_limits<Real>::epsilon());
      else
        EXPECT_EQ(download_forces(sys), forces);
    }
}

TYPED_TEST(MdCoulomb, CoulCutEveryVariantMatchesSerialReference) {
  check_charged_variants<TypeParam, double, CoulCut>({1e-12, 0});
  check_charged_variants<TypeParam, double, LjCutCoulCut>({1e-12, 0});
  check_charged_variants<TypeParam, float, LjCutCoulCut>({2e-5, 0});
}

TYPED_TEST(MdCoulomb, CoulLongRealSpaceMatchesSerialReference) {
  check_charged_variants<TypeParam, double, CoulLong>({1e-12, 1.1});
  check_charged_variants<TypeParam, double, LjCutCoulLong>({1e-12, 1.1});
  check_charged_variants<TypeParam, double, LjCutCoulLong>({1e-12, 1.1, true});
}

// From the table (the default): within its error of the expression, in every variant (the
// atoms' net forces, small beside the pair forces in a crystal, within 6.9e-8 of the largest:
// the force's float coefficients); in float within float's rounding.
TYPED_TEST(MdCoulomb, CoulLongTableMatchesSerialReference) {
  const CoulLongEval table = CoulLongEval::Table;
  check_charged_variants<TypeParam, double, CoulLong>({1e-7, 1.1, false, table});
  check_charged_variants<TypeParam, double, LjCutCoulLong>({1e-7, 1.1, false, table});
  check_charged_variants<TypeParam, double, LjCutCoulLong>({1e-7, 1.1, true, table});
  check_charged_variants<TypeParam, float, LjCutCoulLong>({2e-5, 1.1, false, table});
}

// The segments of r^2 by exponent and top mantissa bits: each x lies in its segment, the
// fraction is exact, and the numbers increase with x.
template <class T>
void check_segments() {
  using Seg = compat::ExponentSegments<CoulLongKind::table_bits, T>;
  int previous = 0;
  for (int i = 0; i <= 200000; ++i) {
    const T x = T(std::pow(10.0, -6.0 + 12.0 * i / 200000));
    const int k = Seg::index(x);
    ASSERT_GE(k, previous) << x;
    previous = k;
    const T start = Seg::start(k), end = Seg::start(k + 1);
    ASSERT_LE(start, x);
    ASSERT_LT(x, end);
    // 64 segments per octave: the width is start / 64 .. start / 128.
    ASSERT_LE(double(end - start), double(start) / 64.0);
    ASSERT_GE(double(end - start), double(start) / 128.0);
    ASSERT_EQ(Seg::fraction(x, k), (x - start) / (end - start)) << x;
  }
  EXPECT_EQ(Seg::fraction(T(3.0), Seg::index(T(3.0))), T(0));  // 3 = 2 (1 + 32/64)
  EXPECT_EQ(Seg::index(T(2.0)) - Seg::index(T(1.0)), 64);
}

TEST(MdCoulombTable, SegmentsFromExponentBits) {
  check_segments<double>();
  check_segments<float>();
}

// The table against erfc(g r) / r and its force in double from r_cut / 512 (closer than
// r_cut / 256: the expression) to the cutoff: below 6e-8 of the unscreened Coulomb force
// (1/r^3 as |F| / r; 5.8e-8 at worst, the rounding of its float coefficients) and 1e-9 of the
// energy (1/r; 9.9e-10) at every distance; continuous across segment borders, the force's
// float cubic included (its last coefficient closes it onto the next segment's first).
TEST(MdCoulombTable, TableMatchesTheExpression) {
  for (const double g : {0.0, 0.3, 1.1, 2.0}) {
    CoulombSettings c;
    c.cutoff = 3.0;
    c.g_ewald = g;
    const std::vector<double> data = CoulLongKind::flatten<double>(c);
    ASSERT_FALSE(data.empty());
    const auto table = CoulLongKind::table_at(data.data(), c);
    double worst_f = 0, worst_e = 0;
    for (int i = 0; i <= 400000; ++i) {
      const double r = 3.0 * std::pow(2.0, -9.0 + 9.0 * i / 400000), r2 = r * r;
      double f, e;
      CoulLongKind::eval(r2, 1.0, g, table, f, e);
      const double e_ref = std::erfc(g * r) / r;
      const double f_ref = (e_ref + 2.0 / std::sqrt(pi) * g * std::exp(-g * g * r2)) / r2;
      worst_f = std::max(worst_f, std::fabs(f - f_ref) * r2 * r);
      worst_e = std::max(worst_e, std::fabs(e - e_ref) * r);
    }
    EXPECT_LE(worst_f, 6e-8) << g;
    EXPECT_LE(worst_e, 1e-9) << g;
    // Both sides of a segment border (r^2 = 4 starts one) give the same value.
    const double below = std::nextafter(4.0, 0.0);
    double f0, e0, f1, e1;
    CoulLongKind::eval(below, 1.0, g, table, f0, e0);
    CoulLongKind::eval(4.0, 1.0, g, table, f1, e1);
    EXPECT_NEAR(f0, f1, 1e-14 * f1);
    EXPECT_NEAR(e0, e1, 1e-14 * e1);
  }
  // No table: nothing flattened, the expression throughout.
  CoulombSettings analytic;
  analytic.cutoff = 3.0;
  analytic.eval = CoulLongEval::Analytic;
  EXPECT_TRUE(CoulLongKind::flatten<double>(analytic).empty());
}

// erfc from exp(-x^2), as the real-space kernel evaluates it, against the library's erfc: to
// double rounding in double, to Abramowitz & Stegun's 1.5e-7 and a few float roundings in float;
// beyond the fitted range (x > 6) no worse than erfc(6).
TEST(MdCoulombErfc, FromExpMatchesTheLibraryErfc) {
  double worst = 0, worst_float = 0;
  for (int i = 0; i <= 80000; ++i) {
    const double x = 8.0 * i / 80000;
    const double e = std::erfc(x);
    worst = std::max(worst, std::fabs(compat::erfc_from_exp(x, std::exp(-x * x)) - e));
    const float xf = float(x);
    worst_float = std::max(
        worst_float,
        std::fabs(double(compat::erfc_from_exp(xf, std::exp(-xf * xf))) - std::erfc(double(xf))));
  }
  EXPECT_LE(worst, 3e-15);
  EXPECT_LE(worst_float, 6e-7);
  EXPECT_NEAR(compat::rsqrt(6.25), 0.4, 1e-16);
}

// Ewald energy of perfect rock salt of unit charges with nearest-neighbour distance 1: the
// Madelung constant, whatever the splitting.
double madelung(const std::string& backend, double g, double accuracy,
                const std::string& coul_long = "table") {
  auto& registry = core::Registry::instance();
  std::ostringstream yaml;
  yaml << "problem: md\nsystem:\n  lattice: {style: rocksalt, constant: 2.0, cells: [3, 3, 3], "
          "types: [Na, Cl]}\n  temperature: 0\n  types:\n    - {name: Na, charge: 1}\n"
          "    - {name: Cl, charge: -1}\npair: {style: coul/long, coul_cutoff: 2.8, coul_long: "
       << coul_long
       << "}\n"
          "neighbor: {skin: 0.2}\nkspace: {style: ewald, accuracy: "
       << accuracy << ", g_ewald: " << g << "}\nrun: {steps: 0}\n";
  const core::Config config = registry.loader().load_string(yaml.str(), "salt.yaml");
  const InitialState init = make_initial_state(config);
  const MdParams params = read_params(config, backend, init.size());
  return core::dispatch_backend(backend, [&](auto space) {
    MdSystem<decltype(space), double, CoulLong> sys(init, params, space);
    sys.initialize();
    // pe is per ion; a pair of ions at distance 1 has -M.
    return -2.0 * sys.thermo().pe;
  });
}

TYPED_TEST(MdCoulomb, MadelungConstantOfRockSalt) {
  const std::string backend = core::space_name<TypeParam>();
  // Splittings whose real-space part ends below 3e-10 at the cutoff 2.8 (erfc(1.6 * 2.8)).
  for (const double g : {1.6, 2.0, 2.4}) {
    SCOPED_TRACE(g);
    const double tabulated = madelung(backend, g, 1e-10);
    EXPECT_NEAR(tabulated, 1.747564594633182, 1e-6);
    EXPECT_NEAR(tabulated, madelung(backend, g, 1e-10, "analytic"), 1e-9);
  }
}

// A charged LJ rock salt from YAML: the potential energy per ion at step 0 with pair block
// `pair` and the Ewald sum; `lj`: the types' lj/cut parameters (a table style takes none).
template <class Style>
double salt_pe(const std::string& backend, const std::string& pair, const std::string& lj) {
  auto& registry = core::Registry::instance();
  const std::string yaml =
      "problem: md\nsystem:\n  lattice: {style: rocksalt, constant: 2.2, cells: [3, 3, 3], "
      "types: [Na, Cl]}\n  temperature: 0\n  types:\n"
      "    - {name: Na, charge: 1" +
      lj + "}\n    - {name: Cl, charge: -1" + lj + "}\n" + pair +
      "neighbor: {skin: 0.2}\nkspace: {style: ewald, accuracy: 1e-8}\nrun: {steps: 0}\n";
  const core::Config config = registry.loader().load_string(yaml, "salt.yaml");
  const InitialState init = make_initial_state(config);
  const MdParams params = read_params(config, backend, init.size());
  return core::dispatch_backend(backend, [&](auto space) {
    MdSystem<decltype(space), double, Style> sys(init, params, space);
    sys.initialize();
    return sys.thermo().pe;
  });
}

// table/coul/long is a real-space part of the Ewald sum like lj/cut/coul/long: with a table of
// the lj/cut expression it gives lj/cut/coul/long's energy to the table's accuracy.
TYPED_TEST(MdCoulomb, TableCoulLongTakesTheEwaldSum) {
  const std::string backend = core::space_name<TypeParam>();
  const double lj = salt_pe<LjCutCoulLong>(
      backend, "pair: {style: lj/cut/coul/long, cutoff: 2.5, coul_cutoff: 3.0}\n",
      ", epsilon: 0.5, sigma: 1");
  const double tab = salt_pe<TableCoulLong>(
      backend,
      "pair:\n  style: table/coul/long\n  cutoff: 2.5\n  coul_cutoff: 3.0\n"
      "  table: {points: 4000, interpolation: spline}\n  coeffs:\n"
      "    - {types: [Na, Na], expression: lj/cut, epsilon: 0.5, sigma: 1, inner: 0.75}\n"
      "    - {types: [Na, Cl], expression: lj/cut, epsilon: 0.5, sigma: 1, inner: 0.75}\n"
      "    - {types: [Cl, Cl], expression: lj/cut, epsilon: 0.5, sigma: 1, inner: 0.75}\n",
      "");
  EXPECT_NEAR(tab, lj, 1e-7 * std::fabs(lj));
  EXPECT_LT(lj, -1.0);  // bound by the charges
}

// A small neutral cell of random charges: Ewald against the direct sum over all periodic images
// within a sphere of radius R (spherical summation converges to Ewald plus the surface term
// 2 pi |M|^2 / (3 V) of the cell's dipole moment M, with tin-foil boundaries left out). The
// sphere is one in space, not in image indices: in a box of unequal sides an index ball is an
// ellipsoid, whose surface term differs.
struct Cell {
  double box[3] = {5.0, 5.5, 6.0};
  std::vector<double> x, q;
};

Cell random_cell(int n) {
  Cell c;
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) c.x.push_back(c.box[d] * util::uniform01(7, i, d));
    c.q.push_back(i % 2 ? -1.0 : 1.0);
  }
  return c;
}

void direct_sum(const Cell& c, double radius, double& energy, std::vector<double>& f) {
  const int n = int(c.q.size());
  energy = 0;
  f.assign(3 * n, 0.0);
  int reach[3];
  for (int k = 0; k < 3; ++k) reach[k] = int(std::ceil(radius / c.box[k]));
  for (int a = -reach[0]; a <= reach[0]; ++a)
    for (int b = -reach[1]; b <= reach[1]; ++b)
      for (int d = -reach[2]; d <= reach[2]; ++d) {
        const double shift[3] = {a * c.box[0], b * c.box[1], d * c.box[2]};
        if (shift[0] * shift[0] + shift[1] * shift[1] + shift[2] * shift[2] > radius * radius)
          continue;
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            if (a == 0 && b == 0 && d == 0 && i == j) continue;
            double r[3], r2 = 0;
            for (int k = 0; k < 3; ++k) {
              r[k] = c.x[3 * i + k] - c.x[3 * j + k] - shift[k];
              r2 += r[k] * r[k];
            }
            const double rinv = 1.0 / std::sqrt(r2);
            energy += 0.5 * c.q[i] * c.q[j] * rinv;
            for (int k = 0; k < 3; ++k) f[3 * i + k] += c.q[i] * c.q[j] * rinv * rinv * rinv * r[k];
          }
      }
}

template <class Space>
void ewald_of_cell(const Cell& c, double g, double& energy, std::vector<double>& f) {
  InitialState s;
  for (int d = 0; d < 3; ++d) s.box[d] = c.box[d];
  s.x = c.x;
  s.q = c.q;
  const int n = int(c.q.size());
  s.v.assign(3 * n, 0.0);
  for (int i = 0; i < n; ++i) {
    s.type.push_back(0);
    s.id.push_back(i + 1);
  }
  s.types = TypeSet::empty("coul/long", 0, 1);
  s.types.cutoff = {2.3};
  s.types.coul_cutoff = 2.3;
  MdParams p;
  p.skin = 0.1;
  p.every = 1000;
  p.check = false;
  p.kspace.ewald = true;
  p.kspace.accuracy = 1e-12;
  p.kspace.g_ewald = g;
  MdSystem<Space, double, CoulLong> sys(s, p);
  sys.initialize();
  energy = sys.energy_virial().energy;
  // Back to the input order (the system sorts atoms by cell).
  auto ids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.ids());
  const auto fs = download_forces(sys);
  f.assign(3 * n, 0.0);
  for (int k = 0; k < n; ++k)
    for (int d = 0; d < 3; ++d) f[3 * (ids(k) - 1) + d] = fs[3 * k + d];
}

TYPED_TEST(MdCoulomb, EwaldEqualsDirectLatticeSumAndDoesNotDependOnTheSplitting) {
  using Space = TypeParam;
  const Cell c = random_cell(16);
  double e_direct;
  std::vector<double> f_direct;
  direct_sum(c, 120.0, e_direct, f_direct);
  const double volume = c.box[0] * c.box[1] * c.box[2];
  double m[3] = {0, 0, 0};
  for (std::size_t i = 0; i < c.q.size(); ++i)
    for (int d = 0; d < 3; ++d) m[d] += c.q[i] * c.x[3 * i + d];
  const double surface = 2.0 * pi / (3.0 * volume) * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
  double e1, e2;
  std::vector<double> f1, f2;
  // Splittings whose real-space part ends below 1e-10 at the cutoff 2.3 (erfc(2.0 * 2.3) = 6e-11).
  ewald_of_cell<Space>(c, 2.0, e1, f1);
  ewald_of_cell<Space>(c, 2.6, e2, f2);
  EXPECT_NEAR(e1, e2, 1e-9 * std::fabs(e1));
  EXPECT_LE(max_relative(f1, f2), 1e-8);
  EXPECT_NEAR(e1 + surface, e_direct, 2e-4 * std::fabs(e_direct));
  // Forces: the direct sum's include the surface field -4 pi q_i M / (3 V).
  std::vector<double> f_corrected = f1;
  for (std::size_t i = 0; i < c.q.size(); ++i)
    for (int d = 0; d < 3; ++d) f_corrected[3 * i + d] -= 4.0 * pi / (3.0 * volume) * c.q[i] * m[d];
  EXPECT_LE(max_relative(f_corrected, f_direct), 2e-3);
  // Newton's third law holds for the whole sum.
  double total[3] = {0, 0, 0};
  for (std::size_t i = 0; i < c.q.size(); ++i)
    for (int d = 0; d < 3; ++d) total[d] += f1[3 * i + d];
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(total[d], 0.0, 1e-10);
}

// A molten charged LJ salt conserves energy under velocity Verlet with the Ewald sum.
TYPED_TEST(MdCoulomb, IonicMeltConservesEnergy) {
  using Space = TypeParam;
  InitialState init = charged_salt(3, 0.0, "lj/cut/coul/long");
  init.types.shift = true;
  create_velocities(init, 2.0, 5);
  MdParams params;
  params.dt = 0.002;
  params.skin = 0.2;
  params.every = 10;
  params.kspace.ewald = true;
  params.kspace.accuracy = 1e-7;
  MdSystem<Space, double, LjCutCoulLong> sys(init, params);
  sys.initialize();
  const double e0 = sys.thermo().etotal;
  double worst = 0;
  for (int s = 1; s <= 300; ++s) {
    sys.advance(s % 10 == 0);
    if (s % 10 == 0) worst = std::max(worst, std::fabs(sys.thermo().etotal - e0));
  }
  EXPECT_LT(worst, 2e-3 * std::fabs(e0));
  EXPECT_GT(std::fabs(sys.thermo().temp - 2.0), 0.01);
}

// LAMMPS: lj/cut/coul/long + kspace_style ewald 1e-5 on a rattled charged box (lj units,
// unit_tests/md/data/charged_216.data, in.ewald). The numbers LAMMPS printed are kept; where lmp
// is installed the test reruns it.
struct LammpsEwald {
  double pe, press, f1[3];  // thermo_style custom step pe press fx[1] fy[1] fz[1], norm yes
  double g_ewald;           // LAMMPS' "G vector (1/distance)"
  int kcount;               // its "KSpace vectors: actual"
};
const LammpsEwald lammps_ewald = {-1.79703614540133,
                                  4.76789724662806,
                                  {-84.0848238740682, 7.98313489319944, -6.94609172764131},
                                  1.1310664,
                                  1535};

core::Config lammps_case() {
  const std::string text =
      "problem: md\nsystem:\n  source: lammps_data\n  temperature: 0\n  lammps_data:\n"
      "    file: " +
      hayate::test::source_path("unit_tests/md/data/charged_216.data") +
      "\n  types:\n    - {name: Na, mass: 1.0, epsilon: 0.5, sigma: 1.0, charge: 1}\n"
      "    - {name: Cl, mass: 1.5, epsilon: 0.5, sigma: 1.0, charge: -1}\n"
      "pair: {style: lj/cut/coul/long, cutoff: 2.5, coul_cutoff: 3.0}\n"
      "neighbor: {skin: 0.2}\nkspace: {style: ewald, accuracy: 1e-5}\n";
  return core::Registry::instance().loader().load_string(text, "ewald_case.yaml");
}

TYPED_TEST(MdCoulomb, EwaldEqualsLammps) {
  using Space = TypeParam;
  const core::Config config = lammps_case();
  const InitialState init = make_initial_state(config);
  const MdParams params = read_params(config, core::space_name<Space>(), init.size());
  MdSystem<Space, double, LjCutCoulLong> sys(init, params);
  sys.initialize();
  ASSERT_NE(sys.ewald_setup(), nullptr);
  EXPECT_NEAR(sys.ewald_setup()->g_ewald, lammps_ewald.g_ewald, 1e-7);
  EXPECT_EQ(sys.ewald_setup()->kcount, lammps_ewald.kcount);
  const Thermo t = sys.thermo();
  // LAMMPS evaluates erfc by a polynomial good to about 1e-7; the k-space parts are the same sums.
  EXPECT_NEAR(t.pe, lammps_ewald.pe, 1e-6 * std::fabs(lammps_ewald.pe));
  EXPECT_NEAR(t.press, lammps_ewald.press, 1e-5 * std::fabs(lammps_ewald.press));
  auto ids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sys.ids());
  const auto f = download_forces(sys);
  const double fmag =
      std::sqrt(lammps_ewald.f1[0] * lammps_ewald.f1[0] + lammps_ewald.f1[1] * lammps_ewald.f1[1] +
                lammps_ewald.f1[2] * lammps_ewald.f1[2]);
  for (int k = 0; k < sys.size(); ++k)
    if (ids(k) == 1)
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(f[3 * k + d], lammps_ewald.f1[d], 1e-5 * fmag) << d;
}

TEST(MdCoulombLammps, KeptNumbersAreWhatLammpsPrints) {
  if (std::system("command -v lmp > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "LAMMPS (lmp) is not installed; the kept numbers are used as they are";
  const std::string cmd = "cd '" + hayate::test::source_path("unit_tests/md/data") +
                          "' && lmp -in in.ewald -log none -echo none 2>&1";
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
  double pe, press, f[3];
  row >> step >> pe >> press >> f[0] >> f[1] >> f[2];
  EXPECT_EQ(step, 0);
  EXPECT_NEAR(pe, lammps_ewald.pe, 1e-13 * std::fabs(pe));
  EXPECT_NEAR(press, lammps_ewald.press, 1e-13 * std::fabs(press));
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(f[d], lammps_ewald.f1[d], 1e-12 * std::fabs(f[d]));
  EXPECT_NE(out.find("G vector (1/distance) = 1.1310664"), std::string::npos) << out;
}

}  // namespace
}  // namespace hayate::md::test
