#pragma once
// The kernels of teams mode (one large network): many steps in one kernel with one team per bin
// of independent cells, team barriers between phases and a grid-wide barrier between sweeps.
#include "exec/exec_traits.hpp"
#include "ode/interp.hpp"
#include "ode/teams.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace hayate::ode {

// Grid-wide barrier of `league` teams: arrival counter plus spin. Sound only while every team is
// resident at once (the engine launches at most one team per multiprocessor and nothing runs
// beside it); if the others do not arrive within about ten seconds of spinning it gives up,
// raises `failed` and every team leaves, so a run can fail but never hang. Returns false then.
template <class Member>
KOKKOS_INLINE_FUNCTION bool grid_barrier(const Member& team, unsigned long long* counter,
                                         int* failed, unsigned long long target, int league) {
  team.team_barrier();
  if (league == 1) return true;
  int ok = 1;
  Kokkos::single(
      Kokkos::PerTeam(team),
      [&](int& result) {
        // The fence publishes this team's writes before it is counted (and, after the spin,
        // orders the reads of the next sweep after the other teams' writes).
        Kokkos::memory_fence();
        Kokkos::atomic_fetch_add(counter, 1ull);
        const volatile unsigned long long* c = counter;
        const volatile int* f = failed;
        long long spins = 0;
        while (*c < target && *f == 0)
          if (++spins > (1ll << 26)) Kokkos::atomic_exchange(failed, 1);
        Kokkos::memory_fence();
        result = *f == 0;
      },
      ok);
  team.team_barrier();
  return ok != 0;
}

// Inside the teams kernel: a sweep runs every phase over this team's bins (team barrier after
// each phase), then waits for all teams, because the next sweep reads neighbours' states.
template <class Member>
struct BinSweep {
  const Member& team;
  ProgramRef p;
  const std::int32_t* bin_begin;
  int n_phases, n_bins, league;
  double* v;
  unsigned long long* counter;
  int* failed;
  unsigned long long* arrivals;  // grid barriers this team has passed
  int* ok;

  template <class Assign>
  KOKKOS_INLINE_FUNCTION void operator()(const double* in, double t, const Assign& assign) const {
    if (!*ok) return;
    const StateRef s{in, v, t, 1};
    for (int ph = 0; ph < n_phases; ++ph) {
      for (int b = team.league_rank(); b < n_bins; b += league) {
        const int* range = bin_begin + std::size_t(ph) * n_bins + b;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, range[0], range[1]), [&](const int g) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kWarp),
                               [&](const int l) { run_group_lane(p, g, l, s, 0, assign); });
        });
      }
      team.team_barrier();
    }
    *arrivals += 1;
    *ok = grid_barrier(team, counter, failed, *arrivals * (unsigned long long)(league), league);
  }
};

// With `scratch`, a team keeps a private copy of every variable in team scratch memory: no bin
// reads a variable of another bin, so the algebraic values a phase hands to the next never leave
// the multiprocessor. The copy starts from the global values (folded constants, parameters) and
// is not written back; the engine's variables are those of the last evaluate().
template <class Space>
struct TeamsKernel {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = Kokkos::View<double*, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ProgramRef p;
  const std::int32_t* bin_begin;
  int n_phases, n_bins, league;
  Method method;
  double* bufs[4];
  double* v;
  std::size_t n_vars;
  int scratch;
  unsigned long long* counter;
  int* failed;
  std::int64_t first_step, steps;
  double dt;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    double* b[4] = {bufs[0], bufs[1], bufs[2], bufs[3]};
    double* vv = v;
    if (scratch) {
      Scratch local(team.team_scratch(0), n_vars);
      vv = local.data();
      const double* src = v;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n_vars), [&](const std::size_t j) {
        Kokkos::single(Kokkos::PerThread(team), [&] { vv[j] = src[j]; });
      });
      team.team_barrier();
    }
    unsigned long long arrivals = 0;
    int ok = 1;
    const BinSweep<member_type> sweep{team, p,       bin_begin, n_phases,  n_bins, league,
                                      vv,   counter, failed,    &arrivals, &ok};
    run_steps(method, first_step, steps, dt, b, sweep, &ok);
  }
};

// Lane `lane` of group g of a team program (TeamsLayout): unified streams read the team's table,
// per-lane streams find their code through the lane table. EulerWords: see run_local_stream.
template <class Space, bool Direct, bool EulerWords = true, class Assign>
KOKKOS_INLINE_FUNCTION void run_local_group_lane(const std::uint32_t* code,
                                                 const std::int32_t* groups,
                                                 const std::int32_t* lanes,
                                                 const std::int32_t* itab, int g, int lane,
                                                 double* u, const Assign& assign) {
  const std::int32_t* rec = groups + std::size_t(g) * kGroupFields;
  if (lane >= rec[G_COUNT]) return;
  if (rec[G_KIND] == GROUP_UNIFIED) {
    run_local_stream<Space, Direct, EulerWords>(
        code + rec[G_CODE], rec[G_LEN], itab + std::size_t(rec[G_ITAB]) * kWarp, lane, u, assign);
  } else {
    const std::int32_t* lt = lanes + rec[G_CTAB];
    run_local_stream<Space, Direct, EulerWords>(code + lt[lane], lt[kWarp + lane], nullptr, lane, u,
                                                assign);
  }
}

