// ODE interpreter: time per Euler and RK4 step for the bundled models on every backend (per-phase
// kernels and persistent mode) and the one-core reference interpreter; the effect of each
// compiler pass; expression evaluations per second for ensembles. Model files are read from
// inputs/ode/ (run from the repository root) or from $HAYATE_ODE_INPUTS.
#include "bench_util.hpp"
#include "exec/exec_traits.hpp"
#include "ode/compiler.hpp"
#include "ode/engine.hpp"
#include "ode/reference.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

namespace hayate::bench {
namespace {

using ode::all_passes;
using ode::CompilerOptions;
using ode::ExecMode;
using ode::FusedState;
using ode::Method;

std::string model_path(const std::string& name) {
  const char* dir = std::getenv("HAYATE_ODE_INPUTS");
  return std::string(dir ? dir : "inputs/ode") + "/" + name + ".model.yaml";
}

struct Case {
  const char* model;
  double dt;
};
// dt as in the inputs; stepping starts from the initial state.
constexpr Case cases[] = {
    {"lr91", 0.01}, {"wb_net", 0.02}, {"rybak_cpg", 0.02}, {"lr_ring", 0.01}, {"lr_line", 0.01}};

const char* method_name(Method m) {
  return m == Method::Euler ? "euler" : "rk4";
}
int stages(Method m) {
  return m == Method::Euler ? 1 : 4;
}

void counters(benchmark::State& state, const ode::Program& prog, std::size_t members, Method method,
              std::int64_t steps) {
  // Inverted rate: seconds per step (printed with an SI prefix, e.g. 4.2u).
  state.counters["seconds_per_step"] = benchmark::Counter(
      double(steps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["expr_evals_per_second"] =
      rate(double(prog.n_equations) * double(members) * stages(method) * double(steps));
  state.counters["equations"] = double(prog.n_equations);
  state.counters["phases"] = double(prog.n_phases());
  state.counters["members"] = double(members);
}

// Steps per timed iteration: enough that launch latency is measured, not hidden.
constexpr std::int64_t kSteps = 1000;
// Host backends: 100 steps per iteration keep the suite within its time on the device machine.
template <class Space>
std::int64_t steps_per_iteration(Space) {
  return core::ExecTraits<Space>::is_gpu ? kSteps : 100;
}

const char* mode_name(ExecMode mode) {
  switch (mode) {
    case ExecMode::Phases:
      return "phases";
    case ExecMode::Persistent:
      return "persistent";
    case ExecMode::Fused:
      return "fused";
    case ExecMode::Teams:
      return "teams";
  }
  return "?";
}

// compiler.split_sums: auto (ode::choose_split_sums), as a run gets by default.
constexpr int kSplitAuto = -1;

template <class Space>
void device_steps(Space space, benchmark::State& state, const std::string& model, double dt,
                  Method method, ExecMode mode, CompilerOptions options, std::size_t members,
                  std::int64_t steps, const ode::EngineOptions& engine_options = {},
                  int split_sums = kSplitAuto, bool sink_auto = true) {
  // Teams: the automatic bins (about 4 cells each) unless the caller chose a number.
  if (mode == ExecMode::Teams && options.partitions == 1) options.partitions = 0;
  ode::ModelOptions model_options;
  const auto load = [&](int limit) {
    model_options.split_sums = limit;
    return ode::load_model_file(model_path(model), model_options);
  };
  // As a run chooses: from the layout in teams mode, the fixed default in the others.
  if (split_sums == kSplitAuto)
    split_sums = mode == ExecMode::Teams ? ode::choose_split_sums(load, options).limit
                                         : ode::kDefaultSplitSums;
  const ode::FlatModel fm = load(split_sums);
  state.counters["split_sums"] = split_sums;
  // Derivative tasks sunk where the layout says, as a run does (teams mode only).
  if (mode == ExecMode::Teams && sink_auto && !options.sink_derivatives)
    options.sink_derivatives = ode::sink_shortens(fm, options);
  state.counters["sink"] = options.sink_derivatives ? 1 : 0;
  const ode::Program prog = ode::compile(fm, options);
  ode::Engine<Space> engine(space, prog, members, method, mode, engine_options);
  std::vector<double> x(prog.n_states * members);
  for (std::size_t i = 0; i < prog.n_states; ++i)
    for (std::size_t m = 0; m < members; ++m) x[i * members + m] = fm.state_init[i];
  engine.set_states(x);
  std::int64_t step = 0;
  engine.advance(step, steps, dt);  // warm-up
  step += steps;
  for (auto _ : state) {
    time_region(state, space, [&] { engine.advance(step, steps, dt); });
    step += steps;
    // Restart from the initial state before the model leaves its first beats.
    if (step * dt > 2000.0) {
      engine.set_states(x);
      step = 0;
    }
  }
  counters(state, prog, members, method, steps);
  state.counters["bins"] = double(prog.n_bins);
  if (mode == ExecMode::Teams) {
    state.counters["halo"] = double(engine.teams_halo());
    state.counters["block_steps"] = double(engine.teams_block_steps());
  }
}

// Per-phase kernels, one team (persistent) and, for the networks, one team per bin of cells.
void register_steps() {
  for (const auto& c : cases)
    for (Method method : {Method::Euler, Method::RK4})
      for (ExecMode mode : {ExecMode::Phases, ExecMode::Persistent, ExecMode::Teams}) {
        if (mode == ExecMode::Teams && std::string(c.model) == "lr91") continue;
        const std::string name =
            std::string("ode/step/") + c.model + "/" + method_name(method) + "/" + mode_name(mode);
        const std::string model = c.model;
        const double dt = c.dt;
        register_for_each_space(
            name,
            [=](auto space, benchmark::State& state) {
              device_steps(space, state, model, dt, method, mode, all_passes(), 1,
                           steps_per_iteration(space));
            },
            [](benchmark::internal::Benchmark* b) { b->MinTime(0.1); });
      }
}

// LR-Line in teams mode without merging (more, shorter phases: team barriers are cheap), without
// pair words, with derivative tasks not sunk, with variables read once stored, unplaced, with 4,
// 8 or 16 bins instead of 25, with only the teams' variables in scratch (program and states in
// global memory), and with everything in global memory.
void register_teams_variants() {
  // LR-Line, Euler, teams mode with other compiler or engine options.
  const auto variant = [](const std::string& name, const CompilerOptions& o,
                          const ode::EngineOptions& e, bool sink_auto = true) {
    register_for_each_space(
        "ode/step/lr_line/euler/teams_" + name,
        [=](auto space, benchmark::State& state) {
          device_steps(space, state, "lr_line", 0.01, Method::Euler, ExecMode::Teams, o, 1,
                       steps_per_iteration(space), e, kSplitAuto, sink_auto);
        },
        [](benchmark::internal::Benchmark* b) { b->MinTime(0.1); });
  };
  CompilerOptions unmerged = all_passes();
  unmerged.merge = false;
  variant("unmerged", unmerged, {});
  // Without pair words (CompilerOptions::pair_leaves): a leaf and the binary operation after it
  // dispatched one by one.
  CompilerOptions unpaired = all_passes();
  unpaired.pair_leaves = false;
  variant("unpaired", unpaired, {});
  // Derivative tasks appended to the streams they were merged into (sink_derivatives off), not
  // sunk into the next phase (LR-Line's dCai/dt after E_si -> I_si).
  variant("unsunk", all_passes(), {}, false);
  // Variables read once stored and loaded again (inline_single_use off), not kept on the
  // stack of the stream that reads them.
  CompilerOptions stored = all_passes();
  stored.inline_single_use = false;
  variant("stored", stored, {});
  // Each phase's groups in bin order, not placed on the warp schedulers (place off).
  CompilerOptions unplaced = all_passes();
  unplaced.place = false;
  variant("unplaced", unplaced, {});
  // 4, 8 or 16 bins of 25, 12-13 or 6-7 cells (the default is 25 bins of 4): fewer SMs,
  // fuller warps.
  for (int bins : {4, 8, 16}) {
    CompilerOptions o = all_passes();
    o.partitions = bins;
    variant(std::to_string(bins) + "bins", o, {});
  }
  ode::EngineOptions vars_only;
  vars_only.teams_program = false;
  variant("vars", all_passes(), vars_only);
  ode::EngineOptions in_global;
  in_global.teams_scratch = false;
  variant("global", all_passes(), in_global);
}

// The networks in teams mode with a halo of up to H rings (tuning.halo; the GPU default, 8, is the
// plain teams benchmark; 0 is none): teams exchange states every h + 1 sweeps (whole steps)
// instead of every sweep. The counters halo (h) and block_steps
// say what the engine laid out (block_steps -1: no halo fitted or held a whole step).
void register_halo() {
  for (const char* model : {"lr_line", "lr_ring", "rybak_cpg", "wb_net"})
    for (Method method : {Method::Euler, Method::RK4})
      for (int halo : {0, 1, 2, 3, 4, 6, 8, 12, 16}) {
        if (method == Method::RK4 && halo > 0 && halo < 3) continue;
        const auto c = std::find_if(std::begin(cases), std::end(cases),
                                    [&](const auto& k) { return std::string(k.model) == model; });
        const double dt = c->dt;
        const std::string name = std::string("ode/step/") + model + "/" + method_name(method) +
                                 "/teams_halo" + std::to_string(halo);
        CompilerOptions o = all_passes();
        o.halo = halo;
        const std::string m = model;
        register_for_each_space(
            name,
            [=](auto space, benchmark::State& state) {
              device_steps(space, state, m, dt, method, ExecMode::Teams, o, 1,
                           steps_per_iteration(space));
            },
            [](benchmark::internal::Benchmark* b) { b->MinTime(0.1); });
      }
}

// The networks with long synaptic sums, with sums of more than L terms cut into parts
// (compiler.split_sums; 0: kept whole; the plain benchmarks use the default, auto).
void register_split() {
  for (const char* model : {"wb_net", "rybak_cpg"})
    for (Method method : {Method::Euler, Method::RK4})
      for (ExecMode mode : {ExecMode::Teams, ExecMode::Phases})
        for (int split : {0, 4, 6, 8, 10, 12, 16, 24}) {
          const std::string name = std::string("ode/step/") + model + "/" + method_name(method) +
                                   "/" + mode_name(mode) + "_split" + std::to_string(split);
          const std::string m = model;
          register_for_each_space(
              name,
              [=](auto space, benchmark::State& state) {
                device_steps(space, state, m, 0.02, method, mode, all_passes(), 1,
                             steps_per_iteration(space), {}, split);
              },
              [](benchmark::internal::Benchmark* b) { b->MinTime(0.1); });
        }
}

// The serial reference interpreter on one core: the baseline of the speed-up goals. Sums stay
// whole: on one core their parts only add work.
void register_reference() {
  for (const auto& c : cases)
    for (Method method : {Method::Euler, Method::RK4}) {
      const std::string model = c.model;
      const double dt = c.dt;
      auto* b = benchmark::RegisterBenchmark(
          (std::string("ode/step/") + c.model + "/" + method_name(method) + "/reference/one_core")
              .c_str(),
          [=](benchmark::State& state) {
            ode::ModelOptions whole;
            whole.split_sums = 0;
            const ode::FlatModel fm = ode::load_model_file(model_path(model), whole);
            const ode::Program prog = ode::compile(fm, all_passes());
            ode::ReferenceInterpreter ref(prog, 1, method);
            ref.x() = fm.state_init;
            const std::int64_t steps = 100;
            std::int64_t step = 0;
            // The thread's CPU time beside the wall time: where the host reads the same step
            // at very different times, it says whether the thread lost the core (CPU time
            // below wall time) or ran slower on it (both alike).
            double cpu_seconds = 0.0;
            std::int64_t timed_steps = 0;
            const auto thread_seconds = [] {
              timespec ts{};
              clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
              return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
            };
            for (auto _ : state) {
              const double cpu_start = thread_seconds();
              const auto start = std::chrono::steady_clock::now();
              ref.advance(step, steps, dt);
              state.SetIterationTime(
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
              cpu_seconds += thread_seconds() - cpu_start;
              timed_steps += steps;
              step += steps;
              if (step * dt > 2000.0) {
                ref.x() = fm.state_init;
                step = 0;
              }
            }
            counters(state, prog, 1, method, steps);
            state.counters["cpu_seconds_per_step"] =
                timed_steps > 0 ? cpu_seconds / double(timed_steps) : 0.0;
          });
      b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.1);
    }
}

// The source's figure: Base, then Reorder, Redundant (padding), Unify and Merge switched on one
// after the other (constant folding stays on throughout).
void register_passes() {
  struct Config {
    const char* name;
    bool reorder, pad, unify, merge;
  };
  constexpr Config configs[] = {{"base", false, false, false, false},
                                {"reorder", true, false, false, false},
                                {"redundant", true, true, false, false},
                                {"unify", true, true, true, false},
                                {"merge", true, true, true, true}};
  for (const char* model : {"lr_line", "wb_net", "rybak_cpg"})
    for (const auto& cfg : configs) {
      CompilerOptions o;
      o.reorder = cfg.reorder;
      o.pad = cfg.pad;
      o.unify = cfg.unify;
      o.merge = cfg.merge;
      const std::string m = model;
      const double dt = m == "lr_line" ? 0.01 : 0.02;
      register_for_each_space(
          std::string("ode/passes/") + model + "/euler/phases/" + cfg.name,
          [=](auto space, benchmark::State& state) {
            device_steps(space, state, m, dt, Method::Euler, ExecMode::Phases, o, 1,
                         steps_per_iteration(space));
          },
          [](benchmark::internal::Benchmark* b) { b->MinTime(0.1); });
    }
}

// Parameter-sweep ensembles: lanes across members. Fused runs all steps of a call in one kernel
// (state placed and members per thread chosen by the engine; fused_global/fused_scratch: state
// in global or scratch memory; fused_w<k>: k members per thread; fused_noinline: single-use
// variables stored and loaded);
// one team per member (persistent) is slow at this size, so it runs the smallest ensemble only.
void register_ensembles() {
  struct Variant {
    const char* name;
    ExecMode mode;
    ode::EngineOptions options;
    std::int64_t steps;
    bool inline_vars = true;  // CompilerOptions::inline_single_use
  };
  const Variant variants[] = {
      {"phases", ExecMode::Phases, {}, 20},
      {"persistent", ExecMode::Persistent, {}, 20},
      {"fused", ExecMode::Fused, {}, 100},
      {"fused_global", ExecMode::Fused, {FusedState::Global, 0}, 100},
      {"fused_scratch", ExecMode::Fused, {FusedState::Scratch, 0}, 100},
      {"fused_w1", ExecMode::Fused, {FusedState::Auto, 0, true, 1}, 100},
      {"fused_w2", ExecMode::Fused, {FusedState::Auto, 0, true, 2}, 100},
      {"fused_w4", ExecMode::Fused, {FusedState::Auto, 0, true, 4}, 100},
      {"fused_global_w1", ExecMode::Fused, {FusedState::Global, 0, true, 1}, 100},
      {"fused_global_w4", ExecMode::Fused, {FusedState::Global, 0, true, 4}, 100},
      {"fused_noinline", ExecMode::Fused, {}, 100, false}};
  for (const char* model : {"wb96", "lr91"})
    for (const auto& v : variants) {
      const std::string m = model;
      const double dt = m == "lr91" ? 0.01 : 0.02;
      const Variant var = v;
      CompilerOptions passes = all_passes();
      passes.inline_single_use = v.inline_vars;
      const auto body = [=](auto space, benchmark::State& state) {
        device_steps(space, state, m, dt, Method::RK4, var.mode, passes,
                     std::size_t(state.range(0)), var.steps, var.options);
      };
      const std::string name = std::string("ode/ensemble/") + model + "/rk4/" + v.name;
      if (v.mode == ExecMode::Persistent)
        register_for_each_space(
            name, body, [](benchmark::internal::Benchmark* b) { b->Arg(1 << 12)->MinTime(0.1); });
      else if (v.mode ==
               ExecMode::Fused)  // 2^20: many waves, so the last one's idle share is small
        register_for_each_space(name, body, [](benchmark::internal::Benchmark* b) {
          b->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 18)->Arg(1 << 20)->MinTime(0.1);
        });
      else
        register_for_each_space(name, body, [](benchmark::internal::Benchmark* b) {
          b->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 18)->MinTime(0.1);
        });
    }
}

}  // namespace

void register_ode_suite() {
  register_steps();
  register_teams_variants();
  register_halo();
  register_split();
  register_reference();
  register_passes();
  register_ensembles();
}

}  // namespace hayate::bench
