#pragma once
// Runs the hayate binary as a user would and captures exit code and combined output.
#include <sys/wait.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace hayate::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// The build's paths, unless the tests run from a copy elsewhere (the GPU machine): then
// HAYATE_TEST_BINARY and HAYATE_TEST_SOURCE_DIR point at the copy.
inline std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

inline CliResult run_cli(const std::string& args) {
  const std::string command =
      "\"" + env_or("HAYATE_TEST_BINARY", HAYATE_BINARY) + "\" " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline std::string source_path(const std::string& relative) {
  return env_or("HAYATE_TEST_SOURCE_DIR", HAYATE_SOURCE_DIR) + "/" + relative;
}

// A scratch folder of this test process: concurrent test runs on one machine never share one.
inline std::filesystem::path scratch_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("hayate_tests_" + std::to_string(::getpid())) /
         name;
}

// scratch_path(area)/name, emptied and created: one folder per test case.
inline std::filesystem::path fresh_scratch(const std::string& area, const std::string& name) {
  const std::filesystem::path dir = scratch_path(area) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `text` to `path` byte for byte and returns the path as a string (for command lines).
inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace hayate::test
