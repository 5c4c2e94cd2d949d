#pragma once
// The bytecode interpreter of one lane and the integrators' assign policies. Every execution
// path (device per-phase kernels, persistent kernel, serial reference) runs these functions.
#include "exec/unroll.hpp"
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
  HAYATE_DEVICE_UNROLL(1)
  for (int k = 0; k < 4; ++k)
    sweep(in[k], ts[k], AssignRK4{x, out[k], acc, a_dt[k], b_dt[k], k == 0, k == 3});
  return 3;
}

// `steps` steps from step first_step; after each, the new state is moved to b[0] (b[0] and b[r]
// swap). A non-null `ok` is polled before every step: a kernel whose grid barrier failed stops.
template <class Sweep>
KOKKOS_INLINE_FUNCTION void run_steps(Method method, std::int64_t first_step, std::int64_t steps,
                                      double dt, double** b, const Sweep& sweep,
                                      const int* ok = nullptr) {
  for (std::int64_t n = 0; n < steps && (ok == nullptr || *ok); ++n) {
    const int r = step_schedule(method, double(first_step + n) * dt, dt, b, sweep);
    double* tmp = b[0];
    b[0] = b[r];
    b[r] = tmp;
  }
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
// Members m + k * ms (k < W) share the instruction stream: constants and time are one value for
// all of them, states and variables one column each.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void leaf_values(Op kind, std::uint32_t a, const std::int32_t* itab,
                                             const double* ctab, int lane, const double* consts,
                                             const StateRef& s, std::size_t m, std::size_t ms,
                                             double* out) {
  std::size_t i = a;
  if (kind >= CONST_IND) {  // per-lane operand of a unified warp
    if (kind == CONST_IND) {
      const double c = ctab[a * kWarp + lane];
      for (int k = 0; k < W; ++k) out[k] = c;
      return;
    }
    i = std::size_t(itab[a * kWarp + lane]);
    kind = kind == STATE_IND ? PUSH_STATE : PUSH_VAR;
  }
  if (kind == PUSH_CONST || kind == PUSH_TIME) {
    const double c = kind == PUSH_CONST ? consts[i] : s.t;
    for (int k = 0; k < W; ++k) out[k] = c;
    return;
  }
  const double* col = (kind == PUSH_STATE ? s.x : s.v) + i * s.M + m;
  for (int k = 0; k < W; ++k) out[k] = col[k * ms];
}

// Runs one instruction stream for W members (m + k * ms, k < W) at once: the decode and dispatch
// of each word are paid once for all W, which is what bounds an interpreter on a GPU (W = 1 for
// every mode but the fused ensembles). itab/ctab are the lane's unified tables (unused by plain
// streams). The top of the stack lives in registers (`top`); only the values below it go through
// the array, so a binary operation with a stack argument costs one array read, and one with a
// leaf operand none. With d values on the stack, st[1..d-1] hold values 1..d-1 and st[0] takes
// the undefined top of an empty stack. The next instruction word is fetched while the current
// one runs (Prefetch). Dispatch tests leaves first, then binary operations (multiply, add,
// subtract, divide before the rest).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void pop_into(const double (*st)[W], int& sp, double* top) {
  --sp;
  for (int k = 0; k < W; ++k) top[k] = st[sp][k];
}

// Instruction fetch one word ahead: the next word's load is issued while the current one runs.
struct Prefetch {
  const std::uint32_t* code;
  int len;
  std::uint32_t next;
  KOKKOS_FORCEINLINE_FUNCTION Prefetch(const std::uint32_t* c, int n)
      : code(c), len(n), next(n > 0 ? c[0] : 0u) {}
  KOKKOS_FORCEINLINE_FUNCTION std::uint32_t take(int pc) {
    const std::uint32_t w = next;
    if (pc + 1 < len) next = code[pc + 1];
    return w;
  }
};

