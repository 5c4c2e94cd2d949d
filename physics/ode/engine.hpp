#pragma once
// The device interpreter. Per-phase mode launches one kernel per phase (a warp-sized team of
// vector lanes per group, sharing the group's unified stream); persistent mode runs many steps of
// every phase inside one kernel, one team per ensemble member, with team barriers between phases.
// Fused mode (ensembles) runs many steps in one kernel with one thread per member evaluating the
// whole model in dependency order, its state in team scratch; teams mode (one large network) runs
// many steps in one kernel with one team per bin of independent cells, team barriers between
// phases and a grid-wide barrier between sweeps.
#include "config/error.hpp"
#include "ode/adaptive.hpp"
#include "ode/interp.hpp"
#include "ode/teams.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hayate::ode {

enum class ExecMode { Phases, Persistent, Fused, Teams };

// Where the fused kernel keeps each member's state buffers and variables: team scratch memory
// (when a team's fits), global memory, or the measured choice (benchmarks/NOTES.md, ninth round):
// scratch on GPUs when the shared memory of a multiprocessor holds at least 12 warps' worth of
// teams of 64 or more threads, global memory on host threads.
enum class FusedState { Auto, Scratch, Global };

// Tuning beyond the mode (for measurements; the defaults are the choices made).
struct EngineOptions {
  FusedState fused_state = FusedState::Auto;  // fused: where the members' working sets live
  int fused_members = 0;      // fused: members per team (0 = the most that fit, 128 threads)
  bool teams_scratch = true;  // teams: each team's variables in team scratch memory when they fit
  int fused_width = 0;        // fused: members per thread, 1, 2 or 4 (0 = by the ensemble's size)
  bool teams_program = true;  // teams: the team's program and every value it reads in scratch too
  // teams on host spaces: use the program's halo (one team per bin, a kernel per block). Off by
  // default: on CPU threads the halo's extra cells cost their full time (benchmarks/NOTES.md,
  // fifteenth round); the tests switch it on to check the halo layouts on every backend.
  bool teams_host_halo = false;
  // teams: try the table-free layout (lane-offset words, direct pairs; TeamsLayout::direct)
  // before the table layout of each halo width, not only where the table one does not fit (the
  // tests, to run it on every backend).
  bool teams_direct_first = false;
};

// Error of a teams-mode run whose teams were not all resident at once (grid barrier timed out).
struct CoResidencyError : core::RuntimeFailure {
  using core::RuntimeFailure::RuntimeFailure;
};

// Shared memory of one multiprocessor of the device behind Space, in bytes (host spaces: 0).
template <class Space>
std::size_t shared_memory_per_multiprocessor() {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    int device = 0, bytes = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
    return bytes > 0 ? std::size_t(bytes) : 0;
  }
#endif
  return 0;
}

// Multiprocessors of the device behind Space (host spaces: 1, teams then run one at a time).
template <class Space>
int multiprocessors() {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    int device = 0, count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return count > 0 ? count : 1;
  }
#endif
  return 1;
}

template <class View>
View upload(const std::string& label, const std::vector<typename View::value_type>& host) {
  View v(Kokkos::view_alloc(label, Kokkos::WithoutInitializing),
         std::max<std::size_t>(host.size(), 1));
  auto mirror = Kokkos::create_mirror_view(v);
  std::copy(host.begin(), host.end(), mirror.data());
  Kokkos::deep_copy(v, mirror);
  return v;
}

// Device copies of a program.
template <class MemSpace>
struct DeviceProgram {
  Kokkos::View<std::uint32_t*, MemSpace> code;
  Kokkos::View<std::int32_t*, MemSpace> groups, lane_code, lane_len, itab, phase_begin;
  Kokkos::View<double*, MemSpace> ctab, consts;
  std::vector<std::int32_t> phase_begin_host;

  explicit DeviceProgram(const Program& p)
      : code(upload<decltype(code)>("hayate::ode::code", p.code)),
        groups(upload<decltype(groups)>("hayate::ode::groups", p.groups)),
        lane_code(upload<decltype(lane_code)>("hayate::ode::lane_code", p.lane_code)),
        lane_len(upload<decltype(lane_len)>("hayate::ode::lane_len", p.lane_len)),
        itab(upload<decltype(itab)>("hayate::ode::itab", p.itab)),
        phase_begin(upload<decltype(phase_begin)>("hayate::ode::phase_begin", p.phase_begin)),
        ctab(upload<decltype(ctab)>("hayate::ode::ctab", p.ctab)),
        consts(upload<decltype(consts)>("hayate::ode::consts", p.consts)),
        phase_begin_host(p.phase_begin) {}

