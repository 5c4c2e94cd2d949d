// The cases of the instruction-count gate (benchmarks/icount.sh): one small, fixed run per physics
// and main kernel variant on the Serial backend. Each case builds its problem from a shipped-style
// input and initializes it outside the measurement; only the steps run with callgrind's
// collection switched on, so setup, I/O and Kokkos' start-up are not counted.
//
//   valgrind --tool=callgrind --collect-atstart=no hayate_icount CASE [--extra-steps N]
//   hayate_icount --list
//
// --extra-steps runs N more steps inside the measured region: the deliberate slow-down with
// which the gate's own test checks that it notices growth.
#include "compat/kokkos_compat.hpp"
#include "config/error.hpp"
#include "run/problem.hpp"
#include "run/registry.hpp"

#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

struct Case {
  const char* input;  // YAML of the problem
  int steps;          // driver steps measured
  const char* what;
};

// Sizes are fixed: the reference counts in benchmarks/reference/icount.json belong to them.
const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> c{
      {"gravity_direct",
       {"problem: gravity\nsolver: direct\nprecision: float\nsystem: {n: 2048, seed: 7}\n"
        "initial: {type: plummer}\nrun: {steps: 10}\n",
        1, "direct summation, 2,048 bodies, FP32, one leapfrog step"}},
      {"gravity_tree",
       {"problem: gravity\nsolver: tree\nprecision: mixed\nsystem: {n: 16384, seed: 7}\n"
        "initial: {type: plummer}\ntree: {rebuild_every: 1}\nrun: {steps: 10}\n",
        1, "Barnes-Hut tree, 16,384 bodies, one step with a rebuild"}},
      {"md_full",
       {"problem: md\nsystem: {lattice: {cells: [10, 10, 10]}}\nneighbor: {every: 5, check: "
        "false}\nrun: {steps: 100}\ntuning: {list: full}\n",
        10, "in.lj melt, 4,000 atoms, 10 steps, full list"}},
      {"md_half",
       {"problem: md\nsystem: {lattice: {cells: [10, 10, 10]}}\nneighbor: {every: 5, check: "
        "false}\nrun: {steps: 100}\ntuning: {list: half}\n",
        10, "in.lj melt, 4,000 atoms, 10 steps, half list"}},
      {"md_coul_long",
       {"problem: md\nsystem:\n  lattice: {style: rocksalt, constant: 2.2, cells: [4, 4, 4], "
        "types: [Na, Cl]}\n  types:\n    - {name: Na, charge: 1}\n    - {name: Cl, charge: -1}\n"
        "pair: {style: lj/cut/coul/long, cutoff: 2.5, coul_cutoff: 3.5}\n"
        "kspace: {style: ewald, accuracy: 1.0e-3}\nneighbor: {every: 5, check: false}\n"
        "run: {steps: 100}\n",
        5, "charged LJ salt, 512 ions, 5 steps, real-space table and Ewald sum"}},
      {"fhp_bytes",
       {"problem: fhp\nsystem: {model: fhp3, nx: 256, ny: 256}\nrun: {steps: 100}\n"
        "tuning: {kernel: bytes_wide}\noutput: {every: 1000}\n",
        20, "FHP-III 256 x 256, 20 steps, byte kernel"}},
      {"fhp_bits",
       {"problem: fhp\nsystem: {model: fhp3, nx: 256, ny: 256}\nrun: {steps: 100}\n"
        "tuning: {kernel: bits}\noutput: {every: 1000}\n",
        20, "FHP-III 256 x 256, 20 steps, bit kernel"}},
      {"ode_lr91",
       {"problem: ode\nmodel: {file: MODELS/lr91.model.yaml}\nrun: {method: euler, dt: 0.01, "
        "t_end: 100}\noutput: {every: 100, quiet_model: true}\n",
        3, "Luo-Rudy 1991 cell, 300 Euler steps"}},
      {"ode_lr_line",
       {"problem: ode\nmodel: {file: MODELS/lr_line.model.yaml}\nrun: {method: euler, dt: 0.01, "
        "t_end: 100}\noutput: {every: 100, quiet_model: true}\n",
        3, "LR-Line, 100 cells, 300 Euler steps"}},
  };
  return c;
}

int usage() {
  std::fprintf(stderr, "usage: hayate_icount CASE [--extra-steps N] | --list\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hayate::core;
  if (argc < 2) return usage();
  const std::string name = argv[1];
  if (name == "--list") {
    for (const auto& [n, c] : cases()) std::printf("%-16s %s\n", n.c_str(), c.what);
    return 0;
  }
  int extra = 0;
  for (int k = 2; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--extra-steps" && k + 1 < argc)
      extra = std::atoi(argv[++k]);
    else
      return usage();
  }
  const auto it = cases().find(name);
  if (it == cases().end()) return usage();

  // Inputs name the bundled models; HAYATE_SOURCE_DIR is where they live.
  std::string input = it->second.input;
  const std::string models = std::string(HAYATE_SOURCE_DIR) + "/inputs/ode";
  for (auto p = input.find("MODELS"); p != std::string::npos; p = input.find("MODELS"))
    input.replace(p, 6, models);

  register_builtin_problems(Registry::instance());
  hayate::compat::initialize_kokkos(1, -1);
  int rc = 0;
  try {
    const Config config = Registry::instance().loader().load_string(input, name + ".yaml");
    const std::string out =
        (std::filesystem::temp_directory_path() / ("hayate-icount-" + name)).string();
    std::filesystem::create_directories(out);
    RunContext ctx{config, "serial", out, {}, true};
    auto problem = Registry::instance().find(config.problem()).create(config, "serial");
    problem->initialize(ctx);
    CALLGRIND_TOGGLE_COLLECT;
    for (int s = 0; s < it->second.steps + extra; ++s) problem->advance(ctx);
    CALLGRIND_TOGGLE_COLLECT;
    problem.reset();
    std::filesystem::remove_all(out);
  } catch (const InputError& e) {
    std::fprintf(stderr, "hayate_icount: %s\n", e.what());
    rc = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hayate_icount: %s\n", e.what());
    rc = 3;
  }
  Kokkos::finalize();
  return rc;
}
