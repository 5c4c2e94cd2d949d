// Each rank's share of the initial state, made for its sub-box alone from a lattice, a LAMMPS
// data file or an extended XYZ file, holds exactly the whole state's atoms of that
// sub-box with the same bits, in the same order, and the whole system's atom count and charge sums.
#include "cli_runner.hpp"
#include "md/md_setup.hpp"
#include "run/registry.hpp"
#include "util/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hayate::md::test {
namespace {

core::Config load(const std::string& input, const std::vector<std::string>& sets) {
  return core::Registry::instance().loader().load_file(hayate::test::source_path(input), sets);
}

// The velocities as LAMMPS' `velocity all create T seed` arithmetic gives them, written out
// here on the whole state: what one rank has always had.
std::vector<double> reference_velocities(const InitialState& s, double temperature,
                                         std::uint64_t seed, const Units& units) {
  const std::size_t n = s.size();
  std::vector<double> v(3 * n);
  double p[3] = {0, 0, 0}, mtot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double m = s.types.mass[std::size_t(s.type[i])];
    for (int d = 0; d < 3; ++d) {
      v[3 * i + d] = util::normal01(seed, std::uint64_t(s.id[i]), d) / std::sqrt(m);
      p[d] += m * v[3 * i + d];
    }
    mtot += m;
  }
  double twice_ke = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      v[3 * i + d] -= p[d] / mtot;
      twice_ke += s.types.mass[std::size_t(s.type[i])] * v[3 * i + d] * v[3 * i + d];
    }
  const double dof = 3.0 * double(n) - 3.0;
  const double scale = std::sqrt(temperature * dof * units.boltz / (twice_ke * units.mvv2e));
  for (double& x : v) x *= scale;
  return v;
}

void expect_shares_join_into_the_whole(const core::Config& config, int ranks,
                                       bool created_velocities = true) {
  const InitialState whole = make_initial_state(config);
  if (created_velocities)
    EXPECT_EQ(whole.v, reference_velocities(whole, config.real("system.temperature"),
                                            std::uint64_t(config.integer("system.seed")),
                                            read_params(config, "serial", whole.size()).units));
  const InitialState::Whole sums = whole.whole_system();
  const double reach = whole.types.max_cutoff() + config.real("neighbor.skin");
  std::vector<std::size_t> next(std::size_t(ranks), 0);
  std::vector<InitialState> shares;
  for (int r = 0; r < ranks; ++r) {
    const BrickGrid grid = BrickGrid::choose(ranks, r, whole.box, reach);
    ASSERT_GT(grid.p[0], 0);
    shares.push_back(make_initial_state(config, grid));
    const InitialState& s = shares.back();
    ASSERT_TRUE(s.whole.has_value());
    EXPECT_EQ(s.whole->natoms, whole.size());
    EXPECT_EQ(s.whole->qsum, sums.qsum);
    EXPECT_EQ(s.whole->q2sum, sums.q2sum);
    EXPECT_EQ(s.whole->by_type_float, sums.by_type_float);
    EXPECT_EQ(s.whole->by_type_double, sums.by_type_double);
    EXPECT_EQ(s.total(), whole.size());
    EXPECT_LT(s.size(), whole.size());
    for (int d = 0; d < 3; ++d) EXPECT_EQ(s.box[d], whole.box[d]);
    EXPECT_EQ(s.x.size(), 3 * s.size());
    EXPECT_EQ(s.v.size(), 3 * s.size());
    EXPECT_EQ(s.q.empty(), whole.q.empty());
  }
  // Atom by atom in the whole state's order: its owner's share holds it next.
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const BrickGrid any = BrickGrid::choose(ranks, 0, whole.box, reach);
    const int owner = owner_rank(any, &whole.x[3 * i]);
    const InitialState& s = shares[std::size_t(owner)];
    const std::size_t k = next[std::size_t(owner)]++;
    ASSERT_LT(k, s.size()) << "atom " << whole.id[i];
    ASSERT_EQ(s.id[k], whole.id[i]);
    EXPECT_EQ(s.type[k], whole.type[i]);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(s.x[3 * k + d], whole.x[3 * i + d]) << "atom " << whole.id[i];
      EXPECT_EQ(s.v[3 * k + d], whole.v[3 * i + d]) << "atom " << whole.id[i];
    }
    if (!whole.q.empty()) EXPECT_EQ(s.q[k], whole.q[i]);
  }
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(next[std::size_t(r)], shares[std::size_t(r)].size());
}

TEST(MdRankState, LatticeSharesJoinIntoTheWholeLattice) {
  // Two types of two masses and charges, a temperature (velocities from sums over the whole
  // system) and 2, 3, 4, 8 ranks.
  const core::Config two_types = core::Registry::instance().loader().load_string(
      "problem: md\nsystem:\n  lattice: {density: 0.8442, cells: [8, 7, 6], types: [A, B]}\n"
      "  temperature: 1.44\n  seed: 87287\n  types:\n    - {name: A, mass: 1.0, charge: 0.3}\n"
      "    - {name: B, mass: 2.5, charge: -0.7}\n"
      "pair: {style: lj/cut/coul/cut, cutoff: 2.5, coul_cutoff: 2.5}\n",
      "two_types.yaml");
  for (const int ranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(ranks);
    expect_shares_join_into_the_whole(two_types, ranks);
  }
  // Rock salt: charges by type, the Ewald sums of the whole system.
  expect_shares_join_into_the_whole(load("inputs/md/nacl_melt.yaml", {}), 4);
}

