// hayate command line: run, check, info, schema.
#include "compat/kokkos_compat.hpp"
#include "config/error.hpp"
#include "run/driver.hpp"
#include "run/registry.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <new>

namespace {

enum ExitCode { ok = 0, bad_input = 2, runtime_failure = 3 };

void print_input_error(const hayate::core::InputError& e) {
  for (const auto& d : e.diagnostics()) std::fprintf(stderr, "error: %s\n", d.str().c_str());
}

// Kokkos is finalized on every path out of main, including exceptions.
struct KokkosSession {
  KokkosSession(int threads, int device) { hayate::compat::initialize_kokkos(threads, device); }
  ~KokkosSession() {
    if (Kokkos::is_initialized()) Kokkos::finalize();
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace hayate::core;
  register_builtin_problems(Registry::instance());
  spdlog::set_pattern("[hayate] %v");

  CLI::App app{"hayate: performance-portable N-body, MD, lattice-gas and ODE solvers"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);

  std::string input, backend, output;
  std::vector<std::string> overrides;
  bool quiet = false;
  int threads = 0, device = -1;
  std::string schema_problem;

  auto* run = app.add_subcommand("run", "Run an input file");
  run->add_option("input", input, "YAML input file")->required();
  run->add_option("--backend", backend, "cuda, openmp, serial or auto (overrides the input)");
  run->add_option("--set", overrides, "Override a key: --set system.n=4096 (repeatable)");
  run->add_option("--output", output, "Output folder (overrides output.directory)");
  run->add_flag("--quiet", quiet, "Only warnings and errors");
  run->add_option("--threads", threads, "Host threads for the OpenMP backend");
  run->add_option("--device", device, "GPU index for the CUDA backend");

  auto* check = app.add_subcommand("check", "Validate an input file without running it");
  check->add_option("input", input, "YAML input file")->required();
  check->add_option("--set", overrides, "Override a key, validated like the file");

  auto* info = app.add_subcommand("info", "Print version, Kokkos configuration and devices");
  info->add_option("--threads", threads, "Host threads for the OpenMP backend");

  auto* schema = app.add_subcommand("schema", "Print the input reference (Markdown)");
  schema->add_option("problem", schema_problem, "Only this problem");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\nRun 'hayate --help' for usage.\n", e.what());
    return bad_input;
  }
  if (quiet) spdlog::set_level(spdlog::level::warn);

  try {
    if (*schema) {
      const auto names = Registry::instance().names();
      if (!schema_problem.empty() &&
          std::find(names.begin(), names.end(), schema_problem) == names.end()) {
        std::fprintf(stderr, "error: no problem named '%s'\n", schema_problem.c_str());
        return bad_input;
      }
      for (const auto& name : names)
        if (schema_problem.empty() || name == schema_problem)
          std::cout << Registry::instance().schema(name).markdown() << "\n";
      return ok;
    }
    if (*check) {
      const Config config = Registry::instance().loader().load_file(input, overrides);
      std::printf("%s: ok (problem %s)\n", input.c_str(), config.problem().c_str());
      return ok;
    }
    if (*info) {
      KokkosSession session(threads, -1);
      std::cout << info_text();
      return ok;
    }
    // run: validate before touching the device so bad input fails fast.
    const Config config = Registry::instance().loader().load_file(input, overrides);
    KokkosSession session(threads, device);
    const RunResult result = run_problem(config, RunOptions{backend, output, quiet});
    if (!quiet) spdlog::info("done: {} steps on {}, results in {}", result.steps, result.backend,
                             result.output_dir);
    return ok;
  } catch (const InputError& e) {
    print_input_error(e);
    return bad_input;
  } catch (const RuntimeFailure& e) {
    std::fprintf(stderr, "error: run failed: %s\n", e.what());
    return runtime_failure;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: run failed: out of memory\n");
    return runtime_failure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: run failed: %s\n", e.what());
    return runtime_failure;
  }
}
