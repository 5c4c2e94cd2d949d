// What a run does with its output folder when things go wrong, through the binary as a user
// runs it: write errors (a folder in the way, a full disk) stop the run with exit 3 and the first
// error; a second run into a busy folder is refused; restarts into the same folder continue
// every series, also after kill -9 at random moments; blow-ups stop with exit 3 and keep the last
// good checkpoint; a refused rerun leaves the folder as it was.
#include "cli_runner.hpp"
#include "run/checkpoint.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using hayate::test::env_or;
using hayate::test::run_cli;
using hayate::test::source_path;

namespace {

fs::path scratch(const std::string& name) {
  return hayate::test::fresh_scratch("run_safety", name);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string in_quotes(const fs::path& p) {
  return "\"" + p.string() + "\"";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Starts `hayate ARGS` in the background (output discarded); returns its process id.
pid_t spawn(const std::string& args) {
  const std::string command =
      "exec \"" + env_or("HAYATE_TEST_BINARY", HAYATE_BINARY) + "\" " + args + " >/dev/null 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits up to `seconds` for `path` to exist while `pid` runs; false when it does not appear.
bool wait_for(const fs::path& path, pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(path)) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) return fs::exists(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// The first column of every row (the steps of a series whose values are timings).
std::string steps_of(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.find(',')) + "\n";
  return out;
}

// One problem's run for the restart tests: an input, overrides making it a few seconds long with
// checkpoints every few steps, and its series files.
struct Case {
  std::string name, input, sets, half_steps;
  std::vector<std::string> series;
  bool timings = false;  // series values are timings: compare the steps only
};

std::vector<Case> cases() {
  return {
      {"md",
       "inputs/md/lj_melt.yaml",
       "--set system.lattice.cells=[6,6,6] --set run.steps=1600 --set output.thermo_every=10 "
       "--set output.dump_every=50 --set checkpoint.every=50",
       "--set run.steps=800",
       {"thermo.csv", "dump.xyz"}},
      {"gravity",
       "inputs/gravity/plummer_direct.yaml",
       "--set system.n=768 --set run.steps=240 --set output.every=10 "
       "--set output.snapshot_every=40 --set checkpoint.every=20",
       "--set run.steps=120",
       {"thermo.csv", "snapshots.xyz"}},
      {"fhp",
       "inputs/fhp/poiseuille.yaml",
       "--set system.nx=256 --set run.steps=12000 --set output.every=20 --set "
       "output.fields_every=0 "
       "--set output.vtk=false --set output.png=false --set output.profile=false "
       "--set checkpoint.every=300",
       "--set run.steps=6000",
       {"fields.csv"}},
      {"ode",
       "inputs/ode/lr91.yaml",
       "--set run.t_end=4000 --set output.every=50 --set output.dump_every=4 "
       "--set output.batch_rows=64 --set checkpoint.every=20",
       "--set run.t_end=2000",
       {"trace.csv", "states.bin"}},
      {"stream",
       "inputs/stream/bandwidth.yaml",
       "--set system.n=100000 --set run.steps=300 --set checkpoint.every=10",
       "--set run.steps=150",
       {"stream.csv"},
       true},
  };
}

std::string run_args(const Case& c, const fs::path& out, const std::string& extra = "") {
  return "run " + in_quotes(source_path(c.input)) + " --quiet --threads 1 --backend serial " +
         c.sets + " " + extra + " --output " + in_quotes(out);
}

void expect_same_series(const Case& c, const fs::path& straight, const fs::path& resumed,
                        const std::string& what) {
  for (const auto& file : c.series) {
    ASSERT_TRUE(fs::exists(resumed / file)) << what << ": " << file;
    EXPECT_FALSE(fs::exists(resumed / (file + ".part"))) << what << ": " << file;
    const std::string a = read_all(straight / file), b = read_all(resumed / file);
    if (c.timings)
      EXPECT_EQ(steps_of(a), steps_of(b)) << what << ": " << file;
    else
      EXPECT_TRUE(a == b) << what << ": " << file << " differs from the straight run's ("
                          << a.size() << " and " << b.size() << " bytes)";
  }
}

}  // namespace

TEST(RunSafety, AFolderInTheWayOfASeriesExitsThreeNamingIt) {
  // fields.csv (FHP) and stream.csv used to be committed only by destructors that swallowed
  // the error: the run printed done and exited 0.
  for (const auto& [input, file, sets] :
       {std::tuple{"inputs/fhp/poiseuille.yaml", "fields.csv", "--set run.steps=20"},
        std::tuple{"inputs/stream/bandwidth.yaml", "stream.csv", "--set system.n=1000"}}) {
    const fs::path out = scratch(std::string("blocked_") + file);
    fs::create_directories(out / file);
    const auto r = run_cli("run " + in_quotes(source_path(input)) + " " + sets +
                           " --quiet --output " + in_quotes(out));
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("error: run failed: cannot write '" + (out / file).string() +
                            "': a folder of that name is in the way"),
              std::string::npos)
        << r.output;
  }
}

TEST(RunSafety, AFullDiskStopsTheRunAtTheFirstErrorAndKeepsTheRows) {
  const fs::path mnt = scratch("tmpfs");
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=96k") != 0)
    GTEST_SKIP() << "mounting a small tmpfs is not permitted here";
  const auto r = run_cli("run " + in_quotes(source_path("inputs/md/lj_melt.yaml")) +
                         " --quiet --set system.lattice.cells=[4,4,4] --set run.steps=200 "
                         "--set output.thermo_every=1 --set output.dump_every=1 --output " +
                         in_quotes(mnt / "out"));
  const std::string thermo = read_all(mnt / "out" / "thermo.csv");
  umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(count(r.output, "error:"), 1u) << r.output;
  EXPECT_NE(r.output.find("error: run failed: cannot write"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  // The rows written before the disk filled up are committed, and the last one is whole.
  EXPECT_EQ(thermo.rfind("step,temp,pe,ke,etotal,press\n0,", 0), 0u) << thermo;
  EXPECT_EQ(thermo.back(), '\n');
}

TEST(RunSafety, ASecondRunIntoABusyFolderIsRefusedAndADeadRunsLockTakenOver) {
  const Case c = cases()[0];
  const fs::path out = scratch("busy");
  const pid_t first = spawn(run_args(c, out, "--set run.steps=100000"));
  ASSERT_TRUE(wait_for(out / ".hayate-lock", first, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto second = run_cli(run_args(c, out));
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_NE(second.output.find("error: " + out.string() +
                               ": the output folder is in use by another run (pid " +
                               std::to_string(first)),
            std::string::npos)
      << second.output;
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
  EXPECT_TRUE(fs::exists(out / ".hayate-lock"));  // left behind by the killed run
  const auto third = run_cli(run_args(c, out, "--set run.steps=20"));
  EXPECT_EQ(third.exit_code, 0) << third.output;
  EXPECT_FALSE(fs::exists(out / ".hayate-lock"));
}

TEST(RunSafety, ARestartIntoTheSameFolderContinuesEverySeries) {
  for (const Case& c : cases()) {
    const fs::path straight = scratch(c.name + "_straight"), folder = scratch(c.name + "_halves");
    auto r = run_cli(run_args(c, straight));
    ASSERT_EQ(r.exit_code, 0) << c.name << r.output;
    r = run_cli(run_args(c, folder, c.half_steps + " --set checkpoint.at_end=true"));
    ASSERT_EQ(r.exit_code, 0) << c.name << r.output;
    // The restart copies the checkpoint first: it is rewritten in the same folder.
    fs::copy_file(folder / "checkpoint.bin", folder / "half.bin");
    r = run_cli(run_args(c, folder, "--set checkpoint.restart=" + in_quotes(folder / "half.bin")));
    ASSERT_EQ(r.exit_code, 0) << c.name << r.output;
    expect_same_series(c, straight, folder, c.name + " restarted in its folder");
  }
}

TEST(RunSafety, KillNineAtRandomMomentsThenRestartEqualsTheStraightRun) {
  std::mt19937 random(68);
  for (const Case& c : cases()) {
    const fs::path straight = scratch(c.name + "_kill_straight");
    auto r = run_cli(run_args(c, straight));
    ASSERT_EQ(r.exit_code, 0) << c.name << r.output;
    for (int round = 0; round < 2; ++round) {
      const fs::path folder = scratch(c.name + "_kill_" + std::to_string(round));
      const pid_t pid = spawn(run_args(c, folder));
      ASSERT_TRUE(wait_for(folder / "checkpoint.bin", pid, 120)) << c.name;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 600)(random)));
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      const std::string what =
          c.name + " killed in round " + std::to_string(round) + " at step " +
          std::to_string(hayate::core::CheckpointReader((folder / "checkpoint.bin").string())
                             .get<std::int64_t>("step"));
      r = run_cli(
          run_args(c, folder, "--set checkpoint.restart=" + in_quotes(folder / "checkpoint.bin")));
      ASSERT_EQ(r.exit_code, 0) << what << r.output;
      expect_same_series(c, straight, folder, what);
    }
  }
}

TEST(RunSafety, ARerunRefusedBeforeItStartsLeavesTheFolderAsItWas) {
  const Case c = cases()[4];
  const fs::path out = scratch("refused");
  auto r = run_cli(run_args(c, out, "--set run.steps=4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string run_yaml = read_all(out / "run.yaml"), series = read_all(out / "stream.csv");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a new run.yaml would differ
  r = run_cli(run_args(c, out, "--set checkpoint.restart=" + in_quotes(out / "missing.bin")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(read_all(out / "run.yaml"), run_yaml);
  EXPECT_EQ(read_all(out / "stream.csv"), series);
  // Refused on the problem's own checks: nothing is written either, and a folder the refused
  // run would have created is not left behind.
  r = run_cli(run_args(c, out, "--set run.scalar=1 --set run.steps=1000"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(read_all(out / "run.yaml"), run_yaml);
  r = run_cli(
      run_args(c, out / "new", "--set checkpoint.restart=" + in_quotes(out / "missing.bin")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(out / "new"));
}

TEST(RunSafety, BlowUpsStopWithExitThreeNamingStepAndQuantity) {
  struct BlowUp {
    std::string input, sets, message;
    bool checkpointed;  // steps pass before the blow-up: a good checkpoint is kept
  };
  const fs::path dir = scratch("blowups");
  std::ofstream(dir / "square.model.yaml")
      << "modules:\n  c:\n    states:\n      V: {init: 1, ddt: \"V*V\"}\n";
  std::ofstream(dir / "square.yaml") << "problem: ode\nmodel: {file: square.model.yaml}\n"
                                        "run: {dt: 0.1, t_end: 5}\noutput: {every: 1}\n";
  const std::string md = source_path("inputs/md/lj_melt.yaml");
  const std::string every_step = " --set checkpoint.every=1";
  const BlowUp cases[] = {
      // The reproducer: T = 6.5e23 and exit 0 before; it blows up in the first step.
      {md,
       "--set system.lattice.cells=[4,4,4] --set run.dt=0.5 --set output.thermo_every=1" +
           every_step,
       "md: the temperature is ", false},
      {md,
       "--set system.lattice.cells=[4,4,4] --set run.dt=0.05 --set output.thermo_every=1" +
           every_step,
       "md: the temperature is ", true},
      // Between thermo rows and checkpoints: the displacement the rebuild rule measures.
      {md,
       "--set system.lattice.cells=[4,4,4] --set run.dt=0.05 --set neighbor.check=true "
       "--set output.thermo_every=100",
       "md: an atom moved ", false},
      {source_path("inputs/gravity/plummer_direct.yaml"),
       "--set system.n=64 --set time.dt=1e6 --set output.every=1" + every_step,
       "gravity: the energy error is ", false},
      {(dir / "square.yaml").string(), every_step,
       "ode: state c.V of member 0 is not finite at step ", true},
  };
  for (const auto& b : cases) {
    const fs::path out = dir / ("out" + std::to_string(&b - cases));
    const auto r =
        run_cli("run " + in_quotes(b.input) + " " + b.sets + " --quiet --output " + in_quotes(out));
    EXPECT_EQ(r.exit_code, 3) << b.input << r.output;
    EXPECT_EQ(count(r.output, "error:"), 1u) << r.output;
    const auto at = r.output.find("error: run failed: " + b.message);
    ASSERT_NE(at, std::string::npos) << r.output;
    const auto step_at = r.output.find(" step ", at);
    ASSERT_NE(step_at, std::string::npos) << r.output;
    const long long failed_step = std::atoll(r.output.c_str() + step_at + 6);
    EXPECT_GT(failed_step, 0) << r.output;
    if (!b.checkpointed) {
      // Nothing good to keep: no checkpoint of the exploded state was written.
      EXPECT_FALSE(fs::exists(out / "checkpoint.bin")) << r.output;
      continue;
    }
    // The last checkpoint is the last good state, before the failing step: it restarts (and
    // fails again after it).
    ASSERT_TRUE(fs::exists(out / "checkpoint.bin")) << r.output;
    const auto saved =
        hayate::core::CheckpointReader((out / "checkpoint.bin").string()).get<std::int64_t>("step");
    EXPECT_LT(saved, failed_step) << r.output;
    const auto again =
        run_cli("run " + in_quotes(b.input) + " " + b.sets + " --quiet --set checkpoint.restart=" +
                in_quotes(out / "checkpoint.bin") + " --output " + in_quotes(out / "again"));
    EXPECT_EQ(again.exit_code, 3) << again.output;
    EXPECT_NE(again.output.find("error: run failed: " + b.message), std::string::npos)
        << again.output;
  }
  // A stream run whose values overflow is refused before it starts, and says why.
  const auto r = run_cli("check " + in_quotes(source_path("inputs/stream/bandwidth.yaml")) +
                         " --set run.scalar=1 --set run.steps=1000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'run.steps': with run.scalar = 1 the values grow 3x per round and "
                          "overflow double after about 645 rounds"),
            std::string::npos)
      << r.output;
}

TEST(RunSafety, OutputFolderStaysBelowTheWorkingDirectory) {
  const std::string input = in_quotes(source_path("inputs/stream/bandwidth.yaml"));
  for (const char* command : {"check", "run"}) {
    const auto r = run_cli(std::string(command) + " " + input +
                           " --set output.directory=a/../../escape --set system.n=100");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--set output.directory=a/../../escape: 'output.directory': a "
                            "relative output folder must stay below the working directory"),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(fs::exists("../escape"));
  const fs::path absolute = fs::absolute(scratch("absolute"));
  const auto r = run_cli("run " + input + " --quiet --set system.n=100 --set output.directory=" +
                         in_quotes(absolute / "out"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(absolute / "out" / "stream.csv"));
}

TEST(RunSafety, ThreadsAndDevicesThatCannotBeAreRefused) {
  const std::string input = in_quotes(source_path("inputs/stream/bandwidth.yaml"));
  for (const char* option :
       {"--threads -1", "--threads 0", "--threads 100000", "--device 7", "--device -2"}) {
    const auto r = run_cli("run " + input + " --quiet --set system.n=100 " + option + " --output " +
                           in_quotes(scratch("launch")));
    EXPECT_EQ(r.exit_code, 2) << option << "\n" << r.output;
    EXPECT_NE(r.output.find(std::string("error: ") + option + ": "), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_cli("info --threads -3").exit_code, 2);
}
