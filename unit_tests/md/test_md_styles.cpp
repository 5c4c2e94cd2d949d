// Pair styles against LAMMPS: a rattled two-type box (unit_tests/md/data/two_type_256.data)
// gives LAMMPS' energy and pressure for pair_style morse and lj/cut with arithmetic mixing. The
// numbers LAMMPS printed are kept here; where `lmp` is installed the test runs it again and
// checks that they still are LAMMPS' numbers.
#include "cli_runner.hpp"
#include "md/md_setup.hpp"
#include "md/potentials/styles.hpp"
#include "md_test_util.hpp"
#include "run/registry.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace hayate::md::test {
namespace {

struct LammpsCase {
  const char* lammps_input;  // in unit_tests/md/data
  const char* types;         // system.types of the same system as a hayate input
  const char* pair;          // its pair section
  double pe, press;          // LAMMPS 'thermo_style custom step pe press', norm yes, step 0
};

const char* const data_file = "unit_tests/md/data/two_type_256.data";

const LammpsCase cases[] = {
    {"in.morse", "    - {name: A, mass: 1.0}\n    - {name: B, mass: 2.0}\n",
     "pair:\n  style: morse\n  cutoff: 2.5\n  coeffs:\n"
     "    - {types: [A, A], d0: 1.0, alpha: 3.0, r0: 1.1}\n"
     "    - {types: [B, B], d0: 0.5, alpha: 4.0, r0: 1.2, cutoff: 2.3}\n"
     "    - {types: [A, B], d0: 0.7, alpha: 3.5, r0: 1.15, cutoff: 2.4}\n",
     -5.52491306926531, -3.01127210279329},
    {"in.lj_mix",
     "    - {name: A, mass: 1.0}\n    - {name: B, mass: 2.0, epsilon: 0.5, sigma: 1.1, cutoff: "
     "2.2}\n",
     "pair:\n  style: lj/cut\n  mixing: arithmetic\n", -4.50851675175197, 1.49735048019896},
};

core::Config load(const LammpsCase& c) {
  const std::string text = std::string(
                               "problem: md\nsystem:\n  source: lammps_data\n"
                               "  temperature: 0\n  lammps_data:\n    file: ") +
                           hayate::test::source_path(data_file) + "\n  types:\n" + c.types + c.pair;
  return core::Registry::instance().loader().load_string(text, "lammps_case.yaml");
}

template <class Space>
class MdStyles : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(MdStyles);

TYPED_TEST(MdStyles, EnergyAndPressureEqualLammps) {
  using Space = TypeParam;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lammps_input);
    const core::Config config = load(c);
    const InitialState init = make_initial_state(config);
    const MdParams params = read_params(config, core::space_name<Space>(), init.size());
    dispatch_style(config.string("pair.style"), [&](auto style) {
      MdSystem<Space, double, decltype(style)> sys(init, params);
      sys.initialize();
      const Thermo t = sys.thermo();
      EXPECT_NEAR(t.pe, c.pe, 1e-12 * std::fabs(c.pe));
      EXPECT_NEAR(t.press, c.press, 1e-11 * std::fabs(c.press));
      return 0;
    });
  }
}

// The kept numbers are LAMMPS' own: rerun LAMMPS where it is installed.
TEST(MdStylesLammps, KeptNumbersAreWhatLammpsPrints) {
  if (std::system("command -v lmp > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "LAMMPS (lmp) is not installed; the kept numbers are used as they are";
  const std::string dir = hayate::test::source_path("unit_tests/md/data");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lammps_input);
    const std::string cmd =
        "cd '" + dir + "' && lmp -in " + c.lammps_input + " -log none -echo none 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    const auto header = out.find("Step");
    ASSERT_NE(header, std::string::npos) << out;
    std::istringstream row(out.substr(out.find('\n', header) + 1));
    long step = -1;
    double pe = 0, press = 0;
    row >> step >> pe >> press;
    EXPECT_EQ(step, 0);
    EXPECT_NEAR(pe, c.pe, 1e-13 * std::fabs(c.pe));
    EXPECT_NEAR(press, c.press, 1e-13 * std::fabs(c.press));
  }
}

TYPED_TEST(MdStyles, MorseNveConservesEnergy) {
  using Space = TypeParam;
  const TypeSet one = morse_types(false);
  InitialState init = rattled_lattice(4, 0.8442, 0.0, false, 1.2, &one);
  init.types.shift = true;
  MdParams params;
  params.every = 10;
  MdSystem<Space, double, Morse> sys(init, params);
  sys.initialize();
  const double e0 = sys.thermo().etotal;
  double worst = 0;
  for (int s = 1; s <= 500; ++s) {
    sys.advance(s % 10 == 0);
    if (s % 10 == 0) worst = std::max(worst, std::fabs(sys.thermo().etotal - e0));
  }
  // The melt moves (the temperature changes) while velocity Verlet keeps the energy.
  EXPECT_LT(worst, 2e-3);
  EXPECT_GT(std::fabs(sys.thermo().temp - 1.2), 0.05);
}

TEST(MdStylesInput, ShippedMorseInputRuns) {
  HAYATE_REQUIRE_MD_STYLE("morse");
  const auto r = hayate::test::run_cli(
      "run " + hayate::test::source_path("inputs/md/morse_melt.yaml") +
      " --backend serial --quiet --output " + hayate::test::scratch_path("morse_melt").string() +
      " --set run.steps=20");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace hayate::md::test
