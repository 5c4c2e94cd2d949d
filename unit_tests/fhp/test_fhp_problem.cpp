// problem: fhp end to end: bitwise restart, kernels and backends agree through the driver, bad
// input is reported with its position (problem-level checks run when the problem is created,
// so these go through `hayate run`), obstacles rasterize as intended.
#include "cli_runner.hpp"
#include "exec/dispatch.hpp"
#include "fhp/fhp_obstacles.hpp"
#include "io/png.hpp"
#include "run/checkpoint.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

namespace hayate::fhp {
namespace {

const char* base_input = R"(problem: fhp
system:
  model: fhp3
  nx: 128
  ny: 32
  density: 2.0
  boundary_y: walls
forcing:
  probability: 0.01
obstacles:
  - {type: circle, x: 40, y: 16, radius: 5}
output:
  every: 5
  fields_every: 20
  average: 5
  sample_every: 1
  block: 8
run:
  steps: 40
)";

std::string out_dir(const std::string& name) {
  return (hayate::test::scratch_path("fhp") / name).string();
}

core::RunResult run(const std::string& name, const std::vector<std::string>& overrides,
                    const std::string& backend = "") {
  const auto config =
      core::Registry::instance().loader().load_string(base_input, "fhp_test.yaml", overrides);
  core::RunOptions options;
  options.output_dir = out_dir(name);
  options.quiet = true;
  options.backend = backend;
  return core::run_problem(config, options);
}

std::vector<char> checkpoint_sites(const std::string& name) {
  const core::CheckpointReader cp(out_dir(name) + "/checkpoint.bin");
  return cp.bytes("sites");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FhpProblem, RestartIsBitwise) {
  run("straight", {"checkpoint.at_end=true"});
  run("first_half", {"checkpoint.at_end=true", "run.steps=20"});
  run("second_half", {"checkpoint.at_end=true",
                      "checkpoint.restart=" + out_dir("first_half") + "/checkpoint.bin"});
  EXPECT_EQ(checkpoint_sites("straight"), checkpoint_sites("second_half"));
  EXPECT_NE(checkpoint_sites("straight"), checkpoint_sites("first_half"));
  // The restarted run continues the time series exactly.
  const std::string full = read_text(out_dir("straight") + "/fields.csv");
  const std::string tail = read_text(out_dir("second_half") + "/fields.csv");
  const auto header_end = tail.find('\n') + 1;
  EXPECT_NE(full.find(tail.substr(header_end)), std::string::npos);
  EXPECT_EQ(read_text(out_dir("straight") + "/fields_final.vtk"),
            read_text(out_dir("second_half") + "/fields_final.vtk"));
  EXPECT_EQ(read_text(out_dir("straight") + "/fields_final_profile.csv"),
            read_text(out_dir("second_half") + "/fields_final_profile.csv"));
}

TEST(FhpProblem, KernelsAndBackendsAgreeBitwise) {
  run("bits", {"checkpoint.at_end=true", "tuning.kernel=bits"});
  for (const std::string kernel : {"bytes_wide", "bytes_sliced"}) {
    run(kernel, {"checkpoint.at_end=true", "tuning.kernel=" + kernel});
    EXPECT_EQ(checkpoint_sites("bits"), checkpoint_sites(kernel)) << kernel;
  }
  for (const auto& backend : core::enabled_backends()) {
    run("backend_" + backend, {"checkpoint.at_end=true"}, backend);
    EXPECT_EQ(checkpoint_sites("backend_" + backend), checkpoint_sites("bits")) << backend;
  }
}

TEST(FhpProblem, WritesFieldsAndPictures) {
  run("outputs", {});
  const std::string csv = read_text(out_dir("outputs") + "/fields.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "step,mass,momentum_x,momentum_y,mean_ux,mean_uy");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 9);  // steps 0, 5, ..., 40
  for (const char* f :
       {"fields_00000020.vtk", "fields_00000020.png", "fields_final.vtk", "fields_final.png"}) {
    std::ifstream in(out_dir("outputs") + "/" + f);
    EXPECT_TRUE(in.good()) << f;
  }
  const std::string vtk = read_text(out_dir("outputs") + "/fields_final.vtk");
  EXPECT_NE(vtk.find("DIMENSIONS 16 3 1"), std::string::npos);
  EXPECT_NE(vtk.find("VECTORS velocity double"), std::string::npos);
  // The profile: a header and one row per lattice row; wall rows hold no fluid.
  const std::string profile = read_text(out_dir("outputs") + "/fields_final_profile.csv");
  EXPECT_EQ(std::count(profile.begin(), profile.end(), '\n'), 1 + 32);
  EXPECT_NE(profile.find("\n0,0,0,0,0\n"), std::string::npos);
}

TEST(FhpProblem, BadInputNamesTheLine) {
  const std::string dir = out_dir("");
  std::filesystem::create_directories(dir);
  struct Case {
    std::string yaml, expect;
  };
  const std::vector<Case> cases = {
      {"problem: fhp\nsystem:\n  ny: 31\n",
       "bad.yaml:3:7: 'system.ny': the number of rows must be even"},
      {"problem: fhp\nsystem:\n  nx: 96\ntuning:\n  kernel: bits\n",
       "bad.yaml:3:7: 'system.nx': the bits kernel"},
      {"problem: fhp\nrun:\n  kernel: bits\n",
       "bad.yaml:3:3: 'run.kernel' moved to 'tuning.kernel'"},
      {"problem: fhp\ntuning:\n  kernel: bytes\n", "one of: auto, bytes_wide, bytes_sliced, bits"},
      {"problem: fhp\nsystem:\n  model: fhp1\n  density: 6.5\n", "bad.yaml:4:12: 'system.density'"},
      {"problem: fhp\nobstacles:\n  - {type: circle, x: 3, y: 4}\n", "needs the key 'radius'"},
      {"problem: fhp\noutput:\n  fields_every: 10\n  average: 20\n",
       "bad.yaml:4:12: 'output.average': cannot average"},
      {"problem: fhp\nobstacles:\n  - {type: cirle, x: 3, y: 4}\n", "did you mean 'circle'"},
      {"problem: fhp\nobstacles:\n  - {type: mask, x: 0, y: 0, file: missing.pgm}\n",
       "cannot open"},
  };
  for (const auto& c : cases) {
    { std::ofstream(dir + "/bad.yaml") << c.yaml; }
    const auto r = test::run_cli("run " + dir + "/bad.yaml --quiet --output " + dir + "/bad_out");
    EXPECT_EQ(r.exit_code, 2) << c.yaml << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.yaml << r.output;
  }
}

TEST(FhpObstacles, ShapesRasterize) {
  const LatticeShape shape{128, 64};
  Obstacle circle;
  circle.type = Obstacle::Type::circle;
  circle.x = 64;
  circle.y = 32;
  circle.radius = 10;
  auto s = solid_sites(shape, false, false, {circle});
  // Each site covers sqrt(3)/2 of area: expect pi r^2 / (sqrt(3)/2) sites within a few percent.
  const double n = std::accumulate(s.begin(), s.end(), 0.0);
  EXPECT_NEAR(n, M_PI * 100 / sqrt3_2, 0.05 * M_PI * 100 / sqrt3_2);

  // A plate leaves no gap: no particle path crosses it (every row has a solid site near x).
  Obstacle plate;
  plate.type = Obstacle::Type::plate;
  plate.x = 20;
  plate.y = 32;
  plate.length = 20;
  s = solid_sites(shape, false, true, {plate});
  int rows = 0;
  for (int y = 1; y < 63; ++y) {
    int solid = 0;
    for (int x = 15; x < 25; ++x) solid += s[std::size_t(y) * 128 + x];
    if (solid > 0) ++rows;
  }
  EXPECT_NEAR(rows, 20 / sqrt3_2, 2);
  for (int x = 0; x < 128; ++x) EXPECT_EQ(s[x], 1);  // wall rows

  // A PGM mask: dark pixels are solid; image row 0 is the top.
  { std::ofstream("fhp_mask_test.pgm") << "P2\n# test\n3 2\n255\n0 255 255\n255 255 0\n"; }
  Obstacle mask;
  mask.type = Obstacle::Type::mask;
  mask.x = 10;
  mask.y = 5;
  mask.file = "fhp_mask_test.pgm";
  s = solid_sites(shape, false, false, {mask});
  EXPECT_EQ(std::accumulate(s.begin(), s.end(), 0), 2);
  EXPECT_EQ(s[std::size_t(6) * 128 + 10], 1);  // top-left pixel -> row y + 1
  EXPECT_EQ(s[std::size_t(5) * 128 + 12], 1);  // bottom-right pixel -> row y

  // The same mask as a PNG.
  core::Image img(3, 2);
  img.set(0, 0, {0, 0, 0});
  img.set(2, 1, {10, 10, 10});
  core::write_png("fhp_mask_test.png", img);
  mask.file = "fhp_mask_test.png";
  EXPECT_EQ(solid_sites(shape, false, false, {mask}), s);
}

}  // namespace
}  // namespace hayate::fhp
