#pragma once
// The bytecode interpreter of one lane and the integrators' assign policies. Every execution
// path (device per-phase kernels, persistent kernel, serial reference) runs these functions.
#include "ode/compiler.hpp"
#include "ode/ops.hpp"

#include <cstddef>
#include <cstdint>

namespace hayate::ode {

// Euler and RK4 step with a fixed dt (step_schedule); RK45 is adaptive (dp_attempt + dp_integrate).
enum class Method { Euler, RK4, RK45 };

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
  // One call site for the four stages: the interpreter is inlined into the sweep, and four
  // copies of it overflow the GPU's instruction cache.
  const double* in[4] = {x, y1, y2, y1};
  double* out[4] = {y1, y2, y1, nullptr};
  const double ts[4] = {t, t + 0.5 * dt, t + 0.5 * dt, t + dt};
  const double a_dt[4] = {0.5 * dt, 0.5 * dt, dt, 0.0};
  const double b_dt[4] = {dt / 6.0, dt / 3.0, dt / 3.0, dt / 6.0};
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int k = 0; k < 4; ++k)
    sweep(in[k], ts[k], AssignRK4{x, out[k], acc, a_dt[k], b_dt[k], k == 0, k == 3});
  return 3;
}

// Dormand-Prince 5(4) stage s (0..6): stores k_s; stages 0-5 write the next stage input
// y_{s+1} = x + dt sum_j A[s+1][j] k_j (y_6 is the 5th-order solution); stage 6 writes the
// squared scaled error estimate dt sum_j E[j] k_j / (atol + rtol max(|x|, |x_new|)).
struct AssignDP {
  const double* x;
  const double* x_new;
  double* k[7];
  double* y_out;
  double* err;
  double coef[7];  // A[s+1] for s < 6, E for s = 6
  double dt, atol, rtol;
  int stage;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, double value) const {
    k[stage][i] = value;
    double sum = 0.0;
    for (int j = 0; j < stage; ++j) sum += coef[j] * k[j][i];
    sum += coef[stage] * value;
    if (stage < 6) {
      y_out[i] = x[i] + dt * sum;
    } else {
      const double a = x[i] < 0 ? -x[i] : x[i], b = x_new[i] < 0 ? -x_new[i] : x_new[i];
      const double e = dt * sum / (atol + rtol * (a > b ? a : b));
      err[i] = e * e;
    }
  }
};