  ProgramRef ref() const {
    return ProgramRef{code.data(), groups.data(), lane_code.data(), lane_len.data(),
                      itab.data(), ctab.data(),   consts.data()};
  }
};

// Per-phase kernel. Unit u is a group (one member) or, for ensembles, a (group lane, block of
// kWarp members) pair so that the vector lanes run one stream for kWarp members.
template <class Space, class Assign>
struct PhaseKernel {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  ProgramRef p;
  StateRef s;
  Assign assign;
  int g0;
  std::size_t units, member_blocks;
  int team_size;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::size_t u = std::size_t(team.league_rank()) * team_size + team.team_rank();
    if (u >= units) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kWarp), [&](const int l) {
      if (s.M == 1) {
        run_group_lane(p, g0 + int(u), l, s, 0, assign);
      } else {
        const std::size_t item = u / member_blocks;
        const std::size_t m = (u % member_blocks) * kWarp + l;
        if (m < s.M) run_group_lane(p, g0 + int(item / kWarp), int(item % kWarp), s, m, assign);
      }
    });
  }
};

// Inside the persistent kernel: one sweep = every phase, barrier after each.
template <class Member>
struct TeamSweep {
  const Member& team;
  ProgramRef p;
  const std::int32_t* phase_begin;
  int n_phases;
  double* v;
  std::size_t M, m;

  template <class Assign>
  KOKKOS_INLINE_FUNCTION void operator()(const double* in, double t, const Assign& assign) const {
    const StateRef s{in, v, t, M};
    for (int ph = 0; ph < n_phases; ++ph) {
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, phase_begin[ph], phase_begin[ph + 1]), [&](const int g) {
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kWarp),
                                 [&](const int l) { run_group_lane(p, g, l, s, m, assign); });
          });
      team.team_barrier();
    }
  }
};

template <class Space>
struct PersistentKernel {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  ProgramRef p;
  const std::int32_t* phase_begin;
  int n_phases;
  Method method;
  double* bufs[4];
  double* v;
  std::size_t M;
  std::int64_t first_step, steps;
  double dt;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::size_t m = team.league_rank();
    double* b[4] = {bufs[0], bufs[1], bufs[2], bufs[3]};
    const TeamSweep<member_type> sweep{team, p, phase_begin, n_phases, v, M, m};
    run_steps(method, first_step, steps, dt, b, sweep);
  }
};

// Every equation of the model for W members (columns col + k * ms), by one thread, in dependency
// order. State arrays are [index * stride + column].
template <int W>
struct SerialSweep {
  const std::uint32_t* code;
  int len;
  const double* consts;
  double* v;
  std::size_t stride, col, ms;

  template <class Assign>
  KOKKOS_INLINE_FUNCTION void operator()(const double* in, double t, const Assign& assign) const {
    run_stream_members<W>(code, len, nullptr, nullptr, 0, consts, StateRef{in, v, t, stride}, col,
                          ms, assign);
  }
};

// Fused ensemble kernel: team l holds members first + l * T * W + r + k * T (k < W) and thread r
// steps the W members r + k * T of its team through one instruction stream, so decode and
// dispatch are paid once per W evaluations. Members never read each other, so there is no
// barrier at all. The stream's variables are slots (Program::serial_vars): each member's slots
// are loaded from v at the start and stored back at the end, in team scratch with `scratch`
// (with the state buffers too, one column per member, for all the kernel's steps), else in
// `slots` in global memory. Every team is full: the engine runs the members that do not fill a
// team of width W in a second launch of width 1.
template <class Space, int W>
struct FusedKernel {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = Kokkos::View<double*, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::uint32_t* code;
  int len;
  const double* consts;
  const std::int32_t* slot_var;  // slot -> variable index
  Method method;
  double* bufs[4];  // x, y1, y2, acc in global memory, [i * M + m]
  double* v;        // [j * M + m]
  double* slots;    // [k * M + m] when not in scratch
  std::size_t M, n_states, n_slots, n_bufs;
  std::size_t first;  // the first member of team 0
  int threads, scratch;
  std::int64_t first_step, steps;
  double dt;