// A two-argument operation on W lanes (x left, y right); multiply, add, subtract and divide are
// tested first, the common cases.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void apply_binary_lanes(Op op, const double* x, const double* y,
                                                    double* top) {
  if (op == MUL)
    for (int k = 0; k < W; ++k) top[k] = x[k] * y[k];
  else if (op == ADD)
    for (int k = 0; k < W; ++k) top[k] = x[k] + y[k];
  else if (op == SUB)
    for (int k = 0; k < W; ++k) top[k] = x[k] - y[k];
  else if (op == DIV)
    for (int k = 0; k < W; ++k) top[k] = x[k] / y[k];
  else
    for (int k = 0; k < W; ++k) top[k] = apply_binary(op, x[k], y[k]);
}

// The operations that only use the stack: n-ary sums and products, integer powers, select and
// the one-argument functions (one case per function with the opcode a constant, so each inlines
// to just that function). Other opcodes leave the stack as it is.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void apply_stack_op(Op op, std::uint32_t a, const double (*st)[W],
                                                int& sp, double* top) {
  switch (op) {
    case ADDN:
    case MULN: {
      // Operands are st[sp-n+1 .. sp-1] then top, summed left to right.
      const int n = int(a);
      for (int k = 0; k < W; ++k) {
        double r = st[sp - n + 1][k];
        if (op == ADDN) {
          for (int j = sp - n + 2; j < sp; ++j) r += st[j][k];
          r += top[k];
        } else {
          for (int j = sp - n + 2; j < sp; ++j) r *= st[j][k];
          r *= top[k];
        }
        top[k] = r;
      }
      sp -= n - 1;
      break;
    }
    case POWI:
      for (int k = 0; k < W; ++k) top[k] = ipow(top[k], int(a) - kPowiBias);
      break;
    case SELECT:
      for (int k = 0; k < W; ++k) top[k] = apply_select(st[sp - 2][k], st[sp - 1][k], top[k]);
      sp -= 2;
      break;
#define HAYATE_ODE_UNARY_CASE(OP)                                 \
  case OP:                                                        \
    for (int k = 0; k < W; ++k) top[k] = apply_unary(OP, top[k]); \
    break;
      HAYATE_ODE_UNARY_CASE(EXP)
      HAYATE_ODE_UNARY_CASE(NEG)
      HAYATE_ODE_UNARY_CASE(LOG)
      HAYATE_ODE_UNARY_CASE(LOG10)
      HAYATE_ODE_UNARY_CASE(SQRT)
      HAYATE_ODE_UNARY_CASE(ABS)
      HAYATE_ODE_UNARY_CASE(SIN)
      HAYATE_ODE_UNARY_CASE(COS)
      HAYATE_ODE_UNARY_CASE(TAN)
      HAYATE_ODE_UNARY_CASE(TANH)
      HAYATE_ODE_UNARY_CASE(EXPREL)
      HAYATE_ODE_UNARY_CASE(EXPRELR)
      HAYATE_ODE_UNARY_CASE(FLOOR)
      HAYATE_ODE_UNARY_CASE(NOT)
#undef HAYATE_ODE_UNARY_CASE
    default:
      break;
  }
}

