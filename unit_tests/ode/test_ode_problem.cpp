// problem: ode end to end: the bundled inputs validate and run, restarts are bitwise, trace.csv
// and states.bin are complete, and bad models or outputs fail with exit code 2 and a location.
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "io/atomic_file.hpp"
#include "run/checkpoint.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace hayate::ode {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count_lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(OdeProblem, BundledInputsValidate) {
  for (const char* name : {"lr91", "lr_line", "lr_ring", "wb96", "wb_net", "rybak_cpg"}) {
    const auto r = test::run_cli(std::string("check ") +
                                 test::source_path(std::string("inputs/ode/") + name + ".yaml"));
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
  }
}

TEST(OdeProblem, RunsAndWritesTraceAndDumps) {
  const std::string out = "ode_problem_run";
  const auto r = test::run_cli(
      "run " + test::source_path("inputs/ode/lr91.yaml") + " --quiet --backend serial --output " +
      out + " --set run.t_end=5 --set output.every=50 --set output.dump_every=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string trace = read(out + "/trace.csv");
  EXPECT_EQ(trace.rfind("step,t,lr91.V,lr91.Cai,lr91.I_Na,lr91.I_si,lr91.I_K\n", 0), 0u) << trace;
  EXPECT_EQ(count_lines(trace), 1u + 11u);  // header, t = 0, 0.5, ..., 5
  // states.bin: magic, dims, then (step, t, 8 states) at rows 0, 2, 4, ... and the last.
  const std::string dump = read(out + "/states.bin");
  EXPECT_EQ(dump.substr(0, 8), "HYTODE01");
  EXPECT_EQ(dump.size(), 8u + 16u + 6u * (16u + 8u * 8u));
}

// compiler.split_sums: auto chooses wb_net's limit from the teams layout in teams mode; the other
// modes cut its 99-term synaptic sums at the fixed default, as an explicit 8 does. tuning.mode:
// auto runs one model in phases mode on CPU threads.
TEST(OdeProblem, AutoSplitChoosesInTeamsMode) {
  const auto run = [](const std::string& sets) {
    return test::run_cli("run " + test::source_path("inputs/ode/wb_net.yaml") +
                         " --output ode_split --set run.t_end=0.1 " + sets);
  };
  // "N states, K algebraic variables, ...": K.
  const auto algebraics = [](const std::string& output) {
    const auto at = output.find(" algebraic variables");
    if (at == std::string::npos) return std::string();
    const auto space = output.rfind(' ', at - 1);
    return output.substr(space + 1, at - space - 1);
  };
  const auto chosen = [](const std::string& output) {
    const auto at = output.find("compiler.split_sums auto: ");
    return at == std::string::npos ? std::string() : output.substr(at, output.find('(', at) - at);
  };
  const auto fixed = run("--set tuning.mode=phases --set compiler.split_sums=8");
  const auto whole = run("--set tuning.mode=phases --set compiler.split_sums=0");
  const auto teams = run("--set tuning.mode=teams");
  for (const auto* r : {&fixed, &whole, &teams}) ASSERT_EQ(r->exit_code, 0) << r->output;
  EXPECT_EQ(chosen(fixed.output), "");
  EXPECT_NE(algebraics(fixed.output), algebraics(whole.output));
  ASSERT_NE(chosen(teams.output), "") << teams.output;
  EXPECT_NE(algebraics(teams.output), algebraics(whole.output)) << teams.output;
  for (const char* mode : {"phases", "persistent", "fused", "reference"}) {
    const auto r = run(std::string("--set tuning.mode=") + mode);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(chosen(r.output), "") << mode;
    EXPECT_EQ(algebraics(r.output), algebraics(fixed.output)) << mode;
  }
  const auto host_auto = run("--backend serial");
  ASSERT_EQ(host_auto.exit_code, 0) << host_auto.output;
  EXPECT_NE(host_auto.output.find("tuning.mode auto: phases on serial"), std::string::npos)
      << host_auto.output;
  EXPECT_EQ(chosen(host_auto.output), "");
}

TEST(OdeProblem, BadModelsAndOutputsFailWithLocations) {
  core::make_directories("ode_bad");
  core::write_file_atomic(
      "ode_bad/bad.model.yaml",
      "modules:\n  c:\n    states:\n      V: {init: 0, ddt: \"-V + sinh(V)\"}\n");
  core::write_file_atomic(
      "ode_bad/in.yaml", "problem: ode\nmodel: {file: bad.model.yaml}\nrun: {dt: 0.1, t_end: 1}\n");
  auto r = test::run_cli("run ode_bad/in.yaml --quiet --output ode_bad/out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.model.yaml:4:31: unknown function 'sinh'"), std::string::npos)
      << r.output;
  r = test::run_cli(
      "run ode_bad/in.yaml --quiet --output ode_bad/out --set model.file=missing.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot open 'missing.yaml'"), std::string::npos) << r.output;
  r = test::run_cli("run " + test::source_path("inputs/ode/lr91.yaml") +
                    " --quiet --output ode_bad/out --set 'output.variables=[lr91.Vm]'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(
      r.output.find("'lr91.Vm' matches no state or variable of the model (did you mean 'lr91.V'?)"),
      std::string::npos)
      << r.output;
  r = test::run_cli("run " + test::source_path("inputs/ode/lr91.yaml") +
                    " --quiet --output ode_bad/out --set run.dt=0.03");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a whole number of steps"), std::string::npos) << r.output;
  r = test::run_cli("run " + test::source_path("inputs/ode/lr91.yaml") +
                    " --quiet --output ode_bad/out --set run.dt=5 --set run.t_end=100");
  EXPECT_EQ(r.exit_code, 3) << r.output;  // blows up: a runtime failure, not bad input
  EXPECT_NE(r.output.find("not finite"), std::string::npos) << r.output;
  r = test::run_cli("run " + test::source_path("inputs/ode/lr91.yaml") +
                    " --quiet --output ode_bad/out --set tuning.mode=fused"
                    " --set tuning.members_per_thread=3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tuning.members_per_thread"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("auto, 1, 2, 4"), std::string::npos) << r.output;
  // Modes that cannot run the input.
  for (const auto& [sets, message] :
       {std::pair<std::string, std::string>{"--set tuning.mode=teams --set run.method=rk45",
                                            "rk45 chooses its steps on the host"},
        {"--set tuning.mode=teams --set ensemble.members=4", "teams mode runs one model instance"},
        {"--set tuning.mode=ast --set ensemble.members=4", "the AST evaluator runs one"}}) {
    r = test::run_cli("run " + test::source_path("inputs/ode/lr91.yaml") +
                      " --quiet --output ode_bad/out " + sets);
    EXPECT_EQ(r.exit_code, 2) << sets << ": " << r.output;
    EXPECT_NE(r.output.find("'tuning.mode': " + message), std::string::npos) << r.output;
  }
  for (const auto& [value, message] :
       {std::pair<std::string, std::string>{"1", "a part holds at least 2 terms"},
        {"often", "expected auto, 0 (whole sums) or an integer >= 2, got 'often'"}}) {
    r = test::run_cli("run " + test::source_path("inputs/ode/wb_net.yaml") +
                      " --quiet --output ode_bad/out --set compiler.split_sums=" + value);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("'compiler.split_sums': " + message), std::string::npos) << r.output;
  }
}

