#pragma once
// The device interpreter. Per-phase mode launches one kernel per phase (a warp-sized team of
// vector lanes per group, sharing the group's unified stream); persistent mode runs many steps of
// every phase inside one kernel, one team per ensemble member, with team barriers between phases.
#include "ode/adaptive.hpp"
#include "ode/interp.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hayate::ode {

enum class ExecMode { Phases, Persistent };

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
    for (std::int64_t n = 0; n < steps; ++n) {
      const int r = step_schedule(method, double(first_step + n) * dt, dt, b, sweep);
      double* tmp = b[0];
      b[0] = b[r];
      b[r] = tmp;
    }
  }
};

template <class Space>
class Engine {
 public:
  using MemSpace = typename Space::memory_space;
  using View = Kokkos::View<double*, MemSpace>;
  static constexpr bool on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

  Engine(const Program& prog, std::size_t members, Method method, ExecMode mode)
      : prog_(prog),
        M_(members),
        method_(method),
        mode_(mode),
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
    if (!prog.constant_vars.empty()) {
      auto v = Kokkos::create_mirror_view(v_);
      for (const auto& [index, value] : prog.constant_vars)
        for (std::size_t m = 0; m < members; ++m) v(index * members + m) = value;
      Kokkos::deep_copy(v_, v);
    }
  }

  std::size_t members() const { return M_; }
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
  DeviceProgram<MemSpace> dev_;
  View bufs_[4];
  View k_[7], dp_[4];  // rk45: stage derivatives; ya, yb, x_new, err
  View v_, f_;
};

}  // namespace hayate::ode