// Integrator stages of the teams kernel on a team's scratch copy: a derivative store names the
// U index k of its state, whose stage input is u[k]; the stage result goes to next[k] (the running
// sum to acc[k]), so every stream of the sweep still reads the stage input. The arithmetic is
// AssignEuler's and AssignRK4's, so the values are bitwise theirs. In a sweep that ends a block
// the result of a state the team owns also goes to global memory at once (`to`), so the stores
// are under way long before the grid barrier's fence waits for them.
struct Publish {
  double* to = nullptr;               // null: not the last sweep of a block
  const std::int32_t* src = nullptr;  // state_src, then the TeamState flags of the ns states
  int ns = 0;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double x) const {
    if (to != nullptr && src[ns + int(k)] == STATE_OWNED) to[src[k]] = x;
  }
};

// The stage buffers follow U in scratch (next at u + next, then acc and x0 for RK4), so a policy
// holds one pointer: the teams kernel needs every register it can keep for a team of a warp per
// group of its widest phase. `out` is where a stage result goes, as an offset from U: the stage
// buffer (next; acc for RK4's last stage), or 0, U itself, for a team whose states are all
// updated in place (T_IN_PLACE).
struct LocalEuler {
  double* u;
  int out;
  double dt;
  Publish publish;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double value) const {
    const double x = u[k] + dt * value;
    u[out + int(k)] = x;
    publish(k, x);
  }
};

struct LocalRK4 {  // acc at u + next + ns, the step's initial state x0 at u + next + 2 ns
  double* u;
  int next, out;
  double a_dt, b_dt;
  int first, last;
  Publish publish;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double value) const {
    double* acc = u + next + publish.ns;
    double* x0 = acc + publish.ns;
    const double xv = first ? u[k] : x0[k];
    double sum;
    if (first) {
      x0[k] = xv;
      sum = xv + b_dt * value;
    } else {
      sum = acc[k] + b_dt * value;
    }
    if (!last) {
      acc[k] = sum;
      const double y = xv + a_dt * value;
      u[out + int(k)] = y;
      publish(k, y);
    } else {
      u[out + int(k)] = sum;
      publish(k, sum);
    }
  }
};

// Teams kernel with each team's program and values in scratch (TeamsLayout): the team copies its
// integer block and U (constants, variables, states) once per launch, and every operand of its
// streams is then a shared-memory read. A sweep runs the phases (team barrier after each) with a
// Local* policy, then moves the results into U. Every `block_sweeps` sweeps (and at the end) the
// team publishes its own states to out[block % 2]; between blocks all teams meet at the grid
// barrier and refresh the states they do not own from there. With a halo layout a block is
// several sweeps (Program::halo_sweeps), otherwise one, or the whole launch for a single team.
// Variables are not written back: the engine's variables are those of the last evaluate().
template <class Space, bool RK4, bool Direct = false>
struct TeamsLocalKernel {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = typename Space::scratch_memory_space;
  const std::int32_t* ints;
  const double* reals;
  const std::int64_t *int_begin, *real_begin;
  int n_phases, league;
  const double* in;  // the states at the start of the launch
  double* out[2];
  const double* v;
  unsigned long long* counter;
  int* failed;
  std::int64_t first_step, steps;
  double dt;
  int block_sweeps;
  int level;  // scratch level: 0, or 1 on host spaces when level 0 is too small

