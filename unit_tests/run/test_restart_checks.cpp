// Restarts through the real binary: crafted checkpoints (a valid checksum, a lying size, index or
// type) and checkpoints of another input are refused with exit 2 at the key that named the file
// (or the key that differs), by `hayate check` and `hayate run` alike, before anything is
// written; `check` and `run` agree on the rest of the input too; only regular files are read.
#include "checkpoint_craft.hpp"
#include "cli_runner.hpp"
#include "run/checkpoint.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using hayate::core::CheckpointReader;
using hayate::test::bytes_of;
using hayate::test::bytes_of_vector;
using hayate::test::patched;
using hayate::test::rewrite_checkpoint;
using hayate::test::run_cli;
using hayate::test::source_path;
using hayate::test::write_file;

namespace {

fs::path scratch(const std::string& name) {
  return hayate::test::fresh_scratch("restart_checks", name);
}

// A small run of a shipped input that ends with a checkpoint; returns its path.
std::string make_checkpoint(const std::string& input, const fs::path& dir,
                            const std::vector<std::string>& sets) {
  std::string args = "run \"" + source_path(input) + "\" --quiet --output \"" +
                     (dir / "base").string() + "\" --set checkpoint.at_end=true";
  for (const auto& s : sets) args += " --set \"" + s + "\"";
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return (dir / "base" / "checkpoint.bin").string();
}

// `check` and `run` of `input` (with `sets`) restarting from `checkpoint`: both exit 2 with the
// same first line, which holds every one of `expected`; `run` writes nothing.
void expect_refused(const std::string& input, const std::vector<std::string>& sets,
                    const std::string& checkpoint, const std::vector<std::string>& expected,
                    const fs::path& dir) {
  std::string extra;
  for (const auto& s : sets) extra += " --set \"" + s + "\"";
  extra += " --set \"checkpoint.restart=" + checkpoint + "\"";
  const auto check = run_cli("check \"" + source_path(input) + "\"" + extra);
  const fs::path out = dir / "refused";
  fs::remove_all(out);
  const auto run = run_cli("run \"" + source_path(input) + "\" --quiet --output \"" + out.string() +
                           "\"" + extra);
  EXPECT_EQ(check.exit_code, 2) << check.output;
  EXPECT_EQ(run.exit_code, 2) << run.output;
  for (const auto& e : expected) {
    EXPECT_NE(check.output.find(e), std::string::npos) << "expected: " << e << "\n" << check.output;
    EXPECT_NE(run.output.find(e), std::string::npos) << "expected: " << e << "\n" << run.output;
  }
  EXPECT_EQ(check.output.substr(0, check.output.find('\n')),
            run.output.substr(0, run.output.find('\n')));
  EXPECT_FALSE(fs::exists(out)) << "a refused restart wrote " << out;
}

struct Crafted {
  std::string what;  // the case, for messages
  std::map<std::string, std::vector<char>> replace;
  std::vector<std::string> expected;
  // Where the refusal points: the key that named the checkpoint (a value no checkpoint can
  // hold), or the input key a plausible but mismatching value contradicts.
  std::string key = "checkpoint.restart";
};

// Each case rewrites the base checkpoint with its entries replaced, then expects a refusal.
void expect_crafted_refused(const std::string& input, const std::vector<std::string>& sets,
                            const std::string& base, const std::vector<Crafted>& cases,
                            const fs::path& dir) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE(input + ": " + cases[k].what);
    const std::string path = (dir / ("crafted_" + std::to_string(k) + ".bin")).string();
    rewrite_checkpoint(base, path, cases[k].replace);
    std::vector<std::string> expected = cases[k].expected;
    expected.push_back(cases[k].key == "checkpoint.restart"
                           ? "'checkpoint.restart': checkpoint '" + path + "'"
                           : "'" + cases[k].key + "': the checkpoint '" + path + "'");
    expect_refused(input, sets, path, expected, dir);
  }
}

}  // namespace

