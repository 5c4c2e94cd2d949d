// problem: ode — a model file compiled to bytecode and interpreted on the chosen backend.
// The driver's step is one output interval of `output.every` integration steps.
#include "ode/ode_problem.hpp"

#include "exec/dispatch.hpp"
#include "io/csv_writer.hpp"
#include "io/input_file.hpp"
#include "io/series_file.hpp"
#include "ode/async_writer.hpp"
#include "ode/engine.hpp"
#include "ode/reference.hpp"
#include "ode/tuning.hpp"
#include "parallel/comm.hpp"
#include "run/guard.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

namespace hayate::ode {

using core::CheckpointReader;
using core::CheckpointWriter;
using core::Config;
using core::RunContext;

bool glob_match(const std::string& pattern, const std::string& name) {
  std::size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string resolve_model_path(const Config& config) {
  const std::string file = config.string("model.file");
  const core::FileOrigin origin{config.where("model.file"), "model.file"};
  // Only looked at (a stat), never opened here: opening a FIFO would wait for a writer.
  std::string path = file;
  if (!file.empty() && file[0] != '/') {
    const std::string input = config.input_file();
    const auto slash = input.find_last_of('/');
    const std::string near =
        slash == std::string::npos ? std::string() : input.substr(0, slash + 1) + file;
    if (!near.empty() && core::path_exists(near))
      path = near;
    else if (!core::path_exists(file))
      config.fail("model.file", fmt::format("cannot open {} (looked next to the input file and "
                                            "in the working directory)",
                                            core::quoted(file, 4 * core::echo_limit)));
  }
  core::check_input_file(path, "model file", core::max_input_file_bytes, origin);
  return path;
}

// compiler.split_sums: "auto" gives -1, else the limit (0: whole sums).
int split_sums_option(const Config& config) {
  const std::string text = config.string("compiler.split_sums");
  if (text == "auto") return -1;
  long long limit = -1;
  std::size_t used = 0;
  try {
    limit = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || limit < 0 || limit > (1 << 20))
    config.fail("compiler.split_sums",
                fmt::format("expected auto, 0 (whole sums) or an integer >= 2, got '{}'", text));
  if (limit == 1)
    config.fail("compiler.split_sums", "a part holds at least 2 terms: use 0 (off) or 2 or more");
  return int(limit);
}

// The model file the input names, with the swept parameters kept as per-member values and long
// sums cut as compiler.split_sums asks (auto: by choose_split_sums with `compiler` in teams mode).
// The model file at `path`; an error inside it (at its own line and column) also names the
// input key that named the file.
FlatModel read_model(const Config& config, const std::string& path, const ModelOptions& options) {
  try {
    return load_model_file(path, options);
  } catch (const core::InputError& e) {
    std::vector<core::Diagnostic> d = e.diagnostics();
    if (d.empty() || d.front().where.file != path) throw;
    d.push_back({config.where("model.file"),
                 "'model.file': names the model file " + core::quoted(path, 4 * core::echo_limit)});
    throw core::InputError(std::move(d));
  }
}

FlatModel load_model(const Config& config, const CompilerOptions& compiler, const Tuning& tuning) {
  ModelOptions mo;
  for (const auto& s : config.records("ensemble.sweep")) mo.swept.push_back(s.string("parameter"));
  const std::string path = resolve_model_path(config);
  try {
    mo.split_sums = split_sums_option(config);
    // Teams mode waits for the longest stream of each phase, which its layout shows. The other
    // modes run more words per thread (persistent), every member in one stream (fused, reference,
    // ast) or per-phase kernels that the count does not predict: they keep the fixed default, so
    // their traces agree with each other.
    if (mo.split_sums < 0 && tuning.mode != RunMode::Teams) mo.split_sums = kDefaultSplitSums;
    if (mo.split_sums < 0) {
      const SplitChoice choice = choose_split_sums(
          [&](int limit) {
            ModelOptions o = mo;
            o.split_sums = limit;
            return read_model(config, path, o);
          },
          compiler);
      mo.split_sums = choice.limit;
      if (!choice.trials.empty() && !config.boolean("output.quiet_model")) {
        std::string tried;
        for (const auto& [limit, words] : choice.trials)
          tried += fmt::format("{}{}: {}", tried.empty() ? "" : ", ", limit, words);
        spdlog::info(
            "compiler.split_sums auto: {} ({} critical words; limit: words {{{}}}, 0 = whole)",
            choice.limit, choice.critical, tried);
      }
    }
    return read_model(config, path, mo);
  } catch (const std::invalid_argument& e) {
    config.fail("ensemble.sweep", e.what());
  }
}

Method method_of(const Config& config) {
  const std::string method = config.string("run.method");
  return method == "rk4" ? Method::RK4 : method == "rk45" ? Method::RK45 : Method::Euler;
}

Tuning tuning_of(const Config& config, const core::BackendTraits& backend) {
  const TuningKeys keys{config.string("tuning.mode"), config.string("tuning.members_per_thread"),
                        config.string("tuning.halo")};
  const auto members = static_cast<std::size_t>(config.integer("ensemble.members"));
  const Method method = method_of(config);
  const Tuning tuning = resolve_tuning(keys, backend, members, method);
  // What auto cannot pick, an input may not ask for either.
  if (method == Method::RK45 && tuning.mode != RunMode::Phases &&
      tuning.mode != RunMode::Reference && tuning.mode != RunMode::Ast)
    config.fail("tuning.mode", "rk45 chooses its steps on the host: use phases, reference or ast");
  if (members > 1 && tuning.mode == RunMode::Teams)
    config.fail("tuning.mode",
                "teams mode runs one model instance: use fused (or phases) for ensembles");
  if (members > 1 && tuning.mode == RunMode::Ast)
    config.fail("tuning.mode", "the AST evaluator runs one ensemble member only");
  // On several ranks the ensemble's members are split among them.
  const int ranks = core::Comm::world().size();
  if (ranks > 1 && members < std::size_t(ranks))
    config.fail("ensemble.members",
                fmt::format("{} member(s) cannot be split over {} ranks: give each rank at least "
                            "one",
                            members, ranks));
  if (ranks > 1 && method == Method::RK45 && tuning.mode == RunMode::Reference)
    config.fail("tuning.mode",
                "the reference interpreter's rk45 runs on one rank: use phases on several");
  return tuning;
}

CompilerOptions compiler_options(const Tuning& tuning) {
  CompilerOptions o = all_passes();
  // Bins (about 4 cells each) and halos only shape teams mode; the other modes keep warps free
  // to span cells.
  const bool teams = tuning.mode == RunMode::Teams;
  o.partitions = teams ? 0 : 1;
  o.halo = teams ? tuning.halo : 0;
  return o;
}

namespace {

// Integration steps to t_end: a whole number of steps of dt.
std::int64_t total_steps_of(const Config& config) {
  const double dt = config.real("run.dt");
  const double t_end = config.real("run.t_end");
  const auto n_steps = static_cast<std::int64_t>(std::llround(t_end / dt));
  if (n_steps < 1) config.fail("run.t_end", "t_end is shorter than one step dt");
  if (std::fabs(double(n_steps) * dt - t_end) > 1e-9 * t_end)
    config.fail("run.dt",
                fmt::format("t_end = {} is not a whole number of steps of dt = {}", t_end, dt));
  return n_steps;
}

// The traced columns: offsets into [states | variables] and their names.
struct TraceColumns {
  std::vector<std::int64_t> offsets;
  std::vector<std::string> names;
  bool needs_eval = false;  // a variable is traced: evaluate before each row
};

TraceColumns trace_columns(const Config& config, const FlatModel& model, std::size_t M) {
  TraceColumns out;
  std::vector<std::string> patterns = config.strings("output.variables");
  if (patterns.empty()) patterns.push_back("*");
  std::vector<std::int64_t> members;
  for (auto m : config.integers("output.members")) {
    if (m < 0 || static_cast<std::size_t>(m) >= M)
      config.fail("output.members",
                  fmt::format("member {} does not exist (ensemble.members = {})", m, M));
    members.push_back(m);
  }
  if (members.empty()) members.push_back(0);
  const std::int64_t nx = static_cast<std::int64_t>(model.n_states() * M);
  for (const auto& pat : patterns) {
    bool any = false;
    const auto pick = [&](const std::vector<std::string>& names, bool state, std::size_t limit) {
      for (std::size_t i = 0; i < limit; ++i) {
        if (!glob_match(pat, names[i])) continue;
        any = true;
        if (!state) out.needs_eval = true;
        for (auto m : members) {
          out.offsets.push_back((state ? 0 : nx) + static_cast<std::int64_t>(i * M) + m);
          out.names.push_back(members.size() > 1 ? fmt::format("{}#{}", names[i], m) : names[i]);
        }
      }
    };
    pick(model.state_names, true, model.n_states());
    if (pat != "*") pick(model.var_names, false, model.n_vars());
    if (!any) {
      std::vector<std::string> all = model.state_names;
      all.insert(all.end(), model.var_names.begin(), model.var_names.end());
      const std::string near = core::nearest(pat, all);
      config.fail("output.variables",
                  fmt::format("{} matches no state or variable of the model{}", core::quoted(pat),
                              near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
  }
  return out;
}

// The value of member m of M of a sweep record {from, to, scale}.
double member_value(const Config& c, std::size_t m, std::size_t M) {
  const double a = c.real("from"), b = c.real("to");
  const double f = M > 1 ? double(m) / double(M - 1) : 0.0;
  if (c.string("scale") == "log") {
    if (a <= 0 || b <= 0) c.fail("scale", "a log scale needs positive 'from' and 'to'");
    return a * std::pow(b / a, f);
  }
  return a + (b - a) * f;
}

// The states each ensemble.initial record sets (every instance of its group).
std::vector<std::vector<std::uint32_t>> initial_states(const Config& config,
                                                       const FlatModel& model) {
  std::vector<std::vector<std::uint32_t>> out;
  for (const auto& c : config.records("ensemble.initial")) {
    const auto it = model.state_groups.find(c.string("state"));
    if (it == model.state_groups.end()) {
      std::vector<std::string> names;
      for (const auto& kv : model.state_groups) names.push_back(kv.first);
      const std::string near = core::nearest(c.string("state"), names);
      c.fail("state", fmt::format("{} is not a state of the model (group.state){}",
                                  core::quoted(c.string("state")),
                                  near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    member_value(c, 0, 2);  // a log scale's bounds
    out.push_back(it->second);
  }
  for (const auto& c : config.records("ensemble.sweep")) member_value(c, 0, 2);
  return out;
}

// The model's states in order, one per line: what a checkpoint's states belong to.
std::string state_list(const FlatModel& model) {
  std::string s;
  for (const auto& name : model.state_names) s += name + "\n";
  return s;
}

// Checks a checkpoint against the input before anything is made from it: the model's states
// (names and count), the ensemble size, run.dt, the step within t_end / dt and the time the
// step's; every state finite, the rk45 trial step positive.
void check_checkpoint(const Config& config, const CheckpointReader& cp) {
  ModelOptions mo;
  for (const auto& s : config.records("ensemble.sweep")) mo.swept.push_back(s.string("parameter"));
  const FlatModel model = read_model(config, resolve_model_path(config), mo);
  const auto M = static_cast<std::uint64_t>(config.integer("ensemble.members"));
  const auto n_states = cp.get<std::uint64_t>("n_states", 0, std::uint64_t(1) << 40);
  const auto members = cp.get<std::uint64_t>("members", 0, std::uint64_t(1) << 40);
  if (n_states != model.n_states())
    core::checkpoint_mismatch(
        config, "model.file", cp,
        fmt::format("holds {} states, the model {}", n_states, model.n_states()));
  if (cp.get_string("states", std::size_t(1) << 30) != state_list(model))
    core::checkpoint_mismatch(config, "model.file", cp,
                              "holds the states of another model (their names differ)");
  if (members != M)
    core::checkpoint_mismatch(config, "ensemble.members", cp,
                              fmt::format("holds {} ensemble members, the input {}", members, M));
  const double dt = config.real("run.dt");
  const double saved_dt = cp.get<double>("dt");
  if (saved_dt != dt)
    core::checkpoint_mismatch(
        config, "run.dt", cp,
        fmt::format("was written with run.dt = {}; a restart keeps the time step", saved_dt));
  const std::int64_t n_steps = total_steps_of(config);
  const auto step = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
  if (step > n_steps)
    core::checkpoint_mismatch(config, "run.t_end", cp,
                              fmt::format("is at t = {}, beyond run.t_end = {}", double(step) * dt,
                                          config.real("run.t_end")));
  const double time = cp.get<double>("time");
  if (time != double(step) * dt)
    cp.fail("time", fmt::format("holds t = {}, but step {} of dt = {} is at t = {}", time, step, dt,
                                double(step) * dt));
  const double h = cp.get<double>("h");
  if (!(h > 0)) cp.fail("h", "holds a step that is not positive");
  cp.check_reals<double>("x", std::size_t(n_states * members));
}

// What the problem needs from an execution path (device engine or host reference).
class Runner {
 public:
  virtual ~Runner() = default;
  virtual void set_states(const std::vector<double>& x) = 0;
  virtual void set_params(const std::vector<double>& p) = 0;
  virtual void advance(std::int64_t first, std::int64_t steps, double dt) = 0;
  virtual void advance_adaptive(double t0, double t1, double& h, double rtol, double atol,
                                AdaptiveStats& stats) = 0;
  virtual void evaluate(double t) = 0;
  virtual std::vector<double> states() = 0;
  // The first state value ([index * M + m]) that is not finite, or -1.
  virtual std::int64_t first_non_finite_state() = 0;
  // Values at offsets into [states | variables] (each [index * M + m]).
  virtual std::vector<double> gather(const std::vector<std::int64_t>& offsets) = 0;
};

template <class Space>
class DeviceRunner final : public Runner {
 public:
  // fall_back: teams mode chosen by tuning.mode auto. Teams need every team resident at once;
  // where the grid barrier times out (another program on the GPU), the call is repeated from
  // the states it started from in phases mode, which needs no co-resident teams, and the run
  // goes on in phases mode.
  DeviceRunner(const Space& space, const Program& prog, std::size_t M, Method method, ExecMode mode,
               const EngineOptions& options, bool fall_back)
      : engine_(space, prog, M, method, mode, options), fall_back_(fall_back) {}
  void set_states(const std::vector<double>& x) override { engine_.set_states(x); }
  void set_params(const std::vector<double>& p) override { engine_.set_params(p); }
  void advance(std::int64_t first, std::int64_t steps, double dt) override {
    if (!fall_back_) return engine_.advance(first, steps, dt);
    const Space& space = engine_.space();
    const auto x = engine_.x();
    if (saved_.extent(0) != x.extent(0))
      saved_ = decltype(saved_)(
          Kokkos::view_alloc(space, "hayate::ode::saved_states", Kokkos::WithoutInitializing),
          x.extent(0));
    Kokkos::deep_copy(space, saved_, x);
    try {
      engine_.advance(first, steps, dt);
    } catch (const CoResidencyError&) {
      spdlog::warn(
          "ode: teams mode could not keep its teams resident at once (another program on the "
          "GPU?); tuning.mode auto goes on in phases mode from step {}",
          first);
      Kokkos::deep_copy(space, engine_.x(), saved_);
      engine_.fall_back_to_phases();
      fall_back_ = false;
      saved_ = decltype(saved_)();
      engine_.advance(first, steps, dt);
    }
  }
  void advance_adaptive(double t0, double t1, double& h, double rtol, double atol,
                        AdaptiveStats& stats) override {
    engine_.advance_adaptive(t0, t1, h, rtol, atol, stats);
  }
  void evaluate(double t) override { engine_.evaluate(t); }
  std::vector<double> states() override { return engine_.states_host(); }
  std::int64_t first_non_finite_state() override {
    return core::first_non_finite(engine_.space(), engine_.x());
  }
  std::vector<double> gather(const std::vector<std::int64_t>& offsets) override {
    using Mem = typename Space::memory_space;
    const Space& space = engine_.space();
    if (offsets.size() != idx_.extent(0)) {
      idx_ = upload<Kokkos::View<std::int64_t*, Mem>>(space, "hayate::ode::trace_index", offsets);
      out_ = Kokkos::View<double*, Mem>(Kokkos::view_alloc(space, "hayate::ode::trace_row"),
                                        std::max<std::size_t>(offsets.size(), 1));
    }
    const auto x = engine_.x();
    const auto v = engine_.v();
    const auto idx = idx_;
    const auto out = out_;
    const std::int64_t nx =
        static_cast<std::int64_t>(engine_.program().n_states * engine_.members());
    Kokkos::parallel_for(
        "hayate::ode::trace_gather", Kokkos::RangePolicy<Space>(space, 0, offsets.size()),
        KOKKOS_LAMBDA(const std::size_t i) {
          const std::int64_t k = idx(i);
          out(i) = k < nx ? x(k) : v(k - nx);
        });
    // The row goes to the host on the engine's instance; the writer thread gets a copy.
    auto host = Kokkos::create_mirror_view(out_);
    Kokkos::deep_copy(space, host, out_);
    space.fence();
    return std::vector<double>(host.data(), host.data() + offsets.size());
  }

 private:
  Engine<Space> engine_;
  bool fall_back_;
  Kokkos::View<double*, typename Space::memory_space> saved_;  // the states before a teams call
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx_;
  Kokkos::View<double*, typename Space::memory_space> out_;
};

class HostRunner final : public Runner {
 public:
  explicit HostRunner(std::unique_ptr<HostIntegrator> integrator, std::size_t n_alg)
      : h_(std::move(integrator)), n_alg_(n_alg) {}
  void set_states(const std::vector<double>& x) override { h_->x() = x; }
  void set_params(const std::vector<double>& p) override {
    std::copy(p.begin(), p.end(),
              h_->v.begin() + static_cast<std::ptrdiff_t>(n_alg_ * h_->members()));
  }
  void advance(std::int64_t first, std::int64_t steps, double dt) override {
    h_->advance(first, steps, dt);
  }
  void advance_adaptive(double t0, double t1, double& h, double rtol, double atol,
                        AdaptiveStats& stats) override {
    h_->advance_adaptive(t0, t1, h, rtol, atol, stats);
  }
  void evaluate(double t) override { h_->evaluate(t); }
  std::vector<double> states() override { return h_->x(); }
  std::int64_t first_non_finite_state() override {
    const auto& x = h_->x();
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isfinite(x[i])) return std::int64_t(i);
    return -1;
  }
  std::vector<double> gather(const std::vector<std::int64_t>& offsets) override {
    const auto nx = static_cast<std::int64_t>(h_->x().size());
    std::vector<double> row;
    for (auto k : offsets) row.push_back(k < nx ? h_->x()[k] : h_->v[k - nx]);
    return row;
  }

 private:
  std::unique_ptr<HostIntegrator> h_;
  std::size_t n_alg_;
};

class OdeProblem final : public core::Problem {
 public:
  OdeProblem(const Config& config, const std::string& backend) {
    const std::string path = resolve_model_path(config);
    const auto sweeps = config.records("ensemble.sweep");
    const Tuning tuning = tuning_of(config, core::backend_traits(backend));
    const bool quiet = config.boolean("output.quiet_model");
    if (tuning.mode_auto && !quiet)
      spdlog::info("tuning.mode auto: {} on {}", run_mode_name(tuning.mode), backend);
    CompilerOptions compiler = compiler_options(tuning);
    model_ = std::make_unique<FlatModel>(load_model(config, compiler, tuning));
    // In teams mode derivative tasks are sunk where the layout's critical path gets shorter.
    if (tuning.mode == RunMode::Teams) {
      compiler.sink_derivatives = sink_shortens(*model_, compiler);
      if (!quiet) spdlog::info("teams: derivative tasks sunk: {}", compiler.sink_derivatives);
    }
    program_ = compile(*model_, compiler);
    M_ = static_cast<std::size_t>(config.integer("ensemble.members"));
    // This rank's members [m0_, m0_ + Ml_) of the ensemble's M_; all of them on one rank.
    for (int r = 0; r < world_.size(); ++r)
      slabs_.push_back(core::row_slab(int(M_), 1, world_.size(), r));
    m0_ = std::size_t(slabs_[std::size_t(world_.rank())].first);
    Ml_ = std::size_t(slabs_[std::size_t(world_.rank())].count);
    dt_ = config.real("run.dt");
    n_steps_ = total_steps_of(config);
    every_ = config.integer("output.every");
    blocks_ = (n_steps_ + every_ - 1) / every_;
    dump_every_ = config.integer("output.dump_every");
    rows_per_batch_ = static_cast<std::size_t>(config.integer("output.batch_rows"));
    method_ = method_of(config);
    rtol_ = config.real("run.rtol");
    atol_ = config.real("run.atol");
    h_ = dt_;
    if (tuning.mode == RunMode::Reference) {
      runner_ = std::make_unique<HostRunner>(
          std::make_unique<ReferenceInterpreter>(program_, Ml_, method_), program_.n_alg);
    } else if (tuning.mode == RunMode::Ast) {
      runner_ = std::make_unique<HostRunner>(std::make_unique<AstIntegrator>(*model_, method_),
                                             program_.n_alg);
    } else {
      const ExecMode em = tuning.mode == RunMode::Persistent ? ExecMode::Persistent
                          : tuning.mode == RunMode::Fused    ? ExecMode::Fused
                          : tuning.mode == RunMode::Teams    ? ExecMode::Teams
                                                             : ExecMode::Phases;
      EngineOptions eo;
      eo.fused_width = tuning.members_per_thread;
      eo.teams_host_halo = tuning.host_halo;
      // rk45 takes one step for the whole ensemble: its error sums over every rank's members.
      if (world_.distributed())
        eo.combine_error = [world = &world_](double(&terms)[2]) {
          world->sum(terms, 2);
          // Every rank takes the first rank's sums, so all accept and reject alike.
          world->broadcast(terms, sizeof terms);
        };
      // Teams chosen by auto falls back to phases where its teams cannot all be resident.
      const bool fall_back = tuning.mode_auto && em == ExecMode::Teams;
      runner_ = core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<Runner> {
        return std::make_unique<DeviceRunner<decltype(space)>>(space, program_, Ml_, method_, em,
                                                               eo, fall_back);
      });
    }
    select_outputs(config);
    initial_values(config, sweeps);
    if (!config.boolean("output.quiet_model"))
      spdlog::info(
          "{}: {} states, {} algebraic variables, {} expressions ({} instructions) in {} levels -> "
          "{} phases, {} of {} warps unified, stack {}",
          path, program_.n_states, program_.n_alg, program_.n_equations, program_.n_instructions,
          program_.n_levels, program_.n_phases(), program_.unified_groups(), program_.n_groups(),
          program_.max_stack);
  }

  // A run that stopped early still hands the rows it computed to trace.csv.
  ~OdeProblem() override {
    try {
      flush_output();
    } catch (const std::exception& e) {
      spdlog::warn("ode: while stopping: {}", e.what());
    }
  }

  void initialize(RunContext& ctx) override {
    runner_->set_states(x0_);
    runner_->set_params(params_);
    step_ = 0;
    open_output(ctx, std::nullopt);
  }

  void restore(const CheckpointReader& cp, RunContext& ctx) override {
    check_checkpoint(ctx.config, cp);
    step_ = cp.get<std::int64_t>("step", 0, n_steps_);
    h_ = cp.get<double>("h");
    runner_->set_states(own_members(cp.get_vector<double>("x", program_.n_states * M_)));
    runner_->set_params(params_);
    open_output(ctx, step_);
  }

  void save(CheckpointWriter& cp) const override {
    cp.put<std::uint64_t>("n_states", program_.n_states);
    cp.put<std::uint64_t>("members", M_);
    cp.put_string("states", state_list(*model_));
    cp.put<double>("dt", dt_);
    cp.put<std::int64_t>("step", step_);
    cp.put<double>("time", double(step_) * dt_);
    cp.put<double>("h", h_);
    // Each rank's members are its part ([state * members + m] on every rank and in the file):
    // a restart may take any number of ranks.
    const std::vector<double> mine = runner_->states();
    cp.put_distributed("x", mine.data(), sizeof(double), Ml_, program_.n_states);
  }

  std::int64_t current_step() const override { return (step_ + every_ - 1) / every_; }
  std::int64_t total_steps() const override { return blocks_; }

  void advance(RunContext& ctx) override {
    const std::int64_t steps = std::min(every_, n_steps_ - step_);
    {
      auto scope = ctx.timers.scope("integrate");
      if (method_ == Method::RK45) {
        try {
          runner_->advance_adaptive(double(step_) * dt_, double(step_ + steps) * dt_, h_, rtol_,
                                    atol_, stats_);
        } catch (const core::RuntimeFailure& e) {
          // The step-size underflow: every rank takes the same steps, so every rank meets it.
          if (world_.distributed()) throw core::CollectiveFailure(e.what());
          throw;
        }
      } else
        runner_->advance(step_, steps, dt_);
    }
    step_ += steps;
    check_states();
  }

  void output(RunContext& ctx, bool final) override {
    auto scope = ctx.timers.scope("output");
    record();
    if (dump_every_ > 0 && (step_ % (dump_every_ * every_) == 0 || final)) dump();
    if (final) {
      flush_output();
      if (method_ == Method::RK45 && !ctx.quiet)
        spdlog::info("rk45: {} steps accepted, {} rejected, last step {:.4g}", stats_.accepted,
                     stats_.rejected, h_);
    }
  }

  void check_state(RunContext&) override { check_states(); }

  // The trace rows computed so far and the state dumps, through the writer thread to disk.
  void flush_output() override {
    submit_batch();
    writer_.flush();
  }

 private:
  // After every output interval: one reduction over all states of all members (and ranks).
  void check_states() {
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    const std::int64_t i = runner_->first_non_finite_state();  // [state * Ml + local member]
    std::int64_t key = none;                                   // [state * M + member]
    if (i >= 0) key = std::int64_t((std::size_t(i) / Ml_) * M_ + m0_ + std::size_t(i) % Ml_);
    key = world_.min(key);
    if (key == none) return;
    const std::size_t k = std::size_t(key);
    throw core::CollectiveFailure(fmt::format(
        "ode: state {} of member {} is not finite at step {} (t = {}); reduce run.dt (rk45: "
        "run.rtol)",
        model_->state_names[k / M_], k % M_, step_, double(step_) * dt_));
  }

  void select_outputs(const Config& config) {
    TraceColumns t = trace_columns(config, *model_, M_);
    columns_ = std::move(t.names);
    needs_eval_ = t.needs_eval;
    // Each column belongs to the rank holding its member; its offset into that rank's
    // [states | variables], each [index * Ml + local member].
    const std::int64_t nx = std::int64_t(program_.n_states * M_);
    columns_of_rank_.assign(slabs_.size(), {});
    for (std::size_t c = 0; c < t.offsets.size(); ++c) {
      const std::int64_t k = t.offsets[c];
      const bool state = k < nx;
      const std::size_t rel = std::size_t(state ? k : k - nx);
      const std::size_t index = rel / M_, m = rel % M_;
      std::size_t r = 0;
      while (m >= std::size_t(slabs_[r].first + slabs_[r].count)) ++r;
      columns_of_rank_[r].push_back(c);
      if (int(r) != world_.rank()) continue;
      const std::size_t local = index * Ml_ + (m - m0_);
      offsets_.push_back(std::int64_t(state ? local : program_.n_states * Ml_ + local));
    }
  }

  // The members' values of this rank from values of every member ([index * M + m]).
  std::vector<double> own_members(const std::vector<double>& all) const {
    if (Ml_ == M_) return all;
    const std::size_t n = all.size() / M_;
    std::vector<double> mine(n * Ml_);
    for (std::size_t i = 0; i < n; ++i)
      std::copy_n(all.begin() + std::ptrdiff_t(i * M_ + m0_), Ml_,
                  mine.begin() + std::ptrdiff_t(i * Ml_));
    return mine;
  }

  // Every member's states ([state * M + m]) on the first rank, gathered from all ranks; empty on
  // the others.
  std::vector<double> all_states() const {
    std::vector<double> mine = runner_->states();
    if (!world_.distributed()) return mine;
    const std::size_t n = program_.n_states;
    std::vector<std::size_t> counts;
    for (const auto& slab : slabs_) counts.push_back(n * std::size_t(slab.count) * sizeof(double));
    std::vector<double> parts(world_.root() ? n * M_ : 0), all(parts.size());
    world_.gather(mine.data(), mine.size() * sizeof(double), parts.data(), counts);
    if (!world_.root()) return {};
    std::size_t at = 0;
    for (const auto& slab : slabs_) {
      const std::size_t count = std::size_t(slab.count);
      for (std::size_t i = 0; i < n; ++i, at += count)
        std::copy_n(parts.begin() + std::ptrdiff_t(at), count,
                    all.begin() + std::ptrdiff_t(i * M_ + std::size_t(slab.first)));
    }
    return all;
  }

  // A trace row on the first rank from the columns each rank holds; empty on the others.
  std::vector<double> trace_row(const std::vector<double>& mine) const {
    if (!world_.distributed()) return mine;
    std::vector<std::size_t> counts;
    for (const auto& cols : columns_of_rank_) counts.push_back(cols.size() * sizeof(double));
    std::vector<double> parts(world_.root() ? columns_.size() : 0), row(parts.size());
    world_.gather(mine.data(), mine.size() * sizeof(double), parts.data(), counts);
    std::size_t at = 0;
    if (world_.root())
      for (const auto& cols : columns_of_rank_)
        for (const std::size_t c : cols) row[c] = parts[at++];
    return row;
  }

  // This rank's members' initial states and swept parameters (member m0_ + l of M_ at l).
  void initial_values(const Config& config, const std::vector<Config>& sweeps) {
    x0_.resize(program_.n_states * Ml_);
    for (std::size_t i = 0; i < program_.n_states; ++i)
      for (std::size_t l = 0; l < Ml_; ++l) x0_[i * Ml_ + l] = model_->state_init[i];
    const auto initial = config.records("ensemble.initial");
    const auto states = initial_states(config, *model_);
    for (std::size_t r = 0; r < initial.size(); ++r)
      for (auto i : states[r])
        for (std::size_t l = 0; l < Ml_; ++l)
          x0_[i * Ml_ + l] = member_value(initial[r], m0_ + l, M_);
    params_.resize(model_->param_values.size() * Ml_);
    for (std::size_t j = 0; j < sweeps.size(); ++j)
      for (std::size_t l = 0; l < Ml_; ++l)
        params_[j * Ml_ + l] = member_value(sweeps[j], m0_ + l, M_);
  }

  // Fresh files, or (resume_after: the checkpoint's step) the folder's trace and dumps
  // continued. The first rank writes them; every rank learns which dump the folder kept.
  void open_output(RunContext& ctx, std::optional<std::int64_t> resume_after) {
    world_.on_root([&] { open_files(ctx, resume_after); });
    if (!world_.distributed()) return;
    std::int64_t kept = dump_last_kept_ ? *dump_last_kept_ : -1;
    world_.broadcast(&kept, sizeof kept);
    if (kept >= 0) dump_last_kept_ = kept;
  }

  void open_files(RunContext& ctx, std::optional<std::int64_t> resume_after) {
    std::vector<std::string> header{"step", "t"};
    header.insert(header.end(), columns_.begin(), columns_.end());
    csv_ =
        std::make_shared<core::CsvWriter>(ctx.outputs, ctx.path("trace.csv"), header, resume_after);
    if (dump_every_ > 0) {
      // "HYTODE01", u64 states, u64 members, then per dump: i64 step, f64 t, the states.
      std::string head = "HYTODE01";
      const std::uint64_t dims[2] = {program_.n_states, M_};
      head.append(reinterpret_cast<const char*>(dims), sizeof dims);
      const std::uint64_t record = 16 + 8 * program_.n_states * M_;
      core::SeriesFile::Keep keep;
      dump_last_kept_.reset();
      if (resume_after)
        keep = [&, record, after = *resume_after](std::istream& in, const std::string& path) {
          std::string have(head.size(), '\0');
          if (!in.read(have.data(), std::streamsize(have.size()))) return std::uint64_t(0);
          if (have != head)
            throw core::InputError(core::SourceLocation{path, 0, 0},
                                   "the state dumps to continue hold another model or ensemble; "
                                   "restart into another output folder or move the file away");
          std::uint64_t kept = head.size();
          std::vector<char> dump(record);
          while (in.read(dump.data(), std::streamsize(record))) {
            std::int64_t step = 0;
            std::memcpy(&step, dump.data(), sizeof step);
            if (step > after) break;
            kept += record;
            dump_last_kept_ = step;
          }
          return kept;
        };
      dump_file_ = ctx.outputs.open(ctx.path("states.bin"), true, head, keep);
      if (dump_file_->kept() == 0) dump_last_kept_.reset();
    }
  }

  void record() {
    const double t = double(step_) * dt_;
    if (needs_eval_) runner_->evaluate(t);
    const auto row = trace_row(runner_->gather(offsets_));
    std::int64_t bad = -1;
    for (std::size_t c = 0; c < row.size() && bad < 0; ++c)
      if (!std::isfinite(row[c])) bad = std::int64_t(c);
    world_.broadcast(&bad, sizeof bad);  // the first rank has the row
    if (bad >= 0)
      throw core::CollectiveFailure(
          fmt::format("ode: output '{}' is not finite at step {} (t = {}); reduce run.dt (rk45: "
                      "run.rtol)",
                      columns_[std::size_t(bad)], step_, t));
    if (!world_.root()) return;
    batch_.push_back(double(step_));
    batch_.push_back(t);
    batch_.insert(batch_.end(), row.begin(), row.end());
    if (batch_.size() >= rows_per_batch_ * (columns_.size() + 2)) submit_batch();
  }

  void submit_batch() {
    if (batch_.empty()) return;
    auto csv = csv_;
    const std::size_t width = columns_.size() + 2;
    writer_.submit([csv, width, rows = std::move(batch_)] {
      std::vector<core::CsvValue> values(width);
      for (std::size_t r = 0; r < rows.size(); r += width) {
        values[0] = static_cast<std::int64_t>(rows[r]);
        for (std::size_t c = 1; c < width; ++c) values[c] = rows[r + c];
        csv->row(values);
      }
    });
    batch_.clear();
  }

  void dump() {
    if (dump_last_kept_ && step_ <= *dump_last_kept_) return;  // the earlier run's dump
    std::vector<double> states = all_states();
    if (!world_.root()) return;
    auto file = dump_file_;
    const std::int64_t step = step_;
    const double t = double(step_) * dt_;
    writer_.submit([file, step, t, x = std::move(states)] {
      auto& out = file->stream();
      out.write(reinterpret_cast<const char*>(&step), sizeof step);
      out.write(reinterpret_cast<const char*>(&t), sizeof t);
      out.write(reinterpret_cast<const char*>(x.data()),
                std::streamsize(x.size() * sizeof(double)));
      file->end_record();
    });
  }

  const core::Comm& world_ = core::Comm::world();
  std::unique_ptr<FlatModel> model_;
  Program program_;
  std::unique_ptr<Runner> runner_;
  std::size_t M_ = 1;                                      // the ensemble's members
  std::size_t m0_ = 0, Ml_ = 1;                            // this rank's: [m0_, m0_ + Ml_)
  std::vector<core::RowSlab> slabs_;                       // every rank's members
  std::vector<std::vector<std::size_t>> columns_of_rank_;  // trace columns by owning rank
  double dt_ = 0;
  std::int64_t n_steps_ = 0, every_ = 1, blocks_ = 0, dump_every_ = 0, step_ = 0;
  std::size_t rows_per_batch_ = 256;
  Method method_ = Method::Euler;
  double rtol_ = 0, atol_ = 0, h_ = 0;  // rk45 tolerances and trial step
  AdaptiveStats stats_;
  std::vector<double> x0_, params_;
  std::vector<std::int64_t> offsets_;
  std::vector<std::string> columns_;
  bool needs_eval_ = false;
  std::shared_ptr<core::CsvWriter> csv_;
  std::shared_ptr<core::SeriesFile> dump_file_;
  std::optional<std::int64_t> dump_last_kept_;  // the last dump kept from the earlier run
  std::vector<double> batch_;
  AsyncWriter writer_;
};

void declare(core::Schema& s) {
  s.section(
      "model",
      "The model file (a separate YAML: modules, network, connections; see docs/user/ode.md)");
  s.string("model.file", "Model file; a relative path is looked up next to this input first");
  s.section("run", "Integration");
  s.choice(
       "run.method", {"euler", "rk4", "rk45"},
       "Integrator: forward Euler, classic 4th-order Runge-Kutta, or adaptive Dormand-Prince 5(4)")
      .defaults("euler");
  s.real("run.dt",
         "Time step (model time units, ms for the bundled models); rk45: the first trial step and "
         "the unit of output.every")
      .above(0);
  s.real("run.rtol", "rk45: relative tolerance").defaults(1e-6).above(0);
  s.real("run.atol", "rk45: absolute tolerance").defaults(1e-8).above(0);
  s.real("run.t_end", "End time; must be a whole number of steps").above(0);
  s.section("compiler", "Model compilation");
  s.string("compiler.split_sums",
           "Sums with more than this many computed terms (not bare reads) become partial-sum "
           "variables evaluated in parallel lanes and summed where the sum was: an integer >= 2, "
           "0 to keep every sum whole, or auto (teams mode: the limit whose layout has the "
           "shortest critical path, whole sums unless a cut shortens it; other modes: 8). The "
           "parts change the order of the additions: an integer gives every mode the same sums")
      .defaults("auto");
  s.moved("run.mode", "tuning.mode");
  s.moved("run.members_per_thread", "tuning.members_per_thread");
  s.moved("compiler.halo", "tuning.halo");
  const char* pass = "the compiler always runs this pass (each made the device kernels faster)";
  for (const char* key : {"compiler.fold", "compiler.merge", "compiler.reorder", "compiler.pad",
                          "compiler.unify", "compiler.inline"})
    s.removed(key, pass);
  s.removed("compiler.merge_max_length",
            "a merged stream is at most 64 instructions longer than its phase's longest");
  const char* layout = "teams layouts always make these words (slower without them on GPUs)";
  for (const char* key :
       {"compiler.pairs", "compiler.fold_sums", "compiler.affine", "compiler.affine_pairs",
        "compiler.pair_takes", "compiler.compare_select"})
    s.removed(key, layout);
  s.removed("compiler.place",
            "teams layouts always place each phase's longest streams on separate warp schedulers");
  s.removed("compiler.sink",
            "teams mode sinks derivative tasks where its layout's critical path gets shorter");
  s.removed("compiler.partitions",
            "teams mode always bins about 4 copies of the most repeated equation per team");
  s.section("ensemble", "Many copies of the model with different parameters or initial values");
  s.integer("ensemble.members", "Number of ensemble members M").defaults(1).range(1, 1 << 26);
  const auto declare_sweep = [](core::Section& r) {
    r.real("from", "Value of member 0");
    r.real("to", "Value of member M-1");
    r.choice("scale", {"linear", "log"}, "Spacing between members").defaults("linear");
  };
  s.records(
       "ensemble.sweep",
       "Parameters that vary across members: {parameter: group.name, from, to, scale}",
       [&](core::Section& r) {
         r.string(
             "parameter",
             "Parameter as group.name (one value per member, shared by the group's instances)");
         declare_sweep(r);
       })
      .defaults("[]");
  s.records("ensemble.initial",
            "Initial values that vary across members: {state: group.name, from, to, scale}",
            [&](core::Section& r) {
              r.string("state", "State as group.name (every instance of the group)");
              declare_sweep(r);
            })
      .defaults("[]");
  s.section("output", "trace.csv and full-state dumps");
  s.integer("output.every", "Integration steps per trace row (and per driver step)")
      .defaults(100)
      .at_least(1);
  s.strings("output.variables", "States or variables to trace; '*' wildcards; empty = every state")
      .defaults("[]");
  s.integers("output.members", "Ensemble members to trace (empty = member 0)").defaults("[]");
  s.integer("output.dump_every",
            "Write every state to states.bin each this many trace rows (0 = never)")
      .defaults(0)
      .at_least(0);
  s.integer("output.batch_rows", "Trace rows handed to the writer thread at once")
      .defaults(256)
      .at_least(1);
  s.boolean("output.quiet_model", "Do not log the compiled model's statistics").defaults(false);
  s.section("tuning",
            "How the model runs on the backend; results are the same beyond rounding (see "
            "docs/dev/ode.md)");
  s.choice("tuning.mode", {"auto", "phases", "persistent", "fused", "teams", "reference", "ast"},
           "phases: one kernel per phase of the level schedule; persistent: all steps of an "
           "output interval in one kernel, one team per member; fused: all steps in one kernel, "
           "one thread per ensemble member; teams: all steps in one kernel, one team per bin of "
           "cells (one model, not rk45); reference: the serial bytecode interpreter; ast: the "
           "serial AST evaluator (one member). auto: rk45 -> phases; ensembles of more than one "
           "member -> fused; one model on a GPU -> teams (phases if its teams cannot all be "
           "resident at once); one model on CPU threads -> phases")
      .defaults("auto");
  s.choice("tuning.members_per_thread", {"auto", "1", "2", "4"},
           "fused: ensemble members each thread interprets together, sharing the decode of every "
           "instruction. auto: 4 on CPU threads; on GPUs the largest of 4 and 2 that leaves 384 "
           "threads per multiprocessor, else 1")
      .defaults("auto");
  s.choice("tuning.halo", {"auto", "0", "1", "2", "3", "4", "6", "8", "12", "16"},
           "teams: rings of neighbouring cells each team also evaluates, so teams exchange states "
           "every halo + 1 sweeps instead of every sweep; the widest halo up to this that fits "
           "in shared memory is taken. auto: 8 on GPUs, 0 on CPU threads (where the extra cells "
           "cost their full time)")
      .defaults("auto");
}

}  // namespace

void register_problem(core::Registry& registry) {
  core::declare_distributed("ode");  // ensembles: members split over the ranks
  registry.add(core::ProblemInfo{
      "ode",
      "Interpreted ODE models: model language -> bytecode, level-scheduled device interpreter",
      declare,
      [](const Config& config, const std::string& backend) -> std::unique_ptr<core::Problem> {
        return std::make_unique<OdeProblem>(config, backend);
      },
      // `hayate check` and `run` also parse and compile the model file the input names, in
      // the mode the input names or auto picks for the backend the run takes (its traits need
      // no running backend), and check the trace columns and ensemble records against it.
      [](const Config& config, const std::string& backend) {
        const Tuning tuning = tuning_of(config, core::backend_traits(backend));
        const CompilerOptions compiler = compiler_options(tuning);
        const FlatModel model = load_model(config, compiler, tuning);
        compile(model, compiler);
        total_steps_of(config);
        trace_columns(config, model, static_cast<std::size_t>(config.integer("ensemble.members")));
        initial_states(config, model);
      },
      check_checkpoint});
}

}  // namespace hayate::ode
