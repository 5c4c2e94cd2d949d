#pragma once
// The device interpreter: an Engine holds a compiled program's device copy and the integrator's
// buffers, and advances the model in one of four modes (kernels.hpp: per-phase, persistent and
// fused; teams_kernels.hpp: teams).
#include "config/error.hpp"
#include "exec/exec_traits.hpp"
#include "exec/instantiate.hpp"
#include "ode/adaptive.hpp"
#include "ode/interp.hpp"
#include "ode/kernels.hpp"
#include "ode/teams.hpp"
#include "ode/teams_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hayate::ode {

enum class ExecMode { Phases, Persistent, Fused, Teams };

// Where the fused kernel keeps each member's state buffers and variables: team scratch memory
// (when a team's fits), global memory, or the engine's choice: scratch on GPUs when the shared
// memory of a multiprocessor holds at least 12 warps' worth of teams of 64 or more threads,
// global memory on host threads.
enum class FusedState { Auto, Scratch, Global };

// Choices below the mode. The defaults are what runs use; tests and benchmarks set the others.
struct EngineOptions {
  FusedState fused_state = FusedState::Auto;  // fused: where the members' working sets live
  int fused_members = 0;      // fused: members per team (0 = the most that fit, 128 threads)
  bool teams_scratch = true;  // teams: each team's variables in team scratch memory when they fit
  // fused: members per thread, 1, 2 or 4; 0 = by the backend and the ensemble's size (what
  // tuning.members_per_thread: auto gives)
  int fused_width = 0;
  bool teams_program = true;  // teams: the team's program and every value it reads in scratch too
  // teams on host backends: use the program's halo (one team per bin, a kernel per block). Off by
  // default: on CPU threads the halo's extra cells cost their full time; an explicit tuning.halo
  // and the tests (to check the halo layouts on every backend) switch it on.
  bool teams_host_halo = false;
  // teams: try the table-free layout (lane-offset words, direct pairs; TeamsLayout::direct)
  // before the table layout of each halo width, not only where the table one does not fit (the
  // tests, to run it on every backend).
  bool teams_direct_first = false;
  // rk45: adds {sum of squared scaled errors, number of terms} of the other ensemble members
  // sharing the step (an ensemble split over ranks), so that every part takes the same step.
  std::function<void(double (&)[2])> combine_error;
};

// Error of a teams-mode run whose teams were not all resident at once (grid barrier timed out).
struct CoResidencyError : core::RuntimeFailure {
  using core::RuntimeFailure::RuntimeFailure;
};

template <class Space>
class Engine {
 public:
  using MemSpace = typename Space::memory_space;
  using View = Kokkos::View<double*, MemSpace>;
  using Traits = core::ExecTraits<Space>;
  static constexpr bool on_gpu = Traits::is_gpu;
  // Vector lanes of a team thread: a program's kWarp lanes in lockstep on a GPU, a loop on CPUs.
  static constexpr int lanes = Traits::vector_length;
  static_assert(lanes == 1 || lanes == kWarp, "a vector loop runs a group's lanes");

  // Every kernel, copy and allocation of the engine goes to `space`.
  Engine(const Space& space, const Program& prog, std::size_t members, Method method, ExecMode mode,
         const EngineOptions& options = {})
      : space_(space),
        prog_(prog),
        M_(members),
        method_(method),
        mode_(mode),
        options_(options),
        dev_(space, prog),
        v_(Kokkos::view_alloc(space, "hayate::ode::v"),
           std::max<std::size_t>(prog.n_vars * members, 1)),
        f_(Kokkos::view_alloc(space, "hayate::ode::f"),
           std::max<std::size_t>(prog.n_states * members, 1)) {
    const std::size_t n = std::max<std::size_t>(prog.n_states * members, 1);
    const char* names[4] = {"hayate::ode::x", "hayate::ode::y1", "hayate::ode::y2",
                            "hayate::ode::acc"};
    for (int i = 0; i < 4; ++i)
      bufs_[i] = View(Kokkos::view_alloc(space, std::string(names[i])),
                      (i < 2 || method == Method::RK4) ? n : 1);
    if (method == Method::RK45) {
      for (auto& k : k_) k = View(Kokkos::view_alloc(space, "hayate::ode::dp_k"), n);
      for (auto& b : dp_) b = View(Kokkos::view_alloc(space, "hayate::ode::dp_buffer"), n);
    }
    if (mode == ExecMode::Teams) {
      if (members != 1) throw std::logic_error("ode: teams mode runs one model instance");
      lay_out_teams();
    }
    if (!prog.constant_vars.empty()) {
      auto v = Kokkos::create_mirror_view(v_);
      for (const auto& [index, value] : prog.constant_vars)
        for (std::size_t m = 0; m < members; ++m) v(index * members + m) = value;
      Kokkos::deep_copy(space_, v_, v);
    }
    space_.fence();
  }

