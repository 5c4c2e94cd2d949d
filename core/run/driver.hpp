#pragma once
#include "config/config.hpp"

#include <cstdint>
#include <string>

namespace hayate::core {

struct RunOptions {
  std::string backend;     // empty = from the input (default: the build's default space)
  std::string output_dir;  // empty = from the input (default: out/<stem>)
  bool quiet = false;
};

struct RunResult {
  std::string output_dir;
  std::string backend;
  std::int64_t steps = 0;
};

// Resolves backend and output folder, runs the problem to its end with progress, checkpoints,
// run.yaml and timers.csv. Throws InputError (exit 2) or RuntimeFailure / std::exception (exit 3).
RunResult run_problem(const Config& config, const RunOptions& options);

// The output folder a run writes to: --output, else `output.directory`, else out/<input stem>.
// A relative `output.directory` must stay below the working directory (InputError at the key).
std::string resolve_output_dir(const Config& config, const std::string& cli_output);

// Refuses (InputError) --threads outside [1, 4096] and --device naming a GPU that does not exist.
void check_launch_options(int threads, bool threads_given, int device, bool device_given);

// The backend a run would use: --backend, else the input's `backend`, else the default space.
std::string resolve_backend(const Config& config, const std::string& cli_backend);

// GPUs this build and machine can use (0 without CUDA).
int gpu_device_count();

// "hayate info": version, Kokkos configuration, backends and devices.
std::string info_text();

std::string version_text();

}  // namespace hayate::core
