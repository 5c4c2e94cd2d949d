#pragma once
// The performance switches of an ODE run (the input's tuning: section) and their auto rules, in
// one place. None changes what is computed beyond rounding: the modes run the same equations in
// the same order per step (fused and teams evaluate each sum's parts in the same order too), and
// tests check each mode against the serial reference interpreter.
#include "exec/exec_traits.hpp"
#include "ode/interp.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace hayate::ode {

// tuning.mode: the Engine's device modes (ExecMode), or a serial reference on the host
// (ReferenceInterpreter, AstIntegrator).
enum class RunMode { Phases, Persistent, Fused, Teams, Reference, Ast };

// The tuning: section of an input as written (every key "auto" unless set).
struct TuningKeys {
  std::string mode = "auto";
  std::string members_per_thread = "auto";
  std::string halo = "auto";
};

// What a run uses, every auto resolved.
struct Tuning {
  RunMode mode = RunMode::Phases;
  // The mode was chosen by the rule, not asked for: a teams run whose teams cannot all be
  // resident at once (another program on the GPU) falls back to phases instead of failing.
  bool mode_auto = false;
  // fused: ensemble members per thread (EngineOptions::fused_width; 0 = the engine's rule from
  // the device's multiprocessors and the ensemble's size, Engine::fused_width).
  int members_per_thread = 0;
  int halo = 0;            // teams: rings of the halo layouts (CompilerOptions::halo)
  bool host_halo = false;  // teams on a CPU backend: use them (EngineOptions::teams_host_halo)
};

inline const char* run_mode_name(RunMode mode) {
  switch (mode) {
    case RunMode::Phases:
      return "phases";
    case RunMode::Persistent:
      return "persistent";
    case RunMode::Fused:
      return "fused";
    case RunMode::Teams:
      return "teams";
    case RunMode::Reference:
      return "reference";
    case RunMode::Ast:
      return "ast";
  }
  return "?";
}

// The rules:
//   mode auto: rk45 chooses its steps on the host between per-phase kernels: phases. Otherwise
//     an ensemble (more than one member): fused, one thread per member; one model on a GPU:
//     teams, the whole step in one kernel with one team per bin of cells on its own
//     multiprocessor; one model on CPU threads: phases (teams there run their bins one after
//     another, and the per-phase kernels share the threads better).
//   members_per_thread auto: the engine's rule (4 on CPU threads; on GPUs the largest of 4 and
//     2 that leaves 384 threads per multiprocessor, else 1).
//   halo auto: 8 rings on GPUs (the widest that fits shared memory up to it is taken), none on
//     CPU threads, where a halo's extra cells cost their full time; an explicit number of rings
//     is used on every backend.
// The values are those the schema allows (ode_problem.cpp: declare).
inline Tuning resolve_tuning(const TuningKeys& keys, const core::BackendTraits& backend,
                             std::size_t members, Method method) {
  Tuning t;
  if (keys.mode == "auto") {
    t.mode_auto = true;
    t.mode = method == Method::RK45 ? RunMode::Phases
             : members > 1          ? RunMode::Fused
             : backend.is_gpu       ? RunMode::Teams
                                    : RunMode::Phases;
  } else {
    bool found = false;
    for (RunMode m : {RunMode::Phases, RunMode::Persistent, RunMode::Fused, RunMode::Teams,
                      RunMode::Reference, RunMode::Ast})
      if (keys.mode == run_mode_name(m)) t.mode = m, found = true;
    if (!found) throw std::invalid_argument("tuning.mode: unknown mode '" + keys.mode + "'");
  }
  t.members_per_thread = keys.members_per_thread == "auto" ? 0 : std::stoi(keys.members_per_thread);
  if (keys.halo == "auto") {
    t.halo = backend.is_gpu ? 8 : 0;
  } else {
    t.halo = std::stoi(keys.halo);
    t.host_halo = !backend.is_gpu && t.halo > 0;
  }
  return t;
}

}  // namespace hayate::ode
