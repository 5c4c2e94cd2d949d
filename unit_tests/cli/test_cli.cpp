// The hayate binary as a user meets it: exit codes 0/2/3, file:line:col errors, outputs.
#include "cli_runner.hpp"
#include "run/checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using hayate::test::run_cli;
using hayate::test::source_path;
using hayate::test::write_file;

namespace {
fs::path scratch(const std::string& name) {
  return hayate::test::fresh_scratch("cli", name);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(Cli, VersionHelpAndUsage) {
  auto r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("hayate 0."), std::string::npos) << r.output;
  EXPECT_EQ(run_cli("--help").exit_code, 0);
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);
  EXPECT_EQ(run_cli("run").exit_code, 2);
  EXPECT_EQ(run_cli("run a.yaml --threads many").exit_code, 2);
}

TEST(Cli, InfoListsBackendsAndProblems) {
  auto r = run_cli("info");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("backends:"), std::string::npos);
  const auto line = r.output.find("problems:");
  ASSERT_NE(line, std::string::npos) << r.output;
  const std::string problems = r.output.substr(line, r.output.find('\n', line) - line);
  for (const char* name : {"gravity", "md", "fhp", "ode", "stream"})
    EXPECT_NE(problems.find(std::string(" ") + name), std::string::npos) << problems;
}

TEST(Cli, EveryShippedInputChecks) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_path("inputs"))) {
    if (entry.path().extension() != ".yaml") continue;
    // Model files of the ODE engine are not run inputs: they carry no `problem:` key.
    if (read_all(entry.path()).find("problem:") == std::string::npos) continue;
    ++count;
    auto r = run_cli("check \"" + entry.path().string() + "\"");
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.output;
  }
  EXPECT_GT(count, 0);
}

TEST(Cli, BrokenInputsExitTwoWithPosition) {
  const fs::path dir = scratch("broken");
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {"problem: stream\nsystem:\n  n: 10\n  nn: 3\n", "bad.yaml:4:3: unknown key 'system.nn'"},
      {"problem: stream\nrun:\n  steps: ten\n", "bad.yaml:3:10: 'run.steps': expected an integer"},
      {"problem: stream\nrun:\n  steps: 0\n",
       "bad.yaml:3:10: 'run.steps': expected an integer >= 1"},
      {"problem: stream\nsystem: [1\n", "bad.yaml:3:1: malformed YAML"},
      {"problem: strem\n", "bad.yaml:1:10: 'problem': expected one of:"},
      {"system:\n  n: 3\n", "bad.yaml:1:1: missing required key 'problem'"},
      {"\t\tproblem: stream\n", "bad.yaml:1:"},
      {"", "bad.yaml:1:1: missing required key 'problem'"},
  };
  for (const auto& c : cases) {
    const std::string file = write_file(dir / "bad.yaml", c.text);
    auto r = run_cli("check \"" + file + "\"");
    EXPECT_EQ(r.exit_code, 2) << c.text << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.text << "\n" << r.output;
    // The same input must fail the same way through `run`, before any output is written.
    auto run = run_cli("run \"" + file + "\" --output \"" + (dir / "out").string() + "\"");
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  auto r = run_cli("check \"" + (dir / "missing.yaml").string() + "\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("missing.yaml: cannot open the input file"), std::string::npos);
}

TEST(Cli, CheckCompilesTheModelFileAnInputNames) {
  // `check` goes past the run input's schema: a broken model file is reported where it is broken.
  const fs::path dir = scratch("model");
  std::string model = read_all(source_path("inputs/ode/lr91.model.yaml"));
  const auto at = model.find("RT_F: \"R*T/F\"");
  ASSERT_NE(at, std::string::npos);
  model.replace(at, std::string("RT_F: \"R*T/F\"").size(), "RT_F: \"R*T/Fx\"");
  write_file(dir / "broken.model.yaml", model);
  std::string input = read_all(source_path("inputs/ode/lr91.yaml"));
  const std::string input_path = write_file(dir / "run.yaml", input);
  auto r = run_cli("check \"" + input_path + "\" --set model.file=broken.model.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("broken.model.yaml:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Fx"), std::string::npos) << r.output;
}

TEST(Cli, CheckRunsCrossKeyChecks) {
  // An odd number of hexagonal rows passes the schema but not the lattice's own check.
  auto r =
      run_cli("check \"" + source_path("inputs/fhp/poiseuille.yaml") + "\" --set system.ny=33");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set system.ny=33: 'system.ny': the number of rows must be even"),
            std::string::npos)
      << r.output;
}

TEST(Cli, BadOverridesAndBackendExitTwo) {
  const std::string input = source_path("inputs/stream/bandwidth.yaml");
  auto r = run_cli("check \"" + input + "\" --set system.n=-4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--set system.n=-4: 'system.n': expected an integer in [1, "),
            std::string::npos)
      << r.output;
  r = run_cli("check \"" + input + "\" --set nokey");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--set nokey: expected key.path=value"), std::string::npos);
  r = run_cli("run \"" + input + "\" --backend hip --output \"" + scratch("hip").string() + "\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--backend hip: backend not enabled in this build"), std::string::npos)
      << r.output;
}