// Sizes, counts, indices and types read from a checkpoint are checked before use: n = -1, a huge
// n, an index past the end, a type index of 1000, tree arrays out of range, non-finite reals.
TEST(RestartChecks, CraftedGravityCheckpointsExitTwo) {
  const fs::path dir = scratch("gravity");
  const std::string input = "inputs/gravity/plummer_tree.yaml";
  const std::vector<std::string> sets{"system.n=200", "run.steps=3", "output.force_error_every=0"};
  const std::string base = make_checkpoint(input, dir, sets);
  const CheckpointReader cp(base);
  ASSERT_TRUE(cp.has("tree_codes"));
  const auto codes = cp.raw_vector<std::uint64_t>("tree_codes", 200);
  std::vector<std::uint64_t> unsorted = codes;
  std::swap(unsorted[10], unsorted[150]);
  expect_crafted_refused(
      input, sets, base,
      {{"n = -1", {{"n", bytes_of<std::int64_t>(-1)}}, {"entry 'n'", "holds -1"}},
       {"a huge n", {{"n", bytes_of<std::int64_t>(std::int64_t(1) << 40)}}, {"entry 'n'"}},
       {"an id past the end", {{"id", patched<std::int32_t>(cp, "id", 7, 1000)}}, {"entry 'id'"}},
       {"a repeated id", {{"id", patched<std::int32_t>(cp, "id", 7, 8)}}, {"not a permutation"}},
       {"a level of 99",
        {{"level", patched<std::int32_t>(cp, "level", 3, 99)}},
        {"entry 'level' element 3", "[0, 10]"}},
       {"a NaN position",
        {{"x", patched<double>(cp, "x", 5, std::nan(""))}},
        {"entry 'x' element 5", "not finite"}},
       {"a zero mass", {{"m", patched<double>(cp, "m", 5, 0.0)}}, {"entry 'm'", "not positive"}},
       {"x of another size",
        {{"x", bytes_of_vector(std::vector<double>(12, 0.0))}},
        {"entry 'x'", "holds 96 bytes, this run expects 4800"}},
       {"tree order out of range",
        {{"tree_order", patched<std::int32_t>(cp, "tree_order", 0, 1 << 30)}},
        {"entry 'tree_order'", "not a permutation"}},
       {"tree order negative",
        {{"tree_order", patched<std::int32_t>(cp, "tree_order", 0, -5)}},
        {"entry 'tree_order'"}},
       {"tree keys out of order",
        {{"tree_codes", bytes_of_vector(unsorted)}},
        {"entry 'tree_codes'", "out of order"}},
       {"a negative node count",
        {{"tree_nodes", bytes_of<std::int64_t>(-5)}},
        {"entry 'tree_nodes'"}},
       {"a clock index past the walks",
        {{"tree_clock_at", patched<std::int32_t>(cp, "tree_clock_at", 0, 1 << 29)}},
        {"entry 'tree_clock_at'"}},
       {"a walk kind of 1000",
        {{"tree_walk_kind", bytes_of<std::int32_t>(1000)}},
        {"entry 'tree_walk_kind'"}},
       {"a boolean of 7", {{"have_e0", bytes_of<std::uint8_t>(7)}}, {"entry 'have_e0'", "boolean"}},
       {"a step of -1", {{"step", bytes_of<std::int64_t>(-1)}}, {"entry 'step'"}},
       {"the time of another step", {{"time", bytes_of<double>(123.0)}}, {"entry 'time'"}}},
      dir);
  // The tree's nodes are rebuilt from its keys on the device (after allocation, so `run` only):
  // a node count other than the keys give is a corrupt checkpoint.
  const std::string path = (dir / "nodes.bin").string();
  rewrite_checkpoint(base, path, {{"tree_nodes", bytes_of<std::int64_t>(3)}});
  std::string args = "run \"" + source_path(input) + "\" --quiet --output \"" +
                     (dir / "nodes").string() + "\" --set \"checkpoint.restart=" + path + "\"";
  for (const auto& s : sets) args += " --set \"" + s + "\"";
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("entry 'tree_nodes'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("its keys make"), std::string::npos) << r.output;
}

TEST(RestartChecks, CraftedMdFhpOdeStreamCheckpointsExitTwo) {
  {
    const fs::path dir = scratch("md");
    const std::string input = "inputs/md/lj_melt.yaml";
    const std::vector<std::string> sets{"system.lattice.cells=[4,4,4]", "run.steps=4"};
    const std::string base = make_checkpoint(input, dir, sets);
    const CheckpointReader cp(base);
    expect_crafted_refused(
        input, sets, base,
        {{"a type index of 1000",
          {{"type", patched<std::int32_t>(cp, "type", 17, 1000)}},
          {"entry 'type' element 17", "holds 1000, expected an integer in [0, 0]"}},
         {"natoms = -1", {{"natoms", bytes_of<std::int64_t>(-1)}}, {"entry 'natoms'"}},
         {"a repeated atom id", {{"id", patched<std::int64_t>(cp, "id", 3, 1)}}, {"entry 'id'"}},
         {"a NaN build position",
          {{"x_build", patched<double>(cp, "x_build", 9, std::nan(""))}},
          {"entry 'x_build' element 9"}},
         {"a last build after the step",
          {{"last_build", bytes_of<std::int64_t>(99)}},
          {"entry 'last_build'"}}},
        dir);
  }
  {
    const fs::path dir = scratch("fhp");
    const std::string input = "inputs/fhp/poiseuille.yaml";
    const std::vector<std::string> sets{
        "system.nx=64",     "system.ny=16",     "run.steps=3",     "output.fields_every=0",
        "output.average=1", "output.png=false", "output.vtk=false"};
    const std::string base = make_checkpoint(input, dir, sets);
    const CheckpointReader cp(base);
    expect_crafted_refused(
        input, sets, base,
        {{"nx = -1", {{"nx", bytes_of<std::int32_t>(-1)}}, {"entry 'nx'"}},
         {"a model of 1000", {{"model", bytes_of<std::int32_t>(1000)}}, {"entry 'model'"}},
         {"too few sites", {{"sites", std::vector<char>(10, 0)}}, {"entry 'sites'"}},
         {"a solid site in the fluid",
          {{"sites", patched<std::uint8_t>(cp, "sites", 64 * 5 + 3, 0x80)}},
          {"entry 'sites' element 323", "column 3, row 5", "'obstacles'"}}},
        dir);
  }
  {
    const fs::path dir = scratch("ode");
    const std::string input = "inputs/ode/lr91.yaml";
    const std::vector<std::string> sets{"run.t_end=2", "output.every=50"};
    const std::string base = make_checkpoint(input, dir, sets);
    const CheckpointReader cp(base);
    expect_crafted_refused(
        input, sets, base,
        {{"n_states huge",
          {{"n_states", bytes_of<std::uint64_t>(~std::uint64_t(0))}},
          {"entry 'n_states'"}},
         {"a NaN state",
          {{"x", patched<double>(cp, "x", 2, std::nan(""))}},
          {"entry 'x' element 2"}},
         {"a step of -1", {{"step", bytes_of<std::int64_t>(-1)}}, {"entry 'step'"}},
         {"a zero trial step", {{"h", bytes_of<double>(0.0)}}, {"entry 'h'"}}},
        dir);
  }
  {
    const fs::path dir = scratch("stream");
    const std::string input = "inputs/stream/bandwidth.yaml";
    const std::vector<std::string> sets{"system.n=1000", "run.steps=2"};
    const std::string base = make_checkpoint(input, dir, sets);
    expect_crafted_refused(input, sets, base,
                           {{"n = -1", {{"n", bytes_of<std::int64_t>(-1)}}, {"entry 'n'"}},
                            {"a step of 2^62",
                             {{"step", bytes_of<std::int64_t>(std::int64_t(1) << 62)}},
                             {"is at step 4611686018427387904, beyond run.steps = 2"},
                             "run.steps"}},
                           dir);
  }
}

// A checkpoint of another input is refused at the key that differs, naming the checkpoint.
TEST(RestartChecks, MismatchedCheckpointsExitTwoNamingTheMismatch) {
  const fs::path dir = scratch("mismatch");
  struct Case {
    std::string input;
    std::vector<std::string> sets, changed, expected;
  };
  const std::string gravity = "inputs/gravity/plummer_direct.yaml";
  const std::vector<std::string> g{"system.n=64", "run.steps=2"};
  const std::string md = "inputs/md/lj_melt.yaml";
  const std::vector<std::string> m{"system.lattice.cells=[4,4,4]", "run.steps=2"};
  const std::string fhp = "inputs/fhp/poiseuille.yaml";
  const std::vector<std::string> f{"system.nx=64",          "system.ny=16",     "run.steps=2",
                                   "output.fields_every=0", "output.average=1", "output.png=false",
                                   "output.vtk=false"};
  const std::string ode = "inputs/ode/lr91.yaml";
  const std::vector<std::string> o{"run.t_end=2", "output.every=50"};
  const Case cases[] = {
      {gravity,
       g,
       {"system.n=128"},
       {"'system.n': the checkpoint", "holds 64 particles, the input 128"}},
      {gravity, g, {"time.dt=0.02"}, {"'time.dt': the checkpoint", "time.dt = 0.0078125"}},
      {gravity, g, {"system.softening=0.1"}, {"'system.softening': the checkpoint"}},
      {gravity, g, {"solver=tree"}, {"'solver': the checkpoint", "'direct'"}},
      {gravity, g, {"time.integrator=block"}, {"'time.integrator': the checkpoint"}},
      {gravity, g, {"run.steps=1"}, {"'run.steps': the checkpoint", "beyond run.steps = 1"}},
      {md, m, {"system.lattice.density=0.9"}, {"'system.lattice.density': the checkpoint", "box"}},
      {md,
       m,
       {"system.lattice.cells=[5,5,5]"},
       {"'system.lattice.cells': the checkpoint", "256 atoms"}},
      {md, m, {"run.dt=0.004"}, {"'run.dt': the checkpoint"}},
      {md, m, {"precision=float"}, {"'precision': the checkpoint", "double precision"}},
      {md,
       m,
       {"pair.style=morse", "system.types=[{name: A, d0: 1, alpha: 1, r0: 1}]"},
       {"'pair.style': the checkpoint", "lj/cut"}},
      {md,
       m,
       {"system.types=[{name: A, mass: 2.0, cutoff: 2.5}]"},
       {"'system.types': the checkpoint", "mass"}},
      {fhp, f, {"system.nx=128"}, {"'system.nx': the checkpoint", "64x16 lattice"}},
      {fhp, f, {"system.model=fhp2"}, {"'system.model': the checkpoint"}},
      {fhp,
       f,
       {"system.boundary_x=walls"},
       {"'checkpoint.restart': checkpoint", "is fluid", "another geometry"}},
      {fhp,
       f,
       {"obstacles=[{type: circle, x: 30, y: 8, radius: 3}]"},
       {"'checkpoint.restart': checkpoint", "is fluid", "another geometry"}},
      {ode, o, {"run.dt=0.02"}, {"'run.dt': the checkpoint", "run.dt = 0.01"}},
      {ode,
       o,
       {"model.file=wb96.model.yaml", "output.variables=[]"},
       {"'model.file': the checkpoint"}},
      {ode, o, {"run.t_end=1"}, {"'run.t_end': the checkpoint", "beyond run.t_end = 1"}},
      {"inputs/stream/bandwidth.yaml",
       {"system.n=1000", "run.steps=2"},
       {"system.precision=float"},
       {"'system.precision': the checkpoint", "double arrays"}},
  };
  std::map<std::string, std::string> bases;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input + " " + c.changed[0]);
    const std::string key = c.input;
    if (!bases.count(key)) {
      const fs::path d = dir / std::to_string(bases.size());
      fs::create_directories(d);
      bases[key] = make_checkpoint(c.input, d, c.sets);
    }
    std::vector<std::string> sets = c.sets;
    sets.insert(sets.end(), c.changed.begin(), c.changed.end());
    expect_refused(c.input, sets, bases[key], c.expected, dir);
  }
  // The same input restarts.
  const auto r = run_cli("run \"" + source_path(gravity) + "\" --quiet --output \"" +
                         (dir / "again").string() + "\" --set system.n=64 --set run.steps=4" +
                         " --set \"checkpoint.restart=" + bases[gravity] + "\"");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// `check` runs what `run` runs before it allocates: inputs `run` refuses, `check` refuses.
