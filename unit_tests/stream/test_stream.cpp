// The stream probe: kernels against the host recurrence, on the instance they were given, and
// the driver end to end (restart bitwise, output files, failure handling) on every backend.
#include "cli_runner.hpp"
#include "compat/kokkos_compat.hpp"
#include "io/csv_writer.hpp"
#include "launch_log.hpp"
#include "run/checkpoint.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"
#include "stream/stream_kernels.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace hayate;

template <class Space>
class Stream : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(Stream);

TYPED_TEST(Stream, KernelsMatchHostRecurrenceForEveryUnroll) {
  using Space = TypeParam;
  const std::int64_t n = 1001;  // not a multiple of any unroll factor: tails are exercised
  for (int unroll : {1, 2, 4, 8}) {
    stream::StreamArrays<Space, double> arrays(Space(), n);
    arrays.fill();
    const double s = 0.375;
    for (int r = 0; r < 3; ++r)
      for (auto k : stream::all_kernels) arrays.run(k, s, unroll);
    double ea, eb, ec;
    stream::expected_values<double>(3, s, ea, eb, ec);
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), arrays.a);
    auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), arrays.b);
    auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), arrays.c);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_DOUBLE_EQ(a(i), ea) << "unroll " << unroll << " i " << i;
      ASSERT_DOUBLE_EQ(b(i), eb) << "unroll " << unroll << " i " << i;
      ASSERT_DOUBLE_EQ(c(i), ec) << "unroll " << unroll << " i " << i;
    }
    EXPECT_EQ(arrays.bytes(stream::Kernel::Triad), 3 * n * 8);
    EXPECT_EQ(arrays.bytes(stream::Kernel::Copy), 2 * n * 8);
    EXPECT_LT(arrays.max_relative_error(ea, eb, ec), 1e-14) << "unroll " << unroll;
    EXPECT_GT(arrays.max_relative_error(ea, eb, 2 * ec), 0.4) << "unroll " << unroll;
  }
  stream::StreamArrays<Space, double> arrays(Space(), 8);
  EXPECT_THROW(arrays.run(stream::Kernel::Copy, 1.0, 3), std::invalid_argument);
  EXPECT_EQ(stream::parse_unroll("auto"), stream::default_unroll);
  EXPECT_EQ(stream::parse_unroll("8"), 8);
}

// A round of the four kernels, the fill and the check on an instance apart from the default
// one: every hayate::stream kernel must run there.
TYPED_TEST(Stream, RunsOnTheGivenInstance) {
  using Space = TypeParam;
  compat::IndependentInstance<Space> inst;
  test::KernelLaunchLog log;
  stream::StreamArrays<Space, float> arrays(inst.space(), 1001);
  arrays.fill();
  for (auto k : stream::all_kernels) arrays.run(k, 0.5f);
  float ea, eb, ec;
  stream::expected_values<float>(1, 0.5f, ea, eb, ec);
  EXPECT_EQ(arrays.max_relative_error(ea, eb, ec), 0.0);
  EXPECT_FALSE(log.hayate_kernels().empty());
  for (const std::string& label : log.elsewhere(compat::tools_device_id(inst.space())))
    ADD_FAILURE() << label << " ran on another instance";
}

TEST(StreamInput, UnrollMovedToTuning) {
  const fs::path dir = hayate::test::scratch_path("stream_input");
  fs::create_directories(dir);
  { std::ofstream(dir / "bad.yaml") << "problem: stream\nrun:\n  unroll: 2\n"; }
  const auto r = hayate::test::run_cli("check \"" + (dir / "bad.yaml").string() + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:3:3: 'run.unroll' moved to 'tuning.unroll'"), std::string::npos)
      << r.output;
  { std::ofstream(dir / "good.yaml") << "problem: stream\ntuning:\n  unroll: 2\n"; }
  EXPECT_EQ(hayate::test::run_cli("check \"" + (dir / "good.yaml").string() + "\"").exit_code, 0);
}

namespace {
core::Config stream_config(const std::string& backend, const std::vector<std::string>& extra) {
  std::vector<std::string> set{"backend=" + backend};
  set.insert(set.end(), extra.begin(), extra.end());
  return core::Registry::instance().loader().load_string(
      "problem: stream\nsystem:\n  n: 4099\n  precision: float\nrun:\n  steps: 6\n",
      "stream_test.yaml", set);
}

std::vector<char> entry(const std::string& checkpoint, const std::string& name) {
  return core::CheckpointReader(checkpoint).bytes(name);
}
}  // namespace

TYPED_TEST(Stream, RestartIsBitwiseIdentical) {
  const std::string backend = core::space_name<TypeParam>();
  const fs::path root = hayate::test::scratch_path("stream_restart_" + backend);
  fs::remove_all(root);
  const std::string full = (root / "full").string(), half = (root / "half").string(),
                    resumed = (root / "resumed").string();
  const core::RunOptions quiet{"", "", true};

  core::run_problem(stream_config(backend, {"output.directory=" + full, "checkpoint.at_end=true"}),
                    quiet);
  core::run_problem(
      stream_config(backend, {"output.directory=" + half, "run.steps=3", "checkpoint.at_end=true"}),
      quiet);
  core::run_problem(stream_config(backend, {"output.directory=" + resumed, "checkpoint.at_end=true",
                                            "checkpoint.restart=" + half + "/checkpoint.bin"}),
                    quiet);
  for (const char* name : {"step", "a", "b", "c"})
    EXPECT_EQ(entry(full + "/checkpoint.bin", name), entry(resumed + "/checkpoint.bin", name))
        << name;
  for (const char* file : {"run.yaml", "stream.csv", "timers.csv"})
    EXPECT_TRUE(fs::exists(fs::path(full) / file)) << file;
  // The resumed run's series starts where the checkpoint left off.
  std::ifstream csv(resumed + "/stream.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(first.substr(0, 2), "4,");
}

TYPED_TEST(Stream, RestartWithOtherSizeIsAnInputError) {
  const std::string backend = core::space_name<TypeParam>();
  const fs::path root = hayate::test::scratch_path("stream_mismatch_" + backend);
  fs::remove_all(root);
  const core::RunOptions quiet{"", "", true};
  core::run_problem(stream_config(backend, {"output.directory=" + (root / "a").string(),
                                            "run.steps=2", "checkpoint.every=1"}),
                    quiet);
  EXPECT_THROW(
      core::run_problem(
          stream_config(backend, {"output.directory=" + (root / "b").string(), "system.n=100",
                                  "checkpoint.restart=" + (root / "a/checkpoint.bin").string()}),
          quiet),
      core::InputError);
}