  const Space& space() const { return space_; }
  ExecMode mode() const { return mode_; }
  std::size_t members() const { return M_; }
  // Teams mode: steps between exchanges of the halo layout (0: a whole launch), -1 without one.
  std::int64_t teams_block_steps() const { return halo_steps_; }
  int teams_halo() const { return halo_steps_ < 0 ? 0 : teams_halo_; }
  bool teams_direct() const { return teams_direct_; }
  const Program& program() const { return prog_; }
  View x() const { return bufs_[0]; }
  View v() const { return v_; }
  View f() const { return f_; }

  // Teams mode whose teams could not all be resident (CoResidencyError): later steps run one
  // kernel per phase, which needs no co-resident teams. The states are those before the failed
  // call only if the caller put them back (set_states).
  void fall_back_to_phases() { mode_ = ExecMode::Phases; }

  void set_states(const std::vector<double>& host) { copy_in(bufs_[0], host); }
  // Values of the swept parameters, [j * M + m].
  void set_params(const std::vector<double>& host) {
    const std::size_t n = (prog_.n_vars - prog_.n_alg) * M_;
    if (host.size() != n) throw std::logic_error("ode: wrong number of swept parameter values");
    if (n == 0) return;
    auto sub = Kokkos::subview(v_, std::make_pair(prog_.n_alg * M_, prog_.n_vars * M_));
    auto mirror = Kokkos::create_mirror_view(sub);
    std::copy(host.begin(), host.end(), mirror.data());
    Kokkos::deep_copy(space_, sub, mirror);
    space_.fence();
  }
  std::vector<double> states_host() const { return copy_out(bufs_[0]); }
  std::vector<double> vars_host() const { return copy_out(v_); }
  std::vector<double> f_host() const { return copy_out(f_); }

  // Steps [first_step, first_step + steps); time of step n is n * dt.
  void advance(std::int64_t first_step, std::int64_t steps, double dt) {
    if (steps <= 0) return;
    if (method_ == Method::RK45) throw std::logic_error("ode: rk45 steps with advance_adaptive");
    if (mode_ == ExecMode::Persistent) return persistent(first_step, steps, dt);
    if (mode_ == ExecMode::Fused) return fused(first_step, steps, dt);
    if (mode_ == ExecMode::Teams) return teams(first_step, steps, dt);
    for (std::int64_t n = 0; n < steps; ++n) {
      double* ptr[4] = {bufs_[0].data(), bufs_[1].data(), bufs_[2].data(), bufs_[3].data()};
      const int r = step_schedule(method_, double(first_step + n) * dt, dt, ptr, HostLaunch{this});
      std::swap(bufs_[0], bufs_[r]);
    }
  }

  // Adaptive Dormand-Prince 5(4) from t0 to t1 (per-phase kernels); h is the trial step.
  void advance_adaptive(double t0, double t1, double& h, double rtol, double atol,
                        AdaptiveStats& stats) {
    if (method_ != Method::RK45 || mode_ != ExecMode::Phases)
      throw std::logic_error("ode: advance_adaptive needs method rk45 in phases mode");
    dp_integrate(
        t0, t1, h, stats,
        [&](double t, double dt) {
          double* k[7];
          for (int j = 0; j < 7; ++j) k[j] = k_[j].data();
          double* b[4] = {dp_[0].data(), dp_[1].data(), dp_[2].data(), dp_[3].data()};
          dp_attempt(t, dt, bufs_[0].data(), k, b, atol, rtol, HostLaunch{this});
          return error_norm();
        },
        [&] { std::swap(bufs_[0], dp_[2]); });
  }

