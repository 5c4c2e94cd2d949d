#pragma once
// The kernels of the per-phase, persistent and fused modes, and the device copy of a program.
// Per-phase mode launches one kernel per phase (a warp-sized team of vector lanes per group,
// sharing the group's unified stream); persistent mode runs many steps of every phase inside one
// kernel, one team per ensemble member, with team barriers between phases; fused mode
// (ensembles) runs many steps in one kernel with one thread per member evaluating the whole
// model in dependency order.
#include "ode/interp.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace hayate::ode {

// A device copy of `host`, allocated and filled on `space` (at least one element). The fence
// keeps the host staging copy alive until the transfer is done.
template <class View, class Space>
View upload(const Space& space, const std::string& label,
            const std::vector<typename View::value_type>& host) {
  View v(Kokkos::view_alloc(space, label, Kokkos::WithoutInitializing),
         std::max<std::size_t>(host.size(), 1));
  auto mirror = Kokkos::create_mirror_view(v);
  std::copy(host.begin(), host.end(), mirror.data());
  Kokkos::deep_copy(space, v, mirror);
  space.fence();
  return v;
}

// Device copies of a program.
template <class MemSpace>
struct DeviceProgram {
  Kokkos::View<std::uint32_t*, MemSpace> code;
  Kokkos::View<std::int32_t*, MemSpace> groups, lane_code, lane_len, itab, phase_begin;
  Kokkos::View<double*, MemSpace> ctab, consts;
  std::vector<std::int32_t> phase_begin_host;

  template <class Space>
  DeviceProgram(const Space& space, const Program& p)
      : code(upload<decltype(code)>(space, "hayate::ode::code", p.code)),
        groups(upload<decltype(groups)>(space, "hayate::ode::groups", p.groups)),
        lane_code(upload<decltype(lane_code)>(space, "hayate::ode::lane_code", p.lane_code)),
        lane_len(upload<decltype(lane_len)>(space, "hayate::ode::lane_len", p.lane_len)),
        itab(upload<decltype(itab)>(space, "hayate::ode::itab", p.itab)),
        phase_begin(
            upload<decltype(phase_begin)>(space, "hayate::ode::phase_begin", p.phase_begin)),
        ctab(upload<decltype(ctab)>(space, "hayate::ode::ctab", p.ctab)),
        consts(upload<decltype(consts)>(space, "hayate::ode::consts", p.consts)),
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

}  // namespace hayate::ode
