// The reproducers of the parser crashes and unbounded reads, end to end: each is exit 2 with a
// file:line:col position, in seconds, where it used to be a SIGSEGV, a hang or an endless read.
#include "cli_runner.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using hayate::test::CliResult;
using hayate::test::env_or;
using hayate::test::source_path;
using hayate::test::write_file;

namespace {

fs::path scratch(const std::string& name) {
  return hayate::test::fresh_scratch("cli_limits", name);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// run_cli under a time limit, so that a regression to a hang fails instead of blocking the suite.
CliResult run_limited(const std::string& args, int seconds = 60) {
  const std::string command = "timeout -s KILL " + std::to_string(seconds) + " \"" +
                              env_or("HAYATE_TEST_BINARY", HAYATE_BINARY) + "\" " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Every "error:" line carries file:line:col.
bool positioned(const std::string& output) {
  static const std::regex position(R"(^error: .+?:[1-9][0-9]*:[1-9][0-9]*: )");
  std::istringstream in(output);
  int errors = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("error:", 0) != 0) continue;
    ++errors;
    if (!std::regex_search(line, position)) return false;
  }
  return errors > 0;
}

// An ODE input next to a copy of lr91's model whose dV/dt is `ddt`.
std::string ode_case(const fs::path& dir, const std::string& ddt) {
  std::string model = read_all(source_path("inputs/ode/lr91.model.yaml"));
  const auto at = model.find("ddt: \"");
  const auto end = model.find('"', at + 6);
  model = model.substr(0, at + 6) + ddt + model.substr(end);
  write_file(dir / "m.model.yaml", model);
  return write_file(dir / "in.yaml",
                    "problem: ode\nmodel:\n  file: m.model.yaml\nrun: {dt: 0.01, t_end: 1.0}\n");
}

TEST(CliLimits, NestedExpressionsAreInputErrors) {
  const fs::path dir = scratch("nested");
  const std::string cases[] = {std::string(4500, '(') + "V" + std::string(4500, ')'),
                               std::string(30000, '-') + "V"};
  for (const auto& ddt : cases) {
    const CliResult r = run_limited("check \"" + ode_case(dir, ddt) + "\"");
    EXPECT_EQ(r.exit_code, 2) << r.output.substr(0, 500);
    EXPECT_TRUE(positioned(r.output)) << r.output.substr(0, 500);
    EXPECT_NE(r.output.find("m.model.yaml:"), std::string::npos) << r.output.substr(0, 500);
    EXPECT_LT(r.output.size(), 1000u);
  }
  std::string big = "1";
  while (big.size() < 400000) big += "+1";
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_limited("check \"" + ode_case(dir, big) + "\"");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(r.exit_code, 2) << r.output.substr(0, 500);
  EXPECT_TRUE(positioned(r.output)) << r.output.substr(0, 500);
}

TEST(CliLimits, SpecialFilesAreInputErrorsAtTheKeyThatNamesThem) {
  const fs::path dir = scratch("special");
  const std::string fifo = (dir / "pipe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& file : {fifo, std::string("/dev/zero"), dir.string()}) {
    const std::string input = write_file(
        dir / "in.yaml", "problem: ode\nmodel:\n  file: " + file + "\nrun: {dt: 0.1, t_end: 1}\n");
    const CliResult r = run_limited("check \"" + input + "\"", 30);
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.output;
    EXPECT_NE(r.output.find("in.yaml:3:9: 'model.file': model file '" + file + "': is "),
              std::string::npos)
        << r.output;
  }
  // The input itself: its name is the position.
  CliResult r = run_limited("check \"" + fifo + "\"", 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("pipe.yaml: is not a regular file (a FIFO)"), std::string::npos)
      << r.output;
  r = run_limited("check /dev/urandom", 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/dev/urandom: is not a regular file (a character device)"),
            std::string::npos);
}

TEST(CliLimits, DeepYamlNamesAPosition) {
  const fs::path dir = scratch("deep");
  std::string text = "problem: stream\nsystem:\n";
  for (int i = 0; i < 600; ++i)
    text += std::string(2 * i + 2, ' ') + "a" + std::to_string(i) + ":\n";
  const CliResult r = run_limited("check \"" + write_file(dir / "deep.yaml", text) + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(positioned(r.output)) << r.output;
  EXPECT_NE(r.output.find("nested 500 levels deep"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("bad file"), std::string::npos) << r.output;
}

TEST(CliLimits, ChecksOnDefaultedKeysNamePositions) {
  // initial.file is absent (its default): the error points at the section that should hold it.
  const fs::path dir = scratch("defaulted");
  const std::string input =
      write_file(dir / "in.yaml", "problem: gravity\ninitial:\n  type: file\nrun: {steps: 1}\n");
  const CliResult r =
      run_limited("run \"" + input + "\" --quiet --output \"" + (dir / "out").string() + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("in.yaml:2:1: 'initial.file'"), std::string::npos) << r.output;
}

TEST(CliLimits, CorruptMasksAndDataFilesAreInputErrors) {
  const fs::path dir = scratch("masks");
  // A PNG whose IHDR is 5 bytes long (the decoder used to read 13).
  std::string png = "\x89PNG\r\n\x1a\n";
  const std::string ihdr = std::string("IHDR") + std::string("\0\0\0\x10\0", 5);
  png += std::string("\0\0\0\x05", 4) + ihdr;
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(ihdr.data()), uInt(ihdr.size()));
  for (int s = 24; s >= 0; s -= 8) png += char((crc >> s) & 0xff);
  write_file(dir / "mask.png", png);
  const std::string input = write_file(dir / "in.yaml",
                                       "problem: fhp\nsystem: {nx: 64, ny: 32}\nobstacles:\n"
                                       "  - {type: mask, file: mask.png, x: 1, y: 1}\n");
  const CliResult r = run_limited("run \"" + input + "\" --quiet --set run.steps=1 --output \"" +
                                  (dir / "out").string() + "\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(positioned(r.output)) << r.output;
  EXPECT_NE(r.output.find("in.yaml:4:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the IHDR chunk has 5 bytes, not 13"), std::string::npos) << r.output;
  // An empty particle file is a regular file, so only its reader finds it empty. The XYZ
  // reader's "no frame" has no line of its own and is reported at the key that named the file;
  // the LAMMPS reader names the file's first line.
  write_file(dir / "empty.xyz", "");
  for (const std::string source : {"xyz", "lammps_data"}) {
    const std::string md =
        write_file(dir / ("md_" + source + ".yaml"),
                   "problem: md\nsystem:\n  source: " + source + "\n  " + source +
                       ":\n    file: \"" + (dir / "empty.xyz").string() +
                       "\"\n  types:\n    - {name: A, mass: 1.0, epsilon: 1.0, "
                       "sigma: 1.0, cutoff: 2.5}\n");
    const CliResult e = run_limited("check \"" + md + "\"");
    EXPECT_EQ(e.exit_code, 2) << e.output;
    EXPECT_TRUE(positioned(e.output)) << e.output;
    EXPECT_NE(e.output.find(source == "xyz" ? ":5:11: 'system.xyz.file': XYZ file"
                                            : "empty.xyz:1:1: empty data file"),
              std::string::npos)
        << e.output;
    EXPECT_EQ(e.output.find("no such file"), std::string::npos) << e.output;
  }
}

}  // namespace
