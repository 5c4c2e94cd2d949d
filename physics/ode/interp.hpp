#pragma once
// The bytecode interpreter of one lane and the integrators' assign policies. Every execution
// path (device per-phase kernels, persistent kernel, serial reference) runs these functions.
#include "ode/compiler.hpp"
#include "ode/ops.hpp"

#include <cstddef>
#include <cstdint>

namespace hayate::ode {

enum class Method { Euler, RK4 };

// Classic RK4 (step_schedule): stage s reads y_s = x + a_s dt k_{s-1} at t + c_s dt with
// a = c = (0, 1/2, 1/2, 1), and x_new = x + dt (k1/6 + k2/3 + k3/3 + k4/6).

// Raw pointers of a compiled program in one memory space.
struct ProgramRef {
  const std::uint32_t* code = nullptr;
  const std::int32_t* groups = nullptr;
  const std::int32_t* lane_code = nullptr;
  const std::int32_t* lane_len = nullptr;
  const std::int32_t* itab = nullptr;
  const double* ctab = nullptr;
  const double* consts = nullptr;
};

// Values an expression reads and writes. Arrays are [index * M + m] over M ensemble members.
struct StateRef {
  const double* x = nullptr;  // stage-input states
  double* v = nullptr;        // algebraic variables, then swept parameters
  double t = 0.0;             // stage time
  std::size_t M = 1;
};

// Assign policies: what a derivative store does. Algebraic stores always write v.
struct AssignFunction {  // f = dx/dt, for evaluation and output
  double* f;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double value) const { f[k] = value; }
};

struct AssignEuler {  // x_out = x + dt f
  const double* x;
  double* out;
  double dt;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double value) const {
    out[k] = x[k] + dt * value;
  }
};

struct AssignRK4 {  // acc accumulates x + dt sum b k; y_out = x + a dt k is the next stage's input
  const double* x;
  double* y_out;
  double* acc;
  double a_dt, b_dt;
  int first, last;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t k, double value) const {
    const double xv = x[k];
    if (first)
      acc[k] = xv + b_dt * value;
    else
      acc[k] += b_dt * value;
    if (!last) y_out[k] = xv + a_dt * value;
  }
};

// One integration step as a sequence of sweeps (each evaluates every equation once with an assign
// policy). bufs = {x, y1, y2, acc}; the new state ends up in bufs[r], r returned; the caller
// swaps bufs[0] and bufs[r]. sweep(in, t, policy) must finish all its writes before returning.
template <class Sweep>
KOKKOS_INLINE_FUNCTION int step_schedule(Method method, double t, double dt, double* const* bufs,
                                         const Sweep& sweep) {
  double* x = bufs[0];
  double* y1 = bufs[1];
  if (method == Method::Euler) {
    sweep(x, t, AssignEuler{x, y1, dt});
    return 1;
  }
  double* y2 = bufs[2];
  double* acc = bufs[3];
  // The tableau, spelled out; the running sum is x + dt/6 k1 + dt/3 k2 + dt/3 k3 + dt/6 k4.
  sweep(x, t, AssignRK4{x, y1, acc, 0.5 * dt, dt / 6.0, 1, 0});
  sweep(y1, t + 0.5 * dt, AssignRK4{x, y2, acc, 0.5 * dt, dt / 3.0, 0, 0});
  sweep(y2, t + 0.5 * dt, AssignRK4{x, y1, acc, dt, dt / 3.0, 0, 0});
  sweep(y1, t + dt, AssignRK4{x, nullptr, acc, 0.0, dt / 6.0, 0, 1});
  return 3;
}

// Runs one instruction stream. itab/ctab are the lane's unified tables (unused by plain streams).
template <class Assign>
KOKKOS_INLINE_FUNCTION void run_stream(const std::uint32_t* code, int len, const std::int32_t* itab,
                                       const double* ctab, int lane, const double* consts,
                                       const StateRef& s, std::size_t m, const Assign& assign) {
  double st[kMaxStack];
  int sp = 0;
  const std::size_t M = s.M;
  for (int pc = 0; pc < len; ++pc) {
    const std::uint32_t w = code[pc];
    const Op op = op_of(w);
    const std::uint32_t a = arg_of(w);
    switch (op) {
      case PUSH_CONST:
        st[sp++] = consts[a];
        break;
      case PUSH_STATE:
        st[sp++] = s.x[a * M + m];
        break;
      case PUSH_VAR:
        st[sp++] = s.v[a * M + m];
        break;
      case PUSH_TIME:
        st[sp++] = s.t;
        break;
      case CONST_IND:
        st[sp++] = ctab[a * kWarp + lane];
        break;
      case STATE_IND:
        st[sp++] = s.x[std::size_t(itab[a * kWarp + lane]) * M + m];
        break;
      case VAR_IND:
        st[sp++] = s.v[std::size_t(itab[a * kWarp + lane]) * M + m];
        break;
      case ADDN:
      case MULN: {
        sp -= int(a);
        double r = st[sp];
        if (op == ADDN)
          for (int k = 1; k < int(a); ++k) r += st[sp + k];
        else
          for (int k = 1; k < int(a); ++k) r *= st[sp + k];
        st[sp++] = r;
        break;
      }
      case POWI:
        st[sp - 1] = ipow(st[sp - 1], int(a) - kPowiBias);
        break;
      case SELECT:
        sp -= 2;
        st[sp - 1] = apply_select(st[sp - 1], st[sp], st[sp + 1]);
        break;
      case ASSIGN_ALG:
        s.v[a * M + m] = st[--sp];
        break;
      case ASSIGN_DERIV:
        assign(a * M + m, st[--sp]);
        break;
      case ASSIGN_ALG_IND:
        s.v[std::size_t(itab[a * kWarp + lane]) * M + m] = st[--sp];
        break;
      case ASSIGN_DERIV_IND:
        assign(std::size_t(itab[a * kWarp + lane]) * M + m, st[--sp]);
        break;
      default:
        if (is_unary(op)) {
          st[sp - 1] = apply_unary(op, st[sp - 1]);
        } else {
          --sp;
          st[sp - 1] = apply_binary(op, st[sp - 1], st[sp]);
        }
    }
  }
}

// Lane `lane` of group g for ensemble member m.
template <class Assign>
KOKKOS_INLINE_FUNCTION void run_group_lane(const ProgramRef& p, int g, int lane, const StateRef& s,
                                           std::size_t m, const Assign& assign) {
  const std::int32_t* rec = p.groups + std::size_t(g) * kGroupFields;
  if (lane >= rec[G_COUNT]) return;
  if (rec[G_KIND] == GROUP_UNIFIED) {
    run_stream(p.code + rec[G_CODE], rec[G_LEN], p.itab + std::size_t(rec[G_ITAB]) * kWarp,
               p.ctab + std::size_t(rec[G_CTAB]) * kWarp, lane, p.consts, s, m, assign);
  } else {
    const std::size_t l = std::size_t(g) * kWarp + lane;
    run_stream(p.code + p.lane_code[l], p.lane_len[l], p.itab, p.ctab, lane, p.consts, s, m,
               assign);
  }
}

}  // namespace hayate::ode