TEST(RestartChecks, CheckAndRunAgree) {
  const fs::path dir = scratch("agree");
  struct Case {
    std::string input;
    std::vector<std::string> sets;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"inputs/md/lj_melt.yaml", {"system.lattice.cells=[0,0,0]"}, "cell counts must be >= 1"},
      {"inputs/md/lj_melt.yaml", {"system.lattice.types=[B]"}, "unknown type 'B'"},
      {"inputs/md/lj_melt.yaml", {"system.lattice.cells=[2,2,2]"}, "is smaller than 2 x"},
      {"inputs/gravity/kepler.yaml", {"solver=tree"}, "the Hermite integrator needs the direct"},
      {"inputs/gravity/plummer_direct.yaml",
       {"initial.type=file", "initial.file=nothing.xyz"},
       "'initial.file': particle file 'nothing.xyz': cannot open"},
      {"inputs/stream/bandwidth.yaml",
       {"checkpoint.restart=no_such_checkpoint.bin"},
       "'checkpoint.restart': checkpoint 'no_such_checkpoint.bin': cannot open"},
      {"inputs/stream/bandwidth.yaml", {"checkpoint.restart=" + dir.string()}, "is a directory"},
      {"inputs/fhp/poiseuille.yaml", {"obstacles=[{type: circle, x: 3}]"}, "needs the key 'y'"},
      {"inputs/ode/lr91.yaml", {"output.members=[3]"}, "member 3 does not exist"},
      {"inputs/ode/lr91.yaml", {"run.t_end=2.005"}, "not a whole number of steps"},
      {"inputs/ode/lr91.yaml", {"model.file=/dev/zero"}, "is not a regular file"},
  };