template <int W, class Assign>
KOKKOS_INLINE_FUNCTION void run_stream_members(const std::uint32_t* code, int len,
                                               const std::int32_t* itab, const double* ctab,
                                               int lane, const double* consts, const StateRef& s,
                                               std::size_t m, std::size_t ms,
                                               const Assign& assign) {
  double st[kMaxStack][W];
  double top[W];
  for (int k = 0; k < W; ++k) st[0][k] = top[k] = 0.0;
  int sp = 0;
  const std::size_t M = s.M;
  Prefetch fetch(code, len);
  for (int pc = 0; pc < len; ++pc) {
    const std::uint32_t w = fetch.take(pc);
    const Op op = op_of(w);
    const std::uint32_t a = arg_of(w);
    if (is_leaf(op)) {
      for (int k = 0; k < W; ++k) st[sp][k] = top[k];
      ++sp;
      leaf_values<W>(op, a, itab, ctab, lane, consts, s, m, ms, top);
      continue;
    }
    if (is_binary(op)) {
      double x[W], y[W];  // left and right arguments
      if (has_operand(w)) {
        double o[W];
        leaf_values<W>(operand_leaf(w), a, itab, ctab, lane, consts, s, m, ms, o);
        const bool left = operand_is_left(w);
        for (int k = 0; k < W; ++k) {
          x[k] = left ? o[k] : top[k];
          y[k] = left ? top[k] : o[k];
        }
      } else {
        --sp;
        for (int k = 0; k < W; ++k) {
          x[k] = st[sp][k];
          y[k] = top[k];
        }
      }
      apply_binary_lanes<W>(op, x, y, top);
      continue;
    }
    if (has_operand(w)) {  // select with a leaf arm, or exp of a product with a leaf
      double o[W];
      leaf_values<W>(operand_leaf(w), a, itab, ctab, lane, consts, s, m, ms, o);
      const bool left = operand_is_left(w);
      if (op == SELECT) {  // the condition is below the other arm
        --sp;
        for (int k = 0; k < W; ++k)
          top[k] = apply_select(st[sp][k], left ? o[k] : top[k], left ? top[k] : o[k]);
      } else {
        for (int k = 0; k < W; ++k) top[k] = apply_unary(EXP, left ? o[k] * top[k] : top[k] * o[k]);
      }
      continue;
    }
    switch (op) {
      case ASSIGN_ALG:
        for (int k = 0; k < W; ++k) s.v[a * M + m + k * ms] = top[k];
        pop_into(st, sp, top);
        break;
      case ASSIGN_DERIV:
        for (int k = 0; k < W; ++k) assign(a * M + m + k * ms, top[k]);
        pop_into(st, sp, top);
        break;
      case ASSIGN_ALG_IND: {
        const std::size_t i = std::size_t(itab[a * kWarp + lane]);
        for (int k = 0; k < W; ++k) s.v[i * M + m + k * ms] = top[k];
        pop_into(st, sp, top);
        break;
      }
      case ASSIGN_DERIV_IND: {
        const std::size_t i = std::size_t(itab[a * kWarp + lane]);
        for (int k = 0; k < W; ++k) assign(i * M + m + k * ms, top[k]);
        pop_into(st, sp, top);
        break;
      }
      default:
        apply_stack_op<W>(op, a, st, sp, top);
        break;
    }
  }
}

// One member's stream (every mode but the fused ensembles).
template <class Assign>
KOKKOS_INLINE_FUNCTION void run_stream(const std::uint32_t* code, int len, const std::int32_t* itab,
                                       const double* ctab, int lane, const double* consts,
                                       const StateRef& s, std::size_t m, const Assign& assign) {
  run_stream_members<1>(code, len, itab, ctab, lane, consts, s, m, 0, assign);
}

// An affine word's parts (ops.hpp, kTeamKindAffine): the function's argument ((x + a) + b) k
// or / k, the function, and what the word does to the stack with its value p + q f.
KOKKOS_INLINE_FUNCTION double affine_argument(double x, std::int32_t e, const double* c) {
  const double shifted = (x + c[0]) + c[1];
  return (e & kTeamAffineDivide) != 0 ? shifted / c[2] : shifted * c[2];
}
KOKKOS_INLINE_FUNCTION double affine_function(std::int32_t e, double t) {
  const std::int32_t fn = (e >> kTeamAffineFnShift) & 3;
  if (fn == 0) return compat::exp(t);
  if (fn == 3) return compat::log(t);
  // exprel and exprelr, as apply_unary computes them
  const double m = compat::expm1(t);
  return t == 0.0 ? 1.0 : fn == 1 ? m / t : t / m;
}
KOKKOS_INLINE_FUNCTION void affine_combine(std::int32_t e, double value, double (*st)[1], int& sp,
                                           double* top) {
  const std::uint32_t combine = std::uint32_t(e) >> kTeamAffineCombineShift;
  if (combine == AFFINE_PUSH) {
    st[sp][0] = top[0];
    ++sp;
    top[0] = value;
  } else if (combine == AFFINE_DIV) {
    top[0] = top[0] / value;
  } else {
    const double sum = top[0] + value, difference = top[0] - value, product = top[0] * value;
    top[0] = combine == AFFINE_ADD ? sum : combine == AFFINE_SUB ? difference : product;
  }
}