// One Dormand-Prince attempt from x at t with step dt: seven sweeps. buf = {ya, yb, x_new, err};
// the caller reduces err to the RMS norm and, if <= 1, takes x_new as the new state.
template <class Sweep>
KOKKOS_INLINE_FUNCTION void dp_attempt(double t, double dt, const double* x, double* const* k,
                                       double* const* buf, double atol, double rtol,
                                       const Sweep& sweep) {
  const double c[7] = {0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0};
  const double A[7][6] = {
      {0, 0, 0, 0, 0, 0},
      {1.0 / 5, 0, 0, 0, 0, 0},
      {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
      {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
      {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
      {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
      {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
  const double E[7] = {71.0 / 57600,      0,          -71.0 / 16695, 71.0 / 1920,
                       -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
  const double* in = x;
  for (int s = 0; s < 7; ++s) {
    double* out = s == 5 ? buf[2] : s == 6 ? nullptr : buf[s % 2];
    AssignDP p{x,   buf[2], {k[0], k[1], k[2], k[3], k[4], k[5], k[6]},
               out, buf[3], {0, 0, 0, 0, 0, 0, 0},
               dt,  atol,   rtol,
               s};
    for (int j = 0; j < 7; ++j) p.coef[j] = s < 6 ? (j < 6 ? A[s + 1][j] : 0.0) : E[j];
    sweep(in, t + c[s] * dt, p);
    in = out;
  }
}

// The value of a leaf: `kind` is a push opcode (PUSH_CONST ... VAR_IND), `a` its operand.
KOKKOS_FORCEINLINE_FUNCTION double leaf_value(Op kind, std::uint32_t a, const std::int32_t* itab,
                                              const double* ctab, int lane, const double* consts,
                                              const StateRef& s, std::size_t m) {
  std::size_t i = a;
  if (kind >= CONST_IND) {  // per-lane operand of a unified warp
    if (kind == CONST_IND) return ctab[a * kWarp + lane];
    i = std::size_t(itab[a * kWarp + lane]);
    kind = kind == STATE_IND ? PUSH_STATE : PUSH_VAR;
  }
  if (kind == PUSH_CONST) return consts[i];
  if (kind == PUSH_TIME) return s.t;
  return (kind == PUSH_STATE ? s.x : s.v)[i * s.M + m];
}

// Runs one instruction stream. itab/ctab are the lane's unified tables (unused by plain streams).
// The top of the stack lives in a register (`top`); only the values below it go through the
// array, so a binary operation with a stack argument costs one array read, and one with a leaf
// operand none. With d values on the stack, st[1..d-1] hold values 1..d-1 and st[0] takes the
// undefined top of an empty stack. The next instruction word is fetched while the current one
// runs. Dispatch tests leaves first, then binary operations (multiply, add, subtract, divide
// before the rest).
template <class Assign>
KOKKOS_INLINE_FUNCTION void run_stream(const std::uint32_t* code, int len, const std::int32_t* itab,
                                       const double* ctab, int lane, const double* consts,
                                       const StateRef& s, std::size_t m, const Assign& assign) {
  double st[kMaxStack];
  st[0] = 0.0;
  double top = 0.0;
  int sp = 0;
  const std::size_t M = s.M;
  std::uint32_t next = len > 0 ? code[0] : 0u;
  for (int pc = 0; pc < len; ++pc) {
    const std::uint32_t w = next;
    if (pc + 1 < len) next = code[pc + 1];
    const Op op = op_of(w);
    const std::uint32_t a = arg_of(w);
    if (is_leaf(op)) {
      st[sp++] = top;
      top = leaf_value(op, a, itab, ctab, lane, consts, s, m);
      continue;
    }
    if (is_binary(op)) {
      double x, y;  // left and right arguments
      if (has_operand(w)) {
        const double o = leaf_value(operand_leaf(w), a, itab, ctab, lane, consts, s, m);
        const bool left = operand_is_left(w);
        x = left ? o : top;
        y = left ? top : o;
      } else {
        x = st[--sp];
        y = top;
      }
      if (op == MUL)
        top = x * y;
      else if (op == ADD)
        top = x + y;
      else if (op == SUB)
        top = x - y;
      else if (op == DIV)
        top = x / y;
      else
        top = apply_binary(op, x, y);
      continue;
    }
    switch (op) {
      case ADDN:
      case MULN: {
        // Operands are st[sp-n+1 .. sp-1] then top, summed left to right.
        const int n = int(a);
        double r = st[sp - n + 1];
        if (op == ADDN) {
          for (int k = sp - n + 2; k < sp; ++k) r += st[k];
          r += top;
        } else {
          for (int k = sp - n + 2; k < sp; ++k) r *= st[k];
          r *= top;
        }
        sp -= n - 1;
        top = r;
        break;
      }
      case POWI:
        top = ipow(top, int(a) - kPowiBias);
        break;
      case SELECT:
        top = apply_select(st[sp - 2], st[sp - 1], top);
        sp -= 2;
        break;
      case ASSIGN_ALG:
        s.v[a * M + m] = top;
        top = st[--sp];
        break;
      case ASSIGN_DERIV:
        assign(a * M + m, top);
        top = st[--sp];
        break;
      case ASSIGN_ALG_IND:
        s.v[std::size_t(itab[a * kWarp + lane]) * M + m] = top;
        top = st[--sp];
        break;
      case ASSIGN_DERIV_IND:
        assign(std::size_t(itab[a * kWarp + lane]) * M + m, top);
        top = st[--sp];
        break;
      // One case per operation with the opcode a constant, so the semantics inline to just that
      // operation.
      case EXP:
        top = apply_unary(EXP, top);
        break;
      case NEG:
        top = apply_unary(NEG, top);
        break;
      case LOG:
        top = apply_unary(LOG, top);
        break;
      case LOG10:
        top = apply_unary(LOG10, top);
        break;
      case SQRT:
        top = apply_unary(SQRT, top);
        break;
      case ABS:
        top = apply_unary(ABS, top);
        break;
      case SIN:
        top = apply_unary(SIN, top);
        break;
      case COS:
        top = apply_unary(COS, top);
        break;
      case TAN:
        top = apply_unary(TAN, top);
        break;
      case TANH:
        top = apply_unary(TANH, top);
        break;
      case FLOOR:
        top = apply_unary(FLOOR, top);
        break;
      case NOT:
        top = apply_unary(NOT, top);
        break;
      default:
        break;
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