TEST(MdRankState, FileSharesJoinIntoTheWholeFile) {
  // Per-atom charges and velocities created from the file's atoms.
  const std::string dir = hayate::test::scratch_path("rank_state");
  std::filesystem::create_directories(dir);
  const std::string data = dir + "/charged.data";
  {
    std::ofstream out(data);
    out << "charged atoms\n\n64 atoms\n2 atom types\n\n0 8.5 xlo xhi\n0 8.5 ylo yhi\n0 8.5 zlo "
           "zhi\n\nMasses\n\n1 1.0\n2 2.0\n\nAtoms # charge\n\n";
    for (int i = 0; i < 64; ++i)
      out << 64 - i << " " << 1 + i % 2 << " " << (i % 2 ? -0.25 * (i % 5) : 0.25 * (i % 3)) << " "
          << 0.5 + 2.1 * (i % 4) << " " << 0.3 + 2.05 * ((i / 4) % 4) << " " << 1.1 + 2.0 * (i / 16)
          << "\n";
  }
  const std::string yaml =
      "problem: md\nsystem:\n  source: lammps_data\n  temperature: 1.2\n"
      "  lammps_data: {file: " +
      data +
      "}\n  types:\n    - {name: A, mass: 1.0}\n    - {name: B, mass: "
      "2.0}\npair:\n  style: lj/cut/coul/cut\n  cutoff: 2.0\n  coul_cutoff: 2.0\n"
      "neighbor: {skin: 0.1}\n";
  const core::Config config = core::Registry::instance().loader().load_string(yaml, "charged.yaml");
  expect_shares_join_into_the_whole(config, 4);
  // The file's own velocities, listed in another order than the atoms: each rank finds its
  // atoms' velocities by id among every atom's.
  {
    std::ofstream out(data, std::ios::app);
    out << "\nVelocities\n\n";
    for (int i = 0; i < 64; ++i)
      out << 1 + (i * 37) % 64 << " " << 0.01 * i << " " << -0.02 * (i % 7) << " " << 0.5 - 0.01 * i
          << "\n";
  }
  const core::Config moving = core::Registry::instance().loader().load_string(yaml, "moving.yaml");
  expect_shares_join_into_the_whole(moving, 3, false);
  const InitialState whole = make_initial_state(moving);
  ASSERT_EQ(whole.size(), 64u);
  EXPECT_EQ(whole.id[0], 64);  // the file's first atom; its velocity line is the 20th
  EXPECT_DOUBLE_EQ(whole.v[0], 0.19);
}

TEST(MdRankState, XyzSharesJoinIntoTheWholeFrame) {
  // The last of two frames (the first has other positions), species of two types, per-atom
  // charges in a column between others; velocities created, then the file's own.
  const std::string dir = hayate::test::scratch_path("rank_state");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/charged.xyz";
  const auto write = [&](bool velocities) {
    std::ofstream out(path);
    for (int frame = 0; frame < 2; ++frame) {
      out << "64\nLattice=\"8.5 0 0 0 8.5 0 0 0 8.5\" Properties=species:S:1:pos:R:3:charge:R:1"
          << (velocities ? ":velo:R:3" : "") << " step=" << frame << "\n";
      for (int i = 0; i < 64; ++i) {
        out << (i % 3 ? "A" : "B") << " " << 0.5 + 2.1 * (i % 4) + 0.1 * frame << " "
            << 0.3 + 2.05 * ((i / 4) % 4) << " " << 1.1 + 2.0 * (i / 16) << " "
            << (i % 2 ? -0.25 * (i % 5) : 0.25 * (i % 3));
        if (velocities) out << " " << 0.01 * i << " " << -0.02 * (i % 7) << " " << 0.5 - 0.01 * i;
        out << "\n";
      }
    }
  };
  const std::string yaml =
      "problem: md\nsystem:\n  source: xyz\n  temperature: 1.2\n"
      "  xyz: {frame: -1, file: " +
      path +
      "}\n  types:\n    - {name: A, mass: 1.0}\n    - {name: B, mass: "
      "2.0}\npair:\n  style: lj/cut/coul/cut\n  cutoff: 2.0\n  coul_cutoff: 2.0\n"
      "neighbor: {skin: 0.1}\n";
  write(false);
  const core::Config created = core::Registry::instance().loader().load_string(yaml, "xyz.yaml");
  const InitialState whole = make_initial_state(created);
  ASSERT_EQ(whole.size(), 64u);
  EXPECT_DOUBLE_EQ(whole.x[0], 0.6);  // the last frame's
  EXPECT_EQ(whole.type[0], 1);
  expect_shares_join_into_the_whole(created, 4);
  write(true);
  const core::Config moving = core::Registry::instance().loader().load_string(yaml, "moving.yaml");
  expect_shares_join_into_the_whole(moving, 3, false);
  EXPECT_DOUBLE_EQ(make_initial_state(moving).v[3 * 5], 0.05);
}

}  // namespace
}  // namespace hayate::md::test