// A team program's stream (TeamsLayout, words made by team_word): every leaf and operand is a
// value of the team's array u: at the word's index, at the index plus the lane (a lane-offset
// word), or at the lane's entry of the unified table; the stage time is a value of u as well. A
// team's step is the latency of its longest streams, and on a GPU a branch costs several times an
// arithmetic instruction on that path, so the decode takes the operand from two bit tests of the
// word, and the binary family (a pair, an operand on either side, or a stack argument) chooses its
// arguments by selects and computes +, * and - side by side, one dispatch branch instead of up to
// six. The operations and their order are those of run_stream, so the results are bitwise the same.
static_assert(std::uint32_t(MUL) == std::uint32_t(ADD) + 1 &&
                  std::uint32_t(SUB) == std::uint32_t(ADD) + 2,
              "the teams interpreter takes ADD, MUL and SUB as one range");
// Direct: the layout's lane-offset words and table-free pairs (TeamsLayout::direct) are decoded
// too. A separate instantiation, because the extra decode lengthens every word's chain (slower
// on GPUs, see docs/dev/decisions.md), so only layouts that fit shared memory no other way use it.
// Space: the execution space whose kernel runs the stream (add_product_rounded).
// Every word costs its chain of dependent instructions and branches, so the loop spends none it
// can avoid: the next word is read without a bounds test (TeamsLayout ends the code with a spare
// word), the operand read is unconditional (index 0 for words that read nothing), and stores,
// then exp, then select (the guards of rate functions, two on LR-Line's longest stream) are
// tested before the switch, whose compare tree took stores five levels deep.
// EulerWords: whether the stream may hold the words only the Euler kernel's layouts have,
// pairs of affine words (kTeamAffinePair) and pairs that take in the stack operation after them
// (kTeamPairTakes). The RK4 kernel's layouts have none and its interpreter leaves their code
// out: pairs of affine words cost the RK4 kernel registers, and with them warps per team.
template <class Space, bool Direct, bool EulerWords = true, class Assign>
KOKKOS_INLINE_FUNCTION void run_local_stream(const std::uint32_t* code, int len,
                                             const std::int32_t* itab, int lane, double* u,
                                             const Assign& assign) {
  double st[kMaxStack][1];
  double top[1] = {0.0};
  st[0][0] = 0.0;
  int sp = 0;
  const std::int32_t* tab = itab != nullptr ? itab + lane : nullptr;  // the lane's column
  // Every stream ends with a store (TeamsLayout checks it). Its index depends on the program
  // alone, so it is read before the loop and the value stored after it: the stream's chain does
  // not pay a word's dispatch for its last store.
  const std::uint32_t last = code[len - 1];
  std::int32_t last_at;
  if constexpr (Direct)
    last_at = (last & kTeamTable) == kTeamTable
                  ? tab[arg_of(last) * kWarp]
                  : std::int32_t(arg_of(last) + ((last & kTeamPerLane) != 0 ? lane : 0));
  else
    last_at = (last & kTeamPerLane) != 0 ? tab[arg_of(last) * kWarp] : std::int32_t(arg_of(last));
  std::uint32_t next = code[0];
  for (int pc = 0; pc + 1 < len; ++pc) {
    const std::uint32_t w = next;
    next = code[pc + 1];
    const Op op = op_of(w);
    const std::uint32_t a = arg_of(w);
    const bool pair = std::uint32_t(op) >= kPairFirst;
    std::int32_t at, second_at = 0;
    if constexpr (Direct) {
      // Without a table: the operand's U index, plus the lane for a lane-offset word; a pair
      // holds both of its indices (team_pair_operands).
      const bool table = (w & kTeamTable) == kTeamTable;
      const std::uint32_t l = std::uint32_t(lane);
      const std::uint32_t x_at = pair ? (a & kTeamPairIndexMax) + ((a & (1u << 10)) != 0 ? l : 0u)
                                      : a + ((w & kTeamPerLane) != 0 ? l : 0u);
      const std::uint32_t y_at = ((a >> 11) & kTeamPairIndexMax) + ((a & (1u << 21)) != 0 ? l : 0u);
      at = table ? tab[a * kWarp] : std::int32_t(x_at);
      if (pair) second_at = table ? tab[(a + 1) * kWarp] : std::int32_t(y_at);
    } else {
      at = (w & kTeamPerLane) != 0 ? tab[a * kWarp] : std::int32_t(a);
    }
    // A word without an operand loads nothing: a load of any fixed slot would race with the
    // in-place stores other warps make to it in the same phase (racecheck sees it, even though
    // the value goes unused).
    const double o = (w & kTeamReads) != 0 ? u[at] : 0.0;
    if (pair || is_binary(op)) {
      // pair: push the top, then op(o, second value); operand: op(o, top) or op(top, o);
      // stack: op(value below the top, top). A pair that takes in the stack operation after it
      // (kTeamPairTakes) pushes nothing and leaves the top op2 its value.
      const bool stack = (w & kTeamReads) == 0;
      const bool left = operand_is_left(w);
      const bool takes = EulerWords && pair && left;
      const std::int32_t how = takes ? tab[(a + 2) * kWarp] : 0;  // read beside the operands
      const double second = pair ? u[Direct ? second_at : tab[(a + 1) * kWarp]] : st[sp - 1][0];
      const double below = top[0];
      if (pair && !takes) st[sp][0] = top[0];
      sp += pair ? (takes ? 0 : 1) : stack ? -1 : 0;
      const double x[1] = {pair || left ? o : stack ? second : top[0]};
      const double y[1] = {pair ? second : left || stack ? top[0] : o};
      const Op bop = pair ? Op(std::uint32_t(op) - kPairFirst + std::uint32_t(ADD)) : op;
      if (bop <= SUB) {  // ADD, MUL, SUB
        const double sum = x[0] + y[0], product = x[0] * y[0], difference = x[0] - y[0];
        top[0] = bop == ADD ? sum : bop == MUL ? product : difference;
      } else {
        apply_binary_lanes<1>(bop, x, y, top);
      }
      if (EulerWords && takes)
        top[0] = take_in(std::uint32_t(how) >> kTeamPairTakeShift, below, top[0]);
      continue;
    }
    if (op <= VAR_IND) {
      st[sp][0] = top[0];
      ++sp;
      top[0] = o;
      continue;
    }
    static_assert(ASSIGN_ALG + 1 == ASSIGN_DERIV && ASSIGN_DERIV + 2 == ASSIGN_DERIV_IND &&
                      ASSIGN_DERIV_IND + 1 == OP_COUNT,
                  "stores: the last opcodes, algebraic and derivative alternating");
    if (op >= ASSIGN_ALG) {
      const double value = (w & kTeamNegate) != 0 ? -top[0] : top[0];
      if (((std::uint32_t(op) - std::uint32_t(ASSIGN_ALG)) & 1u) == 0)
        u[at] = value;
      else
        assign(std::size_t(at), value);
      pop_into(st, sp, top);
      continue;
    }
    if (op == EXP) {
      if ((w & kTeamKindMask) == kTeamKindAffine << kOpBits) {
        // An affine function word: p + q f(((x + a) + b) k) (or / k) pushed, x the first row's
        // value, a, b, k, q, p at the U index of the second row (ops.hpp, kTeamKindAffine).
        const std::int32_t e = tab[(a + 1) * kWarp];
        const double* c = u + (e & kTeamAffineIndexMask);
        const double t = affine_argument(o, e, c);
        if (!EulerWords || (w & kTeamAffinePair) == 0) {
          affine_combine(e, add_product_rounded<Space>(c[4], c[3], affine_function(e, t)), st, sp,
                         top);
          continue;
        }
        // Two words in a row (kTeamAffinePair): both functions first, so that their chains
        // overlap, then each word's stack operation in order.
        const std::int32_t e2 = tab[(a + 3) * kWarp];
        const double* c2 = u + (e2 & kTeamAffineIndexMask);
        const double t2 = affine_argument(u[tab[(a + 2) * kWarp]], e2, c2);
        double r, r2;
        if (((e | e2) & (3 << kTeamAffineFnShift)) == 0) {
          r = compat::exp(t);
          r2 = compat::exp(t2);
        } else {
          r = affine_function(e, t);
          r2 = affine_function(e2, t2);
        }
        const double value = add_product_rounded<Space>(c[4], c[3], r);
        const double value2 = add_product_rounded<Space>(c2[4], c2[3], r2);
        affine_combine(e, value, st, sp, top);
        affine_combine(e2, value2, st, sp, top);
        continue;
      }
      // With an operand c: exp(c * x) (left) or exp(x * c).
      const bool operand = (w & kTeamReads) != 0, left = operand_is_left(w);
      top[0] = apply_unary(EXP, !operand ? top[0] : left ? o * top[0] : top[0] * o);
      continue;
    }
    if (op == SELECT && (w & kTeamKindMask) == kTeamKindCompare << kOpBits) {
      // A select that compares (ops.hpp, kTeamKindCompare): o is its arm, if it has one.
      const std::int32_t ex = tab[(a + 1) * kWarp], ey = tab[(a + 2) * kWarp];
      const double cx = u[ex & kTeamRowIndexMask], cy = u[ey & kTeamRowIndexMask];
      const std::uint32_t how = std::uint32_t(ex) >> kTeamCompareShift;
      const bool c = how == 0   ? cx < cy
                     : how == 1 ? cx <= cy
                     : how == 2 ? cx > cy
                     : how == 3 ? cx >= cy
                     : how == 4 ? cx == cy
                                : cx != cy;
      const bool arm = (ey & kTeamCompareArm) != 0, left = operand_is_left(w);
      const double x = arm ? (left ? o : top[0]) : st[sp - 1][0];
      const double y = arm && !left ? o : top[0];
      top[0] = c ? x : y;
      sp -= arm ? 0 : 1;
      continue;
    }
    if (op == SELECT) {
      // With an operand (a leaf arm, `left` for the true one): the condition is below the top.
      const bool operand = (w & kTeamReads) != 0, left = operand_is_left(w);
      const double c = st[sp - (operand ? 1 : 2)][0];
      const double x = operand ? (left ? o : top[0]) : st[sp - 1][0];
      const double y = operand && !left ? o : top[0];
      top[0] = apply_select(c, x, y);
      sp -= operand ? 1 : 2;
      continue;
    }
    if (op == ADDN && (w & kTeamReads) != 0) {
      // A fold (kTeamFoldRows rows): onto the top, or pushed from its first row. The rows' reads
      // are independent, so they overlap; only the additions wait on each other. Tested here
      // rather than in apply_stack_op's ADDN case, which measured slower on GPUs.
      const double first = operand_is_left(w) ? -o : o;
      if ((w & kTeamKindMask) == kTeamKindFoldPush << kOpBits) {
        st[sp][0] = top[0];
        ++sp;
        top[0] = first;
      } else {
        top[0] += first;
      }
      const std::int32_t second = tab[(a + 1) * kWarp];
      for (int k = 1; k < kTeamFoldRows; ++k) {
        const std::int32_t e = k == 1 ? second : tab[(a + std::uint32_t(k)) * kWarp];
        const double v = u[e & kTeamRowIndexMask];
        top[0] += (e & kTeamRowNegate) != 0 ? -v : v;
      }
      if ((second & kTeamFoldAdd) != 0) {
        --sp;
        top[0] = st[sp][0] + top[0];
      }
      continue;
    }
    apply_stack_op<1>(op, a, st, sp, top);
  }
  const double value = (last & kTeamNegate) != 0 ? -top[0] : top[0];
  if (((std::uint32_t(op_of(last)) - std::uint32_t(ASSIGN_ALG)) & 1u) == 0)
    u[last_at] = value;
  else
    assign(std::size_t(last_at), value);
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