  static constexpr int stage_buffers = RK4 ? 3 : 1;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int t = team.league_rank();
    const std::int32_t* blob = ints + int_begin[t];
    const int n_int = int(int_begin[t + 1] - int_begin[t]);
    const int ns = blob[T_STATES], nv = blob[T_VARS], nc = blob[T_CONSTS];
    const int n_u = ns + nv + nc + 1;  // time last
    constexpr int nb = stage_buffers;
    // Level 0 (shared memory) on a GPU, as a constant: the compiler then sees that the program
    // and U are in shared memory and addresses them so (32-bit shared loads, not generic ones).
    constexpr bool gpu = core::ExecTraits<Space>::is_gpu;
    const int level = gpu ? 0 : this->level;
    Kokkos::View<double*, Scratch, Kokkos::MemoryTraits<Kokkos::Unmanaged>> uview(
        team.team_scratch(level), std::size_t(n_u + nb * ns));
    Kokkos::View<std::int32_t*, Scratch, Kokkos::MemoryTraits<Kokkos::Unmanaged>> iview(
        team.team_scratch(level), std::size_t(n_int));
    double* u = uview.data();
    double* next = u + n_u;
    double* acc = next + ns;  // RK4 only, as x0 after it
    std::int32_t* local = iview.data();
    const double* consts = reals + real_begin[t];
    const std::int32_t* var_src = blob + kTeamFields + 2 * ns;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, n_int),
                         [&](const int i) { local[i] = blob[i]; });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, nc),
                         [&](const int j) { u[ns + nv + j] = consts[j]; });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, nv),
                         [&](const int j) { u[ns + j] = v[var_src[j]]; });
    const std::int32_t* state_src = blob + kTeamFields;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, ns),
                         [&](const int i) { u[i] = in[state_src[i]]; });
    const int time_slot = n_u - 1;
    Kokkos::single(Kokkos::PerTeam(team), [&]() { u[time_slot] = double(first_step) * dt; });
    team.team_barrier();
    state_src = local + kTeamFields;
    const std::int32_t* state_flag = state_src + ns;
    const std::int32_t* phase_begin = state_flag + ns + nv;
    const std::int32_t* groups = phase_begin + n_phases + 1;
    const std::int32_t* lanes = groups + std::size_t(local[T_GROUPS]) * kGroupFields;
    const std::int32_t* itab = lanes + local[T_LANES];
    const std::uint32_t* code = reinterpret_cast<const std::uint32_t*>(itab + local[T_ITAB]);

    // A team whose states are all updated in place needs no copy of the stage results after a
    // sweep; the next sweep's time is written at the start of the first phase that no longer
    // reads time, and when that is a phase of the sweep, a sweep without an exchange ends with
    // its last phase's barrier (one barrier and one copy less per sweep).
    const bool in_place = local[T_IN_PLACE] != 0;
    const int time_phase = in_place ? local[T_TIME_PHASE] : n_phases;
    // The time at the end of stage k of step n, as step_schedule spells it (bitwise).
    const auto stage_end = [&](std::int64_t n, int k) {
      if constexpr (RK4) {
        const double t0 = double(first_step + n) * dt;
        if (k < 2) return t0 + 0.5 * dt;
        if (k == 2) return t0 + dt;
      }
      return double(first_step + n + 1) * dt;
    };
    const auto phases = [&](const auto& assign, std::int64_t n, int k) {
      for (int ph = 0; ph < n_phases; ++ph) {
        // By the team's last warp: the first warps run the phase's longest streams
        // (TeamsLayout places them first), which the write would delay.
        if (ph == time_phase && team.team_rank() == team.team_size() - 1)
          Kokkos::single(Kokkos::PerThread(team), [&]() { u[time_slot] = stage_end(n, k); });
        Kokkos::parallel_for(
            Kokkos::TeamThreadRange(team, phase_begin[ph], phase_begin[ph + 1]), [&](const int g) {
              Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kWarp), [&](const int l) {
                run_local_group_lane<Space, Direct, !RK4>(code, groups, lanes, itab, g, l, u,
                                                          assign);
              });
            });
        team.team_barrier();
      }
    };
    const double a_dt[4] = {0.5 * dt, 0.5 * dt, dt, 0.0};
    const double b_dt[4] = {dt / 6.0, dt / 3.0, dt / 3.0, dt / 6.0};
    const std::int64_t sweeps = steps * (RK4 ? 4 : 1);
    unsigned long long arrivals = 0;
    int block = 0;
    // Sweeps left in the current block, whose last publishes the team's own states. A sweep
    // that neither ends a block nor needs the copy below costs its barriers and this count only:
    // every warp runs the end of a sweep at once, so its instructions add up.
    const auto block_left = [&](std::int64_t left) {
      return int(left < block_sweeps ? left : std::int64_t(block_sweeps));
    };
    int until = block_left(sweeps);
    std::int64_t n = 0;  // the step of the next sweep
    int k = 0;           // its RK4 stage
    while (until > 0) {
      const Publish pub{until == 1 ? out[block & 1] : nullptr, state_src, ns};
      if constexpr (!RK4) {
        phases(LocalEuler{u, in_place ? 0 : n_u, dt, pub}, n, 0);
      } else {
        const int to = in_place ? 0 : k == 3 ? n_u + ns : n_u;
        phases(LocalRK4{u, n_u, to, a_dt[k], b_dt[k], k == 0, k == 3, pub}, n, k);
      }
      // The stage results become the next stage input, with the time of the next sweep.
      if (time_phase >= n_phases) {
        const double* from = RK4 && k == 3 ? acc : next;
        if (!in_place)
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, ns), [&](const int i) {
            if (state_flag[i] != STATE_READ) u[i] = from[i];
          });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { u[time_slot] = stage_end(n, k); });
        team.team_barrier();
      }
      if (!RK4 || ++k == 4) k = 0, ++n;
      if (--until > 0) continue;
      // The end of a block (the states were published by the stores): unless it was the last,
      // the team waits for every team and takes the others' states from what they published.
      const std::int64_t done = n * (RK4 ? 4 : 1) + k;
      if (done == sweeps) break;
      arrivals += 1;
      if (!grid_barrier(team, counter, failed, arrivals * (unsigned long long)(league), league))
        break;
      const double* published = out[block & 1];
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, ns), [&](const int i) {
        if (state_flag[i] != STATE_OWNED) u[i] = published[state_src[i]];
      });
      team.team_barrier();
      ++block;
      until = block_left(sweeps - done);
    }
  }
};

// Room for the scratch allocator's alignment of the teams kernel's second view.
inline constexpr std::size_t kScratchAlignment = 64;
}  // namespace hayate::ode