  // RMS of the scaled error estimates of the last rk45 attempt.
  double error_norm() const;

  // Algebraic variables and derivatives at the current state: f and v are up to date after it.
  void evaluate(double t) { HostLaunch{this}(bufs_[0].data(), t, AssignFunction{f_.data()}); }

  // Runs one phase with policy `assign` (exposed for per-phase verification).
  template <class Assign>
  void launch_phase(int phase, const double* in, double t, const Assign& assign) const {
    const int g0 = dev_.phase_begin_host[phase];
    const std::size_t groups = std::size_t(dev_.phase_begin_host[phase + 1] - g0);
    const std::size_t blocks = (M_ + kWarp - 1) / kWarp;
    const std::size_t units = M_ == 1 ? groups : groups * kWarp * blocks;
    if (units == 0) return;
    const int team = on_gpu ? 4 : 1;
    const PhaseKernel<Space, Assign> k{
        dev_.ref(), StateRef{in, v_.data(), t, M_}, assign, g0, units, blocks, team};
    Kokkos::parallel_for(
        "hayate::ode::phase",
        Kokkos::TeamPolicy<Space>(space_, int((units + team - 1) / team), team, lanes), k);
  }

 private:
  // Host-side sweep: one kernel per phase.
  struct HostLaunch {
    const Engine* e;
    template <class Assign>
    void operator()(const double* in, double t, const Assign& assign) const {
      for (std::size_t p = 0; p < e->prog_.n_phases(); ++p) e->launch_phase(int(p), in, t, assign);
    }
  };

  void persistent(std::int64_t first_step, std::int64_t steps, double dt) {
    PersistentKernel<Space> k{dev_.ref(),
                              dev_.phase_begin.data(),
                              int(prog_.n_phases()),
                              method_,
                              {bufs_[0].data(), bufs_[1].data(), bufs_[2].data(), bufs_[3].data()},
                              v_.data(),
                              M_,
                              first_step,
                              steps,
                              dt};
    int team = 1;
    if (on_gpu) {
      Kokkos::TeamPolicy<Space> probe(space_, int(M_), 1, lanes);
      const int max_team = probe.team_size_max(k, Kokkos::ParallelForTag());
      team = int(std::min<std::size_t>(std::max<std::size_t>(prog_.max_groups_per_phase(), 1),
                                       std::size_t(max_team)));
    }
    Kokkos::parallel_for("hayate::ode::persistent",
                         Kokkos::TeamPolicy<Space>(space_, int(M_), team, lanes), k);
    // The kernel swapped its pointers once per step; mirror that on the views.
    for (std::int64_t n = 0; n < steps; ++n)
      std::swap(bufs_[0], bufs_[method_ == Method::Euler ? 1 : 3]);
  }

  // Members per thread of the fused kernel (tuning.members_per_thread: auto). The interpreter's
  // decode and dispatch bound the ensembles, and a thread that runs W members pays them once per
  // W evaluations (twice as fast at W = 4 on GPUs and CPU threads alike). On GPUs W shrinks
  // while fewer than 384 threads per multiprocessor would be left.
  int fused_width() const {
    if (options_.fused_width > 0) return options_.fused_width;
    if (!on_gpu) return 4;
    const std::size_t enough = 384 * std::size_t(Traits::multiprocessors(space_));
    for (int w : {4, 2})
      if (M_ / std::size_t(w) >= enough) return w;
    return 1;
  }

  void fused(std::int64_t first_step, std::int64_t steps, double dt) {
    switch (fused_width()) {
      case 4:
        return fused_width_of<4>(first_step, steps, dt);
      case 2:
        return fused_width_of<2>(first_step, steps, dt);
      default:
        return fused_width_of<1>(first_step, steps, dt);
    }
  }

  // Whether teams of `threads` threads whose scratch is `bytes` go to scratch memory.
  bool fused_in_scratch(int threads, std::size_t bytes) const {
    if (bytes > Traits::team_scratch_max()) return false;
    switch (options_.fused_state) {
      case FusedState::Scratch:
        return true;
      case FusedState::Global:
        return false;
      default:
        if (!on_gpu || threads < 64) return false;
        return Traits::shared_memory_per_multiprocessor(space_) / (bytes + 1024) *
                   std::size_t(threads) >=
               12 * std::size_t(kWarp);
    }
  }