  KOKKOS_INLINE_FUNCTION static std::size_t words(std::size_t n_states, std::size_t n_slots,
                                                  std::size_t n_bufs) {
    return n_slots + n_bufs * n_states;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::size_t T = std::size_t(threads), P = T * W;
    const std::size_t r = std::size_t(team.team_rank());
    const std::size_t m = first + std::size_t(team.league_rank()) * P + r;
    double* b[4] = {bufs[0], bufs[1], bufs[2], bufs[3]};
    double* vv = slots;
    std::size_t stride = M, col = m;
    if (scratch) {
      Scratch local(team.team_scratch(0), P * words(n_states, n_slots, n_bufs));
      if (m + (W - 1) * T >= M) return;
      for (std::size_t k = 0; k < n_bufs; ++k) b[k] = local.data() + k * n_states * P;
      vv = local.data() + n_bufs * n_states * P;
      stride = P;
      col = r;
      for (int k = 0; k < W; ++k)
        for (std::size_t i = 0; i < n_states; ++i)
          b[0][i * P + r + k * T] = bufs[0][i * M + m + k * T];
    } else if (m + (W - 1) * T >= M) {
      return;
    }
    for (int k = 0; k < W; ++k)
      for (std::size_t j = 0; j < n_slots; ++j)
        vv[j * stride + col + k * T] = v[std::size_t(slot_var[j]) * M + m + k * T];
    const SerialSweep<W> sweep{code, len, consts, vv, stride, col, T};
    run_steps(method, first_step, steps, dt, b, sweep);
    for (int k = 0; k < W; ++k) {
      if (b[0] != bufs[0])
        for (std::size_t i = 0; i < n_states; ++i)
          bufs[0][i * M + m + k * T] = b[0][i * stride + col + k * T];
      for (std::size_t j = 0; j < n_slots; ++j)
        v[std::size_t(slot_var[j]) * M + m + k * T] = vv[j * stride + col + k * T];
    }
  }
};

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
template <bool Direct, bool EulerWords = true, class Assign>
KOKKOS_INLINE_FUNCTION void run_local_group_lane(const std::uint32_t* code,
                                                 const std::int32_t* groups,
                                                 const std::int32_t* lanes,
                                                 const std::int32_t* itab, int g, int lane,
                                                 double* u, const Assign& assign) {
  const std::int32_t* rec = groups + std::size_t(g) * kGroupFields;
  if (lane >= rec[G_COUNT]) return;
  if (rec[G_KIND] == GROUP_UNIFIED) {
    run_local_stream<Direct, EulerWords>(code + rec[G_CODE], rec[G_LEN],
                                         itab + std::size_t(rec[G_ITAB]) * kWarp, lane, u, assign);
  } else {
    const std::int32_t* lt = lanes + rec[G_CTAB];
    run_local_stream<Direct, EulerWords>(code + lt[lane], lt[kWarp + lane], nullptr, lane, u,
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
#if defined(__CUDA_ARCH__)
    // Level 0 (shared memory) on a GPU, as a constant: the compiler then sees that the program
    // and U are in shared memory and addresses them so (32-bit shared loads, not generic ones).
    constexpr int level = 0;
#else
    const int level = this->level;
#endif
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
    // its last phase's barrier (benchmarks/NOTES.md, forty-third round).
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
                run_local_group_lane<Direct, !RK4>(code, groups, lanes, itab, g, l, u, assign);
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
    // every warp runs the end of a sweep at once, so its instructions add up (benchmarks/
    // NOTES.md, forty-eighth round).
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

template <class Space>
class Engine {
 public:
  using MemSpace = typename Space::memory_space;
  using View = Kokkos::View<double*, MemSpace>;
  static constexpr bool on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

  Engine(const Program& prog, std::size_t members, Method method, ExecMode mode,
         const EngineOptions& options = {})
      : prog_(prog),
        M_(members),
        method_(method),
        mode_(mode),
        options_(options),
        dev_(prog),
        v_("hayate::ode::v", std::max<std::size_t>(prog.n_vars * members, 1)),
        f_("hayate::ode::f", std::max<std::size_t>(prog.n_states * members, 1)) {
    const std::size_t n = std::max<std::size_t>(prog.n_states * members, 1);
    const char* names[4] = {"hayate::ode::x", "hayate::ode::y1", "hayate::ode::y2",
                            "hayate::ode::acc"};
    for (int i = 0; i < 4; ++i)
      bufs_[i] = View(std::string(names[i]), (i < 2 || method == Method::RK4) ? n : 1);
    if (method == Method::RK45) {
      for (auto& k : k_) k = View("hayate::ode::dp_k", n);
      for (auto& b : dp_) b = View("hayate::ode::dp_buffer", n);
    }
    if (mode == ExecMode::Teams) {
      if (members != 1) throw std::logic_error("ode: teams mode runs one model instance");
      bin_begin_ = upload<decltype(bin_begin_)>("hayate::ode::bin_begin", prog.bin_begin);
      counter_ = decltype(counter_)("hayate::ode::grid_counter");
      failed_ = decltype(failed_)("hayate::ode::grid_failed");
      // The widest halo layout whose blocks hold at least one step, when every bin gets a team
      // of its own (GPUs; host spaces only when asked, and then run the teams block by block),
      // then no halo. Pairs read
      // both arguments through the table. Where a layout would push a team's share out of
      // shared memory (wb_net's pairs: 62 KB instead of 24) the next one down is taken; host
      // spaces take level-1 scratch, the same memory.
      const int spp = method == Method::Euler ? 1 : 4;
      const bool own_teams =
          on_host ? options.teams_host_halo : int(prog.n_bins) <= multiprocessors<Space>();
      const std::size_t most =
          std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(on_host ? 1 : 0));
      const int buffers = method == Method::Euler ? TeamsLocalKernel<Space, false>::stage_buffers
                                                  : TeamsLocalKernel<Space, true>::stage_buffers;
      TeamsLayout layout;
      bool fits = false;
      for (int h = own_teams ? int(prog.halo_programs.size()) : 0; h >= 0 && !fits; --h) {
        const int sweeps = h > 0 ? prog.halo_programs[std::size_t(h) - 1]->halo_sweeps : 1;
        if (h > 0 && sweeps != 0 && sweeps < spp) continue;
        for (bool pairs : {true, false}) {
          // The table-free layout needs less shared memory (wb_net's pairs fit with it) but
          // its decode is slower, so it comes after the table layout of the same shape.
          for (int k = 0; k < 2 && !fits; ++k) {
            const bool direct = (k == 0) == options.teams_direct_first;
            if (direct && !pairs && !options.teams_direct_first) continue;
            teams_league_ = h > 0 ? int(prog.n_bins) : teams_league();
            layout = layout_teams(prog, teams_league_, pairs, h, direct, method == Method::Euler);
            fits = layout.scratch_bytes(buffers) + kScratchAlignment <= most;
          }
          if (fits) break;
        }
      }
      teams_halo_ = layout.halo;
      teams_direct_ = layout.direct;
      if (layout.halo > 0) {
        const int sweeps = prog.halo_programs[std::size_t(layout.halo) - 1]->halo_sweeps;
        halo_steps_ = sweeps == 0 ? 0 : sweeps / spp;
      }
      for (int t = 0; t < layout.teams; ++t) {
        const std::int32_t* h = layout.ints.data() + layout.int_begin[std::size_t(t)];
        const std::int32_t* phase_begin = h + kTeamFields + 2 * h[T_STATES] + h[T_VARS];
        for (int ph = 0; ph < layout.n_phases; ++ph)
          team_widest_ = std::max(team_widest_, int(phase_begin[ph + 1] - phase_begin[ph]));
      }
      team_ints_ = upload<decltype(team_ints_)>("hayate::ode::team_ints", layout.ints);
      team_reals_ = upload<decltype(team_reals_)>("hayate::ode::team_reals", layout.reals);
      team_int_begin_ =
          upload<decltype(team_int_begin_)>("hayate::ode::team_int_begin", layout.int_begin);
      team_real_begin_ =
          upload<decltype(team_real_begin_)>("hayate::ode::team_real_begin", layout.real_begin);
      team_scratch_ = layout.scratch_bytes(buffers);
    }
    if (!prog.constant_vars.empty()) {
      auto v = Kokkos::create_mirror_view(v_);
      for (const auto& [index, value] : prog.constant_vars)
        for (std::size_t m = 0; m < members; ++m) v(index * members + m) = value;
      Kokkos::deep_copy(v_, v);
    }
  }

  std::size_t members() const { return M_; }
  // Teams mode: steps between exchanges of the halo layout (0: a whole launch), -1 without one.
  std::int64_t teams_block_steps() const { return halo_steps_; }
  int teams_halo() const { return halo_steps_ < 0 ? 0 : teams_halo_; }
  bool teams_direct() const { return teams_direct_; }
  const Program& program() const { return prog_; }
  View x() const { return bufs_[0]; }
  View v() const { return v_; }
  View f() const { return f_; }

  void set_states(const std::vector<double>& host) { copy_in(bufs_[0], host); }
  // Values of the swept parameters, [j * M + m].
  void set_params(const std::vector<double>& host) {
    const std::size_t n = (prog_.n_vars - prog_.n_alg) * M_;
    if (host.size() != n) throw std::logic_error("ode: wrong number of swept parameter values");
    if (n == 0) return;
    auto sub = Kokkos::subview(v_, std::make_pair(prog_.n_alg * M_, prog_.n_vars * M_));
    auto mirror = Kokkos::create_mirror_view(sub);
    std::copy(host.begin(), host.end(), mirror.data());
    Kokkos::deep_copy(sub, mirror);
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
  double error_norm() const {
    const View err = dp_[3];
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "hayate::ode::dp_error", Kokkos::RangePolicy<Space>(0, err.extent(0)),
        KOKKOS_LAMBDA(const std::size_t i, double& s) { s += err(i); }, sum);
    return std::sqrt(sum / double(err.extent(0)));
  }

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
    const int team = on_host ? 1 : 4;
    const int vector = on_host ? 1 : kWarp;
    const PhaseKernel<Space, Assign> k{
        dev_.ref(), StateRef{in, v_.data(), t, M_}, assign, g0, units, blocks, team};
    Kokkos::parallel_for("hayate::ode::phase",
                         Kokkos::TeamPolicy<Space>(int((units + team - 1) / team), team, vector),
                         k);
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
    int team = 1, vector = 1;
    if (!on_host) {
      vector = kWarp;
      Kokkos::TeamPolicy<Space> probe(int(M_), 1, vector);
      const int max_team = probe.team_size_max(k, Kokkos::ParallelForTag());
      team = int(std::min<std::size_t>(std::max<std::size_t>(prog_.max_groups_per_phase(), 1),
                                       std::size_t(max_team)));
    }
    Kokkos::parallel_for("hayate::ode::persistent",
                         Kokkos::TeamPolicy<Space>(int(M_), team, vector), k);
    // The kernel swapped its pointers once per step; mirror that on the views.
    for (std::int64_t n = 0; n < steps; ++n)
      std::swap(bufs_[0], bufs_[method_ == Method::Euler ? 1 : 3]);
  }

  // Members per thread of the fused kernel. The interpreter's decode and dispatch bound the
  // ensembles, and a thread that runs W members pays them once per W evaluations (measured: 2x
  // on the H100 and on CPU threads at W = 4). On GPUs W shrinks while fewer than 384 threads per
  // multiprocessor would be left (benchmarks/NOTES.md, ninth round).
  int fused_width() const {
    if (options_.fused_width > 0) return options_.fused_width;
    if (on_host) return 4;
    const std::size_t enough = 384 * std::size_t(multiprocessors<Space>());
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
    if (bytes > Kokkos::TeamPolicy<Space>::scratch_size_max(0)) return false;
    switch (options_.fused_state) {
      case FusedState::Scratch:
        return true;
      case FusedState::Global:
        return false;
      default:
        if (on_host || threads < 64) return false;
        return shared_memory_per_multiprocessor<Space>() / (bytes + 1024) * std::size_t(threads) >=
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
    const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
    int threads = 1;
    if (!on_host) {
      const int max_team = Kokkos::TeamPolicy<Space>(1, 1, 1).team_size_max(
          fused_kernel<W>(0, 1, true, first_step, steps, dt), Kokkos::ParallelForTag());
      threads = options_.fused_members > 0 ? std::max(1, options_.fused_members / W) : 128;
      threads = std::max(1, std::min(threads, max_team));
    }
    if (options_.fused_state != FusedState::Global && options_.fused_members == 0)
      while (threads > 32 && std::size_t(threads) * W * words > limit) threads /= 2;
    const std::size_t P = std::size_t(threads) * W;
    const bool scratch = fused_in_scratch(threads, P * words);
    const std::size_t full = W > 1 ? M_ / P : 0;
    if (full > 0) {
      Kokkos::TeamPolicy<Space> policy(int(full), threads, 1);
      if (scratch) policy.set_scratch_size(0, Kokkos::PerTeam(P * words));
      Kokkos::parallel_for("hayate::ode::fused", policy,
                           fused_kernel<W>(0, threads, scratch, first_step, steps, dt));
    }
    const std::size_t first = full * P;
    if (first < M_) {
      const std::size_t rest = M_ - first;
      const int t1 = int(std::min<std::size_t>(std::size_t(threads), rest));
      const bool scratch1 = fused_in_scratch(t1, std::size_t(t1) * words);
      Kokkos::TeamPolicy<Space> policy(int((rest + t1 - 1) / t1), t1, 1);
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
          Kokkos::view_alloc("hayate::ode::fused_slots", Kokkos::WithoutInitializing),
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

  // At most one team per multiprocessor: every team is resident at once, which the grid
  // barrier needs. Host spaces run one team through all bins.
  int teams_league() const {
    return std::max(1, std::min(int(prog_.n_bins), multiprocessors<Space>()));
  }

  void teams(std::int64_t first_step, std::int64_t steps, double dt) {
    const std::size_t local_bytes = team_scratch_ + kScratchAlignment;
    const std::size_t most = std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(0));
    const int vector = on_host ? 1 : kWarp;
    // On host spaces a team program beyond level 0 goes to level 1 (the same memory there); on a
    // GPU level 1 is global memory, and the variables-only kernel is used instead.
    const int level = local_bytes <= most ? 0 : on_host ? 1 : -1;
    if (options_.teams_scratch && options_.teams_program && level >= 0)
      return teams_local(first_step, steps, dt, level, local_bytes);
    const int n_bins = int(prog_.n_bins);
    const int league = teams_league();
    if (league > 1) Kokkos::deep_copy(counter_, 0ull);
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
    Kokkos::TeamPolicy<Space> policy(league, team_size(k, widest), vector);
    if (k.scratch) policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("hayate::ode::teams", policy, k);
    check_co_residency(league);
    for (std::int64_t n = 0; n < steps; ++n)
      std::swap(bufs_[0], bufs_[method_ == Method::Euler ? 1 : 3]);
  }

  // Teams with their programs in scratch. A GPU runs the whole launch in one kernel (teams meet
  // at the grid barrier between blocks); host spaces run one kernel per block when there are
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
    const bool launch_per_block = on_host && league > 1;
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
    Kokkos::TeamPolicy<Space> policy(league, team_size(k, std::size_t(team_widest_)),
                                     on_host ? 1 : kWarp);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    for (std::int64_t done = 0; done < steps;) {
      const std::int64_t n = std::min(per_launch, steps - done);
      if (league > 1) Kokkos::deep_copy(counter_, 0ull);
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
    if (on_host) return 1;
    const int max_team =
        Kokkos::TeamPolicy<Space>(1, 1, kWarp).team_size_max(kernel, Kokkos::ParallelForTag());
    return int(std::min<std::size_t>(widest, std::size_t(max_team)));
  }

  void check_co_residency(int league) {
    int failed = 0;
    if (league > 1) Kokkos::deep_copy(failed, failed_);
    if (failed) {
      Kokkos::deep_copy(failed_, 0);
      throw CoResidencyError(
          "ode: teams mode: the grid barrier timed out, so not every team was resident at once "
          "(is another program sharing the GPU?); use run.mode: persistent or phases");
    }
  }

  static void copy_in(const View& v, const std::vector<double>& host) {
    auto mirror = Kokkos::create_mirror_view(v);
    std::copy(host.begin(), host.end(), mirror.data());
    Kokkos::deep_copy(v, mirror);
  }
  std::vector<double> copy_out(const View& v) const {
    auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<double>(mirror.data(), mirror.data() + mirror.extent(0));
  }

  Program prog_;
  std::size_t M_;
  Method method_;
  ExecMode mode_;
  EngineOptions options_;
  DeviceProgram<MemSpace> dev_;
  Kokkos::View<std::uint32_t*, MemSpace> serial_{
      upload<Kokkos::View<std::uint32_t*, MemSpace>>("hayate::ode::serial", prog_.serial)};
  Kokkos::View<std::int32_t*, MemSpace> serial_vars_{
      upload<Kokkos::View<std::int32_t*, MemSpace>>("hayate::ode::serial_vars", prog_.serial_vars)};
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

}  // namespace hayate::ode
