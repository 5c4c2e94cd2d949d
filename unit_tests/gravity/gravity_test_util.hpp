#pragma once
// Helpers of the gravity end-to-end tests: run an input string, read its CSV output.
#include "exec/dispatch.hpp"
#include "gravity/problem.hpp"
#include "run/checkpoint.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace hayate::test {

// Columns of a CSV file with a header row, by name.
inline std::map<std::string, std::vector<double>> read_csv_columns(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::vector<double>> out;
  std::string line, cell;
  if (!std::getline(in, line)) return out;
  std::vector<std::string> names;
  std::stringstream header(line);
  while (std::getline(header, cell, ',')) names.push_back(cell);
  while (std::getline(in, line)) {
    std::stringstream row(line);
    for (std::size_t c = 0; c < names.size() && std::getline(row, cell, ','); ++c)
      out[names[c]].push_back(std::stod(cell));
  }
  return out;
}

// Runs `yaml` (plus overrides) on `backend`, writing into `dir`.
inline core::RunResult run_input(const std::string& yaml, const std::string& dir,
                                 const std::string& backend,
                                 const std::vector<std::string>& overrides = {}) {
  const core::Config config =
      core::Registry::instance().loader().load_string(yaml, "test.yaml", overrides);
  return core::run_problem(config, core::RunOptions{backend, dir, true});
}

// Runs `yaml` (plus overrides) to its end as `hayate run` does, but with the problem made here:
// on the instance `space` and with options no input can set. Writes checkpoint.bin at the end.
template <class Space>
void run_gravity(const std::string& yaml, const std::string& dir, const Space& space,
                 const gravity::ProblemOptions& options = {},
                 const std::vector<std::string>& overrides = {}) {
  const core::Config config =
      core::Registry::instance().loader().load_string(yaml, "test.yaml", overrides);
  std::filesystem::create_directories(dir);
  core::RunContext ctx{config, core::space_name<Space>(), dir, {}, true};
  gravity::GravityProblem<Space> problem(config, space, options);
  problem.initialize(ctx);
  const std::int64_t last = problem.total_steps();
  problem.output(ctx, problem.current_step() >= last);
  while (problem.current_step() < last) {
    problem.advance(ctx);
    problem.output(ctx, problem.current_step() >= last);
  }
  ctx.outputs.commit();
  core::CheckpointWriter checkpoint("gravity");
  problem.save(checkpoint);
  checkpoint.write(ctx.path("checkpoint.bin"));
}

}  // namespace hayate::test