// Keys that moved under tuning: or were removed say so, at their line.
TEST(OdeProblem, FormerKeysSayWhereTheyWent) {
  core::make_directories("ode_former");
  const std::string model = test::source_path("inputs/ode/lr91.model.yaml");
  struct Case {
    const char* yaml;  // after the run: line
    const char* message;
  };
  for (const auto& [yaml, message] :
       {Case{"  mode: teams\n", "'run.mode' moved to 'tuning.mode'"},
        Case{"  members_per_thread: 2\n",
             "'run.members_per_thread' moved to 'tuning.members_per_thread'"},
        Case{"compiler: {halo: 4}\n", "'compiler.halo' moved to 'tuning.halo'"},
        Case{"compiler: {merge: false}\n", "'compiler.merge' was removed: the compiler always"},
        Case{"compiler: {partitions: 8}\n", "'compiler.partitions' was removed: teams mode"},
        Case{"compiler: {affine: false}\n", "'compiler.affine' was removed: teams layouts"},
        Case{"compiler: {sink: on}\n", "'compiler.sink' was removed: teams mode sinks"}}) {
    core::write_file_atomic("ode_former/in.yaml", "problem: ode\nmodel: {file: " + model +
                                                      "}\nrun:\n  dt: 0.01\n  t_end: 1\n" + yaml);
    const auto r = test::run_cli("check ode_former/in.yaml");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("ode_former/in.yaml:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
}

template <class Space>
class OdeRestart : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(OdeRestart);

TYPED_TEST(OdeRestart, CheckpointRestartIsBitwise) {
  const std::string backend = core::space_name<TypeParam>();
  const std::string base = "ode_restart_" + backend;
  const auto& loader = core::Registry::instance().loader();
  const std::string input = read(test::source_path("inputs/ode/lr91.yaml"));
  const std::string file = test::source_path("inputs/ode/lr91.yaml");
  for (const char* mode : {"phases", "persistent", "fused", "teams", "rk45"}) {
    const std::string method = std::string(mode) == "rk45" ? "rk45" : "rk4";
    const std::string run_mode = std::string(mode) == "rk45" ? "phases" : mode;
    const std::vector<std::string> common{"tuning.mode=" + run_mode, "run.method=" + method,
                                          "output.every=20", "output.quiet_model=true"};
    auto with = [&](std::vector<std::string> extra) {
      extra.insert(extra.end(), common.begin(), common.end());
      return extra;
    };
    // 2 ms = 10 driver steps straight, vs 5 + restart to 10.
    core::run_problem(
        loader.load_string(input, file, with({"run.t_end=2", "checkpoint.at_end=true"})),
        core::RunOptions{backend, base + "/straight", true});
    core::run_problem(
        loader.load_string(input, file, with({"run.t_end=1", "checkpoint.at_end=true"})),
        core::RunOptions{backend, base + "/half", true});
    core::run_problem(
        loader.load_string(input, file,
                           with({"run.t_end=2", "checkpoint.at_end=true",
                                 "checkpoint.restart=" + base + "/half/checkpoint.bin"})),
        core::RunOptions{backend, base + "/resumed", true});
    const core::CheckpointReader a(base + "/straight/checkpoint.bin"),
        b(base + "/resumed/checkpoint.bin");
    EXPECT_EQ(a.get<std::int64_t>("step"), 200);
    EXPECT_EQ(a.get<std::int64_t>("step"), b.get<std::int64_t>("step"));
    EXPECT_EQ(a.bytes("x"), b.bytes("x")) << mode;
    // The resumed trace continues where the first half stopped.
    const std::string resumed = read(base + "/resumed/trace.csv");
    EXPECT_EQ(resumed.find("\n100,1,"), resumed.find('\n')) << resumed.substr(0, 200);
  }
}

}  // namespace
}  // namespace hayate::ode