  // Full teams of W members per thread, then the members left over at width 1.
  template <int W>
  void fused_width_of(std::int64_t first_step, std::int64_t steps, double dt) {
    const std::size_t n_bufs = method_ == Method::Euler ? 2 : 4;
    const std::size_t words =
        FusedKernel<Space, W>::words(prog_.n_states, prog_.serial_vars.size(), n_bufs) *
        sizeof(double);
    const std::size_t limit = Traits::team_scratch_max();
    int threads = 1;
    if (on_gpu) {
      const int max_team = Kokkos::TeamPolicy<Space>(space_, 1, 1, 1)
                               .team_size_max(fused_kernel<W>(0, 1, true, first_step, steps, dt),
                                              Kokkos::ParallelForTag());
      threads = options_.fused_members > 0 ? std::max(1, options_.fused_members / W) : 128;
      threads = std::max(1, std::min(threads, max_team));
    }
    if (options_.fused_state != FusedState::Global && options_.fused_members == 0)
      while (threads > 32 && std::size_t(threads) * W * words > limit) threads /= 2;
    const std::size_t P = std::size_t(threads) * W;
    const bool scratch = fused_in_scratch(threads, P * words);
    const std::size_t full = W > 1 ? M_ / P : 0;
    if (full > 0) {
      Kokkos::TeamPolicy<Space> policy(space_, int(full), threads, 1);
      if (scratch) policy.set_scratch_size(0, Kokkos::PerTeam(P * words));
      Kokkos::parallel_for("hayate::ode::fused", policy,
                           fused_kernel<W>(0, threads, scratch, first_step, steps, dt));
    }
    const std::size_t first = full * P;
    if (first < M_) {
      const std::size_t rest = M_ - first;
      const int t1 = int(std::min<std::size_t>(std::size_t(threads), rest));
      const bool scratch1 = fused_in_scratch(t1, std::size_t(t1) * words);
      Kokkos::TeamPolicy<Space> policy(space_, int((rest + t1 - 1) / t1), t1, 1);
      if (scratch1) policy.set_scratch_size(0, Kokkos::PerTeam(std::size_t(t1) * words));
      Kokkos::parallel_for("hayate::ode::fused", policy,
                           fused_kernel<1>(first, t1, scratch1, first_step, steps, dt));
    }
  }

  template <int W>
  FusedKernel<Space, W> fused_kernel(std::size_t first, int threads, bool scratch,
                                     std::int64_t first_step, std::int64_t steps, double dt) {
    if (!scratch && slots_.extent(0) < prog_.serial_vars.size() * M_)
      slots_ = Kokkos::View<double*, MemSpace>(
          Kokkos::view_alloc(space_, "hayate::ode::fused_slots", Kokkos::WithoutInitializing),
          prog_.serial_vars.size() * M_);
    return FusedKernel<Space, W>{
        serial_.data(),
        int(prog_.serial.size()),
        dev_.consts.data(),
        serial_vars_.data(),
        method_,
        {bufs_[0].data(), bufs_[1].data(), bufs_[2].data(), bufs_[3].data()},
        v_.data(),
        slots_.data(),
        M_,
        prog_.n_states,
        prog_.serial_vars.size(),
        std::size_t(method_ == Method::Euler ? 2 : 4),
        first,
        threads,
        scratch ? 1 : 0,
        first_step,
        steps,
        dt};
  }