#ifndef KOKKOS_ENABLE_CUDA
  cases.push_back({"inputs/stream/bandwidth.yaml", {"backend=cuda"}, "'cuda' is not enabled"});
#endif
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input + " " + c.sets[0]);
    std::string extra;
    for (const auto& s : c.sets) extra += " --set \"" + s + "\"";
    const auto check = run_cli("check \"" + source_path(c.input) + "\"" + extra);
    const fs::path out = dir / "out";
    fs::remove_all(out);
    const auto run = run_cli("run \"" + source_path(c.input) + "\" --quiet --output \"" +
                             out.string() + "\"" + extra);
    EXPECT_EQ(check.exit_code, 2) << check.output;
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(check.output.find(c.expected), std::string::npos) << check.output;
    EXPECT_EQ(check.output, run.output);
    EXPECT_FALSE(fs::exists(out));
  }
}

// A model connection without a topology is an input error at the connection, not a crash of
// the YAML library (exit 3).
TEST(RestartChecks, ModelConnectionWithoutTopologyExitsTwo) {
  const fs::path dir = scratch("topology");
  std::ifstream in(source_path("inputs/ode/wb_net.model.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string model = text.str();
  const auto at = model.find("topology:");
  ASSERT_NE(at, std::string::npos);
  const auto end = model.find('\n', at);
  model.erase(at, end - at);
  model.insert(at, "probability: 0.5");
  write_file(dir / "net.model.yaml", model);
  std::ifstream in2(source_path("inputs/ode/wb_net.yaml"));
  std::stringstream input;
  input << in2.rdbuf();
  const std::string path = write_file(dir / "net.yaml", input.str());
  const auto r = run_cli("check \"" + path + "\" --set model.file=net.model.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("net.model.yaml:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a connection needs 'topology'"), std::string::npos) << r.output;
}

// Inputs, models, checkpoints and data files are read only when they are regular files of a
// bounded size; a FIFO does not block, a device is not read.
TEST(RestartChecks, SpecialFilesAreRefusedAtOnce) {
  const fs::path dir = scratch("special");
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string stream = source_path("inputs/stream/bandwidth.yaml");
  auto r = run_cli("check \"" + fifo + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a regular file (a FIFO)"), std::string::npos) << r.output;
  r = run_cli("check \"" + stream + "\" --set \"checkpoint.restart=" + fifo + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a FIFO"), std::string::npos) << r.output;
  r = run_cli("check \"" + source_path("inputs/ode/lr91.yaml") + "\" --set \"model.file=" + fifo +
              "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'model.file': model file"), std::string::npos) << r.output;
  r = run_cli("check \"" + source_path("inputs/ode/lr91.yaml") +
              "\" --set model.file=/dev/urandom");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a character device"), std::string::npos) << r.output;
  r = run_cli("check /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("check \"" + dir.string() + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;
  // An input past the size limit is refused unread.
  const std::string big = (dir / "big.yaml").string();
  {
    std::ofstream out(big);
    out << "problem: stream\n";
    const std::string comment = "# " + std::string(1000, 'x') + "\n";
    for (int k = 0; k < 17 * 1024; ++k) out << comment;
  }
  r = run_cli("check \"" + big + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bytes, more than the"), std::string::npos) << r.output;
}

// Message contract: an override's error is blamed on the --set argument, echoed values are
// truncated and escaped, and checkpoint errors carry the position of the key that named it.
TEST(RestartChecks, MessagesCarryPositionsAndTruncateValues) {
  const fs::path dir = scratch("messages");
  const std::string stream = source_path("inputs/stream/bandwidth.yaml");
  auto r = run_cli("check \"" + stream + "\" --set nosuch.key=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("error: --set nosuch.key=1: unknown key 'nosuch'"), std::string::npos)
      << r.output;
  const std::string huge(100000, 'z');
  r = run_cli("check \"" + stream + "\" --set \"system.precision=" + huge + "\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_LT(r.output.size(), 2000u) << r.output.substr(0, 400);
  EXPECT_NE(r.output.find("more bytes"), std::string::npos) << r.output.substr(0, 400);
  r = run_cli("check \"" + stream + "\" --set \"system.precision=$(printf 'a\\033[2Jb')\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.find('\033'), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a\\x1b[2Jb"), std::string::npos) << r.output;
  // A checkpoint named in the file is blamed at its line and column.
  const std::string input = write_file(dir / "in.yaml",
                                       "problem: stream\nsystem:\n  n: 1000\ncheckpoint:\n"
                                       "  restart: missing.bin\n");
  r = run_cli("check \"" + input + "\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("in.yaml:5:12: 'checkpoint.restart': checkpoint 'missing.bin': cannot "
                          "open the checkpoint (no such file)"),
            std::string::npos)
      << r.output;
}