TEST(Cli, RunWritesOutputsAtomically) {
  const fs::path out = scratch("run");
  auto r =
      run_cli("run \"" + source_path("inputs/stream/bandwidth.yaml") +
              "\" --set system.n=5000 --set run.steps=3 --quiet --output \"" + out.string() + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"run.yaml", "stream.csv", "timers.csv"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_NE(e.path().extension(), ".part") << e.path();
  const std::string run_yaml = read_all(out / "run.yaml");
  EXPECT_NE(run_yaml.find("n: 5000"), std::string::npos);
  EXPECT_NE(run_yaml.find("backend_used:"), std::string::npos);
  EXPECT_NE(run_yaml.find("scalar:"), std::string::npos);  // defaults are resolved
  EXPECT_EQ(r.output, "");                                 // --quiet
}

TEST(Cli, RuntimeFailureExitsThreeAndKeepsOutput) {
  // A checkpoint whose arrays were altered (with a valid checksum) makes the final
  // verification fail: a runtime failure, exit 3, with the series written so far kept.
  const fs::path dir = scratch("failure");
  hayate::core::CheckpointWriter w("stream");
  const std::int64_t n = 64;
  w.put<std::int64_t>("n", n);
  w.put<std::int64_t>("step", 1);
  std::vector<double> values(n, 7.0);
  w.put_vector("a", values);
  w.put_vector("b", values);
  w.put_vector("c", values);
  w.write((dir / "bad.bin").string());
  auto r = run_cli("run \"" + source_path("inputs/stream/bandwidth.yaml") +
                   "\" --set system.n=64 --set run.steps=3 --quiet --set checkpoint.restart=\"" +
                   (dir / "bad.bin").string() + "\" --output \"" + (dir / "out").string() + "\"");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("run failed: stream: arrays differ"), std::string::npos) << r.output;
  const std::string csv = read_all(dir / "out" / "stream.csv");
  EXPECT_NE(csv.find("\n3,"), std::string::npos) << csv;
  EXPECT_TRUE(fs::exists(dir / "out" / "timers.csv"));

  r = run_cli("run \"" + source_path("inputs/stream/bandwidth.yaml") +
              "\" --quiet --set checkpoint.restart=\"" +
              write_file(dir / "text.bin", "plain text") + "\" --output \"" +
              (dir / "out2").string() + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a hayate checkpoint"), std::string::npos) << r.output;
}

TEST(Cli, InputAndTuningReferencesAreUpToDate) {
  auto r = run_cli("schema");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(read_all(source_path("docs/user/input-reference.md")), r.output)
      << "docs/user/input-reference.md is stale: regenerate with 'make docs'";
  r = run_cli("schema --tuning");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(read_all(source_path("docs/dev/tuning.md")), r.output)
      << "docs/dev/tuning.md is stale: regenerate with 'make docs'";
}