  // Teams mode: the team programs, and the grid barrier's counter and failure flag. The layout
  // is the widest halo layout whose blocks hold at least one step, when every bin gets a team of
  // its own (GPUs; host backends only when asked, and then run the teams block by block), then no
  // halo. Pairs read both arguments through the table. Where a layout would push a team's share
  // out of shared memory (wb_net's pairs: 62 KB instead of 24) the next one down is taken; host
  // backends take level-1 scratch, the same memory.
  void lay_out_teams() {
    bin_begin_ = upload<decltype(bin_begin_)>(space_, "hayate::ode::bin_begin", prog_.bin_begin);
    counter_ = decltype(counter_)(Kokkos::view_alloc(space_, "hayate::ode::grid_counter"));
    failed_ = decltype(failed_)(Kokkos::view_alloc(space_, "hayate::ode::grid_failed"));
    const int spp = method_ == Method::Euler ? 1 : 4;
    const bool own_teams =
        on_gpu ? int(prog_.n_bins) <= Traits::multiprocessors(space_) : options_.teams_host_halo;
    const std::size_t most =
        std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(on_gpu ? 0 : 1));
    const int buffers = method_ == Method::Euler ? TeamsLocalKernel<Space, false>::stage_buffers
                                                 : TeamsLocalKernel<Space, true>::stage_buffers;
    TeamsLayout layout;
    bool fits = false;
    for (int h = own_teams ? int(prog_.halo_programs.size()) : 0; h >= 0 && !fits; --h) {
      const int sweeps = h > 0 ? prog_.halo_programs[std::size_t(h) - 1]->halo_sweeps : 1;
      if (h > 0 && sweeps != 0 && sweeps < spp) continue;
      for (bool pairs : {true, false}) {
        // The table-free layout needs less shared memory (wb_net's pairs fit with it) but its
        // decode is slower, so it comes after the table layout of the same shape.
        for (int k = 0; k < 2 && !fits; ++k) {
          const bool direct = (k == 0) == options_.teams_direct_first;
          if (direct && !pairs && !options_.teams_direct_first) continue;
          teams_league_ = h > 0 ? int(prog_.n_bins) : teams_league();
          LayoutOptions lo;
          lo.pairs = pairs;
          lo.halo = h;
          lo.direct = direct;
          lo.euler_words = method_ == Method::Euler;
          layout = layout_teams(prog_, teams_league_, lo);
          fits = layout.scratch_bytes(buffers) + kScratchAlignment <= most;
        }
        if (fits) break;
      }
    }
    teams_halo_ = layout.halo;
    teams_direct_ = layout.direct;
    if (layout.halo > 0) {
      const int sweeps = prog_.halo_programs[std::size_t(layout.halo) - 1]->halo_sweeps;
      halo_steps_ = sweeps == 0 ? 0 : sweeps / spp;
    }
    for (int t = 0; t < layout.teams; ++t) {
      const std::int32_t* h = layout.ints.data() + layout.int_begin[std::size_t(t)];
      const std::int32_t* phase_begin = h + kTeamFields + 2 * h[T_STATES] + h[T_VARS];
      for (int ph = 0; ph < layout.n_phases; ++ph)
        team_widest_ = std::max(team_widest_, int(phase_begin[ph + 1] - phase_begin[ph]));
    }
    team_ints_ = upload<decltype(team_ints_)>(space_, "hayate::ode::team_ints", layout.ints);
    team_reals_ = upload<decltype(team_reals_)>(space_, "hayate::ode::team_reals", layout.reals);
    team_int_begin_ =
        upload<decltype(team_int_begin_)>(space_, "hayate::ode::team_int_begin", layout.int_begin);
    team_real_begin_ = upload<decltype(team_real_begin_)>(space_, "hayate::ode::team_real_begin",
                                                          layout.real_begin);
    team_scratch_ = layout.scratch_bytes(buffers);
  }

  // At most one team per multiprocessor: every team is resident at once, which the grid
  // barrier needs. Host backends run one team through all bins.
  int teams_league() const {
    return std::max(1, std::min(int(prog_.n_bins), Traits::multiprocessors(space_)));
  }

  void teams(std::int64_t first_step, std::int64_t steps, double dt) {
    const std::size_t local_bytes = team_scratch_ + kScratchAlignment;
    const std::size_t most = Traits::team_scratch_max();
    // On host backends a team program beyond level 0 goes to level 1 (the same memory there); on
    // a GPU level 1 is global memory, and the variables-only kernel is used instead.
    const int level = local_bytes <= most ? 0 : on_gpu ? -1 : 1;
    if (options_.teams_scratch && options_.teams_program && level >= 0)
      return teams_local(first_step, steps, dt, level, local_bytes);
    const int n_bins = int(prog_.n_bins);
    const int league = teams_league();
    if (league > 1) Kokkos::deep_copy(space_, counter_, 0ull);
    TeamsKernel<Space> k{dev_.ref(),
                         bin_begin_.data(),
                         int(prog_.n_phases()),
                         n_bins,
                         league,
                         method_,
                         {bufs_[0].data(), bufs_[1].data(), bufs_[2].data(), bufs_[3].data()},
                         v_.data(),
                         prog_.n_vars,
                         0,
                         counter_.data(),
                         failed_.data(),
                         first_step,
                         steps,
                         dt};
    const std::size_t bytes = std::max<std::size_t>(prog_.n_vars, 1) * sizeof(double);
    k.scratch = options_.teams_scratch && bytes <= most;
    std::size_t widest = 1;  // a warp per group of the widest phase, as far as registers allow
    for (std::size_t ph = 0; ph < prog_.n_phases(); ++ph)
      for (int b = 0; b < n_bins; ++b)
        widest = std::max<std::size_t>(
            widest, prog_.bin_begin[ph * n_bins + b + 1] - prog_.bin_begin[ph * n_bins + b]);
    widest *= std::size_t((n_bins + league - 1) / league);
    Kokkos::TeamPolicy<Space> policy(space_, league, team_size(k, widest), lanes);
    if (k.scratch) policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("hayate::ode::teams", policy, k);
    check_co_residency(league);
    for (std::int64_t n = 0; n < steps; ++n)
      std::swap(bufs_[0], bufs_[method_ == Method::Euler ? 1 : 3]);
  }

  // Teams with their programs in scratch. A GPU runs the whole launch in one kernel (teams meet
  // at the grid barrier between blocks); host backends run one kernel per block when there are
  // several teams (the kernel's end is the barrier), as their teams are not all running at once.
  void teams_local(std::int64_t first_step, std::int64_t steps, double dt, int level,
                   std::size_t bytes) {
    if (method_ == Method::Euler)
      teams_direct_ ? teams_local<false, true>(first_step, steps, dt, level, bytes)
                    : teams_local<false, false>(first_step, steps, dt, level, bytes);
    else
      teams_direct_ ? teams_local<true, true>(first_step, steps, dt, level, bytes)
                    : teams_local<true, false>(first_step, steps, dt, level, bytes);
  }

  template <bool RK4, bool Direct>
  void teams_local(std::int64_t first_step, std::int64_t steps, double dt, int level,
                   std::size_t bytes) {
    const int league = teams_league_;
    const int spp = RK4 ? 4 : 1;
    std::int64_t block_steps = halo_steps_ > 0 ? halo_steps_ : steps;  // halo: its blocks
    int block_sweeps = int(std::min<std::int64_t>(block_steps * spp, 1 << 30));
    if (halo_steps_ < 0 && league > 1) block_steps = 0, block_sweeps = 1;  // exchange every sweep
    const bool launch_per_block = !on_gpu && league > 1;
    const std::int64_t per_launch = launch_per_block ? block_steps : steps;
    TeamsLocalKernel<Space, RK4, Direct> k{team_ints_.data(),
                                           team_reals_.data(),
                                           team_int_begin_.data(),
                                           team_real_begin_.data(),
                                           int(prog_.n_phases()),
                                           league,
                                           nullptr,
                                           {nullptr, nullptr},
                                           v_.data(),
                                           counter_.data(),
                                           failed_.data(),
                                           0,
                                           0,
                                           dt,
                                           block_sweeps,
                                           level};
    Kokkos::TeamPolicy<Space> policy(space_, league, team_size(k, std::size_t(team_widest_)),
                                     lanes);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    for (std::int64_t done = 0; done < steps;) {
      const std::int64_t n = std::min(per_launch, steps - done);
      if (league > 1) Kokkos::deep_copy(space_, counter_, 0ull);
      // Block j publishes to out[j % 2]; the first never overwrites what the launch reads.
      k.in = bufs_[0].data();
      k.out[0] = bufs_[1].data();
      k.out[1] = bufs_[0].data();
      k.first_step = first_step + done;
      k.steps = n;
      Kokkos::parallel_for("hayate::ode::teams_local", policy, k);
      check_co_residency(league);
      const std::int64_t blocks = (n * spp + block_sweeps - 1) / block_sweeps;
      if (blocks % 2 == 1) std::swap(bufs_[0], bufs_[1]);
      done += n;
    }
  }

  // A warp per group of the widest phase, as far as the kernel's registers allow.
  template <class Kernel>
  int team_size(const Kernel& kernel, std::size_t widest) const {
    if (!on_gpu) return 1;
    const int max_team = Kokkos::TeamPolicy<Space>(space_, 1, 1, lanes)
                             .team_size_max(kernel, Kokkos::ParallelForTag());
    return int(std::min<std::size_t>(widest, std::size_t(max_team)));
  }

  void check_co_residency(int league) {
    int failed = 0;
    if (league > 1) {
      Kokkos::deep_copy(space_, failed, failed_);
      space_.fence();
    }
    if (failed) {
      Kokkos::deep_copy(space_, failed_, 0);
      space_.fence();
      throw CoResidencyError(
          "ode: teams mode: the grid barrier timed out, so not every team was resident at once "
          "(is another program sharing the GPU?); use tuning.mode: persistent or phases");
    }
  }

  void copy_in(const View& v, const std::vector<double>& host) const {
    auto mirror = Kokkos::create_mirror_view(v);
    std::copy(host.begin(), host.end(), mirror.data());
    Kokkos::deep_copy(space_, v, mirror);
    space_.fence();
  }
  std::vector<double> copy_out(const View& v) const {
    auto mirror = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(space_, mirror, v);
    space_.fence();
    return std::vector<double>(mirror.data(), mirror.data() + mirror.extent(0));
  }

  Space space_;
  Program prog_;
  std::size_t M_;
  Method method_;
  ExecMode mode_;
  EngineOptions options_;
  DeviceProgram<MemSpace> dev_;
  Kokkos::View<std::uint32_t*, MemSpace> serial_{
      upload<Kokkos::View<std::uint32_t*, MemSpace>>(space_, "hayate::ode::serial", prog_.serial)};
  Kokkos::View<std::int32_t*, MemSpace> serial_vars_{upload<Kokkos::View<std::int32_t*, MemSpace>>(
      space_, "hayate::ode::serial_vars", prog_.serial_vars)};
  Kokkos::View<double*, MemSpace> slots_;  // the fused kernel's variables outside scratch
  Kokkos::View<std::int32_t*, MemSpace> bin_begin_;
  // Teams mode: every team's program and constants (TeamsLayout) and its scratch size.
  Kokkos::View<std::int32_t*, MemSpace> team_ints_;
  Kokkos::View<double*, MemSpace> team_reals_;
  Kokkos::View<std::int64_t*, MemSpace> team_int_begin_, team_real_begin_;
  std::size_t team_scratch_ = 0;
  int teams_league_ = 1;  // teams of the layout
  int team_widest_ = 1;   // most groups in one phase of one team
  // Steps per block of the halo layout (0: the whole launch); -1 without a halo.
  std::int64_t halo_steps_ = -1;
  int teams_halo_ = 0;         // rings of the halo layout
  bool teams_direct_ = false;  // the layout's words may be table-free (TeamsLayout::direct)
  Kokkos::View<unsigned long long, MemSpace> counter_;
  Kokkos::View<int, MemSpace> failed_;
  View bufs_[4];
  View k_[7], dp_[4];  // rk45: stage derivatives; ya, yb, x_new, err
  View v_, f_;
};

template <class Space>
double Engine<Space>::error_norm() const {
  const View err = dp_[3];
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "hayate::ode::dp_error", Kokkos::RangePolicy<Space>(space_, 0, err.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& s) { s += err(i); }, sum);
  double terms[2] = {sum, double(err.extent(0))};
  if (options_.combine_error) options_.combine_error(terms);
  return std::sqrt(terms[0] / terms[1]);
}

// The one kernel lambda of the engine is compiled once, in ode_kernels.cpp
// (exec/instantiate.hpp says why); its other kernels are functors.
#define HAYATE_ODE_ENGINE_KERNELS(EXTERN, S) EXTERN template double Engine<S>::error_norm() const;
#ifndef HAYATE_ODE_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_ODE_ENGINE_KERNELS, extern)
#endif

}  // namespace hayate::ode
