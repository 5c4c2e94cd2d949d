#pragma once
// The operation set of the model language and the semantics of every opcode, written once and
// used by the AST evaluator, the constant folder, the serial reference interpreter and the device
// kernels alike.
#include "compat/kokkos_compat.hpp"
#include "cuda/rounding.hpp"
#include "exec/exec_traits.hpp"

#include <cstdint>

namespace hayate::ode {

// Stack bytecode. An instruction is one 32-bit word: opcode in the low 6 bits, then a 3-bit
// operand kind and a side bit used by binary operations, then the operand (22 bits). A binary
// operation whose argument is a leaf (constant, state, variable, time) takes that leaf from its
// operand instead of the stack ("add the constant 3"), which halves the instructions and the
// stack traffic of typical rate expressions; kind 0 means both arguments come from the stack.
enum Op : std::uint32_t {
  // Leaves: push one value.
  PUSH_CONST,  // constant pool[arg]
  PUSH_STATE,  // stage-input state[arg]
  PUSH_VAR,    // algebraic or swept-parameter variable[arg]
  PUSH_TIME,   // stage time
  CONST_IND,   // per-lane constant: unified table slot arg
  STATE_IND,   // per-lane state index: unified table slot arg
  VAR_IND,     // per-lane variable index: unified table slot arg
  // Operations of two arguments, one range (ADD ... OR) so that the interpreter's test for them
  // is one comparison. Comparisons and logic give 1.0 for true, 0.0 for false; any non-zero
  // value is true.
  ADD,
  MUL,
  SUB,
  DIV,
  POW,
  MIN,
  MAX,
  MOD,
  LT,
  LE,
  GT,
  GE,
  EQ,
  NE,
  AND,
  OR,
  // Other arithmetic.
  ADDN,  // pops arg values, sums them left to right
  MULN,  // pops arg values, multiplies left to right
  POWI,  // x^n by repeated multiplication, n = arg - 64 (|n| <= 16, n != 0)
  NEG,
  // Functions.
  EXP,  // with an operand c: exp(c * x) (takes_operand)
  LOG,
  LOG10,
  SQRT,
  ABS,
  SIN,
  COS,
  TAN,
  TANH,
  EXPREL,   // (e^x - 1) / x, 1 at x = 0
  EXPRELR,  // x / (e^x - 1), 1 at x = 0
  FLOOR,
  NOT,
  SELECT,  // c, a, b -> c != 0 ? a : b; with an operand, that is a or b (takes_operand)
  // Stores: pop the value into its target.
  ASSIGN_ALG,        // variable[arg] = v
  ASSIGN_DERIV,      // d state[arg] / dt = v, applied by the integrator's assign policy
  ASSIGN_ALG_IND,    // per-lane target: unified table slot arg
  ASSIGN_DERIV_IND,  // per-lane target: unified table slot arg
  OP_COUNT
};

// Team programs only (TeamsLayout): a leaf followed by a binary operation with a leaf operand,
// fused into one dispatch. Opcode kPairFirst + (op - ADD), with a VAR_IND operand (slot k),
// pushes op(x, y): x is read through table slot k, y through slot k + 1.
inline constexpr std::uint32_t kPairFirst = OP_COUNT;
inline constexpr std::uint32_t kPairLast = kPairFirst + (std::uint32_t(OR) - std::uint32_t(ADD));

inline constexpr int kOpBits = 6;
inline constexpr int kKindBits = 3;
inline constexpr int kArgShift = kOpBits + kKindBits + 1;
inline constexpr std::uint32_t kMaxOperand = (1u << (32 - kArgShift)) - 1;
static_assert(kPairLast < (1u << kOpBits), "opcodes must fit their field");
// Fixed evaluation stack per lane; the compiler rejects expressions that need more.
inline constexpr int kMaxStack = 24;
// Lanes that share one opcode stream (a CUDA warp); fixed so a compiled program is the same on
// every backend.
inline constexpr int kWarp = 32;
inline constexpr int kPowiBias = 64;
inline constexpr int kPowiMax = 16;

KOKKOS_INLINE_FUNCTION constexpr std::uint32_t encode(Op op, std::uint32_t arg) {
  return static_cast<std::uint32_t>(op) | (arg << kArgShift);
}
// A binary operation with a leaf argument: `leaf` is the leaf's push opcode (PUSH_CONST ...
// VAR_IND); `left` when the leaf is the left argument (c - x), else the right one (x - c).
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t encode_operand(Op op, Op leaf, bool left,
                                                              std::uint32_t arg) {
  return static_cast<std::uint32_t>(op) | ((static_cast<std::uint32_t>(leaf) + 1) << kOpBits) |
         (left ? 1u << (kOpBits + kKindBits) : 0u) | (arg << kArgShift);
}
KOKKOS_INLINE_FUNCTION constexpr Op op_of(std::uint32_t word) {
  return static_cast<Op>(word & ((1u << kOpBits) - 1));
}
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t arg_of(std::uint32_t word) {
  return word >> kArgShift;
}
// Whether a binary operation (or a select) takes one argument from its operand.
KOKKOS_INLINE_FUNCTION constexpr bool has_operand(std::uint32_t word) {
  return ((word >> kOpBits) & ((1u << kKindBits) - 1)) != 0;
}
// The leaf opcode of a binary operation's operand (valid when has_operand).
KOKKOS_INLINE_FUNCTION constexpr Op operand_leaf(std::uint32_t word) {
  return static_cast<Op>(((word >> kOpBits) & ((1u << kKindBits) - 1)) - 1);
}
KOKKOS_INLINE_FUNCTION constexpr bool operand_is_left(std::uint32_t word) {
  return ((word >> (kOpBits + kKindBits)) & 1u) != 0;
}
// A word of a team program (TeamsLayout): every word that reads or writes the team's array U
// says so in its operand-kind field, leaves and stores included: PUSH_VAR + 1 for one U index,
// VAR_IND + 1 for a row of the unified table (a U index per lane), 0 for none. The teams
// interpreter then decodes a word with two bit tests instead of comparing its opcode.
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t team_word(std::uint32_t word) {
  const std::uint32_t op = word & ((1u << kOpBits) - 1);
  const std::uint32_t kind = op == std::uint32_t(VAR_IND) || op == std::uint32_t(ASSIGN_ALG_IND) ||
                                     op == std::uint32_t(ASSIGN_DERIV_IND)
                                 ? std::uint32_t(VAR_IND) + 1
                             : op == std::uint32_t(PUSH_VAR) || op == std::uint32_t(ASSIGN_ALG) ||
                                     op == std::uint32_t(ASSIGN_DERIV)
                                 ? std::uint32_t(PUSH_VAR) + 1
                                 : 0u;
  return kind == 0 ? word : (word & ~(((1u << kKindBits) - 1) << kOpBits)) | (kind << kOpBits);
}
// Operand-kind bits of a team word: any U access; a per-lane one (a table row or an index
// plus the lane); a table row (both bits of kTeamTable).
inline constexpr std::uint32_t kTeamReads = ((1u << kKindBits) - 1) << kOpBits;
inline constexpr std::uint32_t kTeamPerLane = 4u << kOpBits;
inline constexpr std::uint32_t kTeamTable = 6u << kOpBits;
static_assert(((std::uint32_t(VAR_IND) + 1) << kOpBits & kTeamTable) == kTeamTable &&
                  ((std::uint32_t(PUSH_VAR) + 1) << kOpBits & kTeamPerLane) == 0,
              "team_word's kinds: VAR_IND reads a table row, PUSH_VAR one U index");
// A per-lane operand that needs no table: lane l reads U index arg + l. The layout uses it for
// the rows whose entries run up by one from lane to lane (the cells of a network in lane order),
// which takes the table read off a word's dependent chain.
inline constexpr std::uint32_t kTeamKindLane = 5u;
static_assert((kTeamKindLane << kOpBits & kTeamPerLane) != 0 &&
                  (kTeamKindLane << kOpBits & kTeamTable) != kTeamTable,
              "a lane-offset word is per-lane without a table row");
// A pair word without a table (kind PUSH_VAR + 1): its operand field holds both U indices,
// x in bits 0-9 (plus the lane when bit 10 is set) and y in bits 11-20 (plus the lane when
// bit 21 is set); teams whose U has more than kTeamPairIndexMax + 1 values keep table pairs.
inline constexpr std::uint32_t kTeamPairIndexMax = 1023u;
static_assert(22 == 32 - kArgShift, "a direct pair needs 22 operand bits");
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t team_pair_operands(std::uint32_t x, bool x_lane,
                                                                  std::uint32_t y, bool y_lane) {
  return x | (x_lane ? 1u << 10 : 0u) | (y << 11) | (y_lane ? 1u << 21 : 0u);
}
// A team store word with this bit (the side bit, which stores do not use otherwise) stores the
// negated value: the layout fuses a NEG before a store into it (-x is exact, so the results are
// those of the two words).
inline constexpr std::uint32_t kTeamNegate = 1u << (kOpBits + kKindBits);
// A team EXP word of this kind (a table row like VAR_IND + 1, with bit 0 clear) is an affine
// function word: the layout fuses a leaf x, the shift, scale and function of a rate function's
// exponential and the scale and offset after it (`push V; add 40.14; exp -0.1378; add 1`, or
// `push Cai; log; mul 13.0287; sub 7.7`) into one word that pushes
//   p + q * f((x + a) * k)   or   p + q * f((x + a) / k),   f = exp, exprel, exprelr or log.
// (The shift may come in two parts, ((x + a) + b) k: `V - E_K1 + 5.476` of LR1991's beta_K1.)
// Its first table row is x's (per lane); the entries of the second hold the U index of the
// constants a, b, k, q, p (kTeamAffineConstants consecutive values; each lane's own block, one
// per tuple, so a warp may hold several rate functions of one shape)
// and, in their top bits, f and whether k divides. A part the words did not have takes its
// identity (a = b = -0.0, k = q = 1, p = -0.0: x + -0.0 is x and x * 1 is x, signed zeros,
// infinities and NaN included), a subtraction adds the negated constant (x - y is x + (-y)), and
// the scale and offset are rounded apart (no fused multiply-add), so the results are bitwise those
// of the words it replaces. Only the EXP branch of the teams loop tests it, so no other word pays
// for it.
inline constexpr std::uint32_t kTeamKindAffine = 6u;
inline constexpr std::uint32_t kTeamKindMask = ((1u << kKindBits) - 1) << kOpBits;
static_assert((kTeamKindAffine << kOpBits & kTeamTable) == kTeamTable &&
                  kTeamKindAffine != std::uint32_t(VAR_IND) + 1,
              "an affine word decodes its first row like a table word; its kind tells it apart");
inline constexpr int kTeamAffineConstants = 5;  // a, b, k, q, p
inline constexpr int kTeamAffineFnShift = 26;   // 0 exp, 1 exprel, 2 exprelr, 3 log
inline constexpr std::int32_t kTeamAffineDivide = 1 << 28;
// An affine word followed by a stack +, -, * or / takes it in (`AF; AF; div` of a rate function,
// `AF; add` of a sum): instead of pushing r it leaves top op r on the stack, the operation the
// stack word did on the same two values, so the bits are the same and the stream a word shorter.
// The three top bits of the constants' row: 0 push, else the operation.
inline constexpr int kTeamAffineCombineShift = 29;
enum TeamAffineCombine : std::uint32_t {
  AFFINE_PUSH = 0,
  AFFINE_ADD = 1,
  AFFINE_SUB = 2,
  AFFINE_MUL = 3,
  AFFINE_DIV = 4
};
inline constexpr std::int32_t kTeamAffineIndexMask = (1 << kTeamAffineFnShift) - 1;
// What a pair that takes in the stack operation after it (kTeamPairTakes) leaves on the stack:
// the value below it op its own value, as the stack word computed them (below + v, below - v,
// below * v, below / v).
KOKKOS_INLINE_FUNCTION double take_in(std::uint32_t how, double below, double value) {
  if (how == AFFINE_DIV) return below / value;
  const double sum = below + value, difference = below - value, product = below * value;
  return how == AFFINE_ADD ? sum : how == AFFINE_SUB ? difference : product;
}
// A pair word (table rows) with the side bit, which pairs do not use otherwise, takes in the
// stack +, -, * or / after it (`Pmul g_K, X; mul` of I_K, `Pmul; div` of dV/dt): instead of
// pushing x op y it leaves below op2 (x op y), the operation the stack word did on the same two
// values, so the bits are the same and the stream a word shorter. A third table row holds op2
// (a TeamAffineCombine) in the top bits of its entries (above a U index that is not read).
// Layouts of the Euler kernel only, which decodes it (run_local_stream).
inline constexpr std::uint32_t kTeamPairTakes = 1u << (kOpBits + kKindBits);
inline constexpr int kTeamPairTakeShift = kTeamAffineCombineShift;
// An affine word with the side bit (which no other affine word sets) is two in a row: its four
// table rows are the first word's two, then the second's. Neither reads the other's value, so
// the interpreter computes both functions side by side (their dependent chains overlap), then
// applies the first to the stack and the second, in the words' order: the same bits.
inline constexpr std::uint32_t kTeamAffinePair = 1u << (kOpBits + kKindBits);
static_assert(kMaxOperand <= std::uint32_t(kTeamAffineIndexMask),
              "an affine row's flags above its U index");
// p + q * r with the product rounded before the sum, as separate words round them. Host
// compilers round the expression as written; GPU compilers fuse a multiply and an add by
// default, so on GPUs the backend's own operations keep the two roundings
// (backends/cuda/rounding.hpp).
template <class Space>
KOKKOS_INLINE_FUNCTION double add_product_rounded(double p, double q, double r) {
  if constexpr (core::ExecTraits<Space>::is_gpu)
    return cuda::add_product_rn(p, q, r);
  else
    return p + q * r;
}
// A team ADDN word with a table kind is a fold: the layout fuses a run of additions and
// subtractions of leaves (`add I_Kp; add I_b; add I_stim; sub I_gap` of dV/dt) into one word that
// reads kTeamFoldRows consecutive table rows. Kind VAR_IND + 1 folds them onto the top of the
// stack; kind kTeamKindFoldPush pushes a new value that starts from the first row (a pair's left
// argument). The first row is an index like any table word's (the side bit subtracts it from the
// top); the entries of the others carry kTeamRowNegate for a subtraction, and rows past the run
// read a -0.0 (x + -0.0 is x, signed zeros and NaN included). x - y is x + (-y) in IEEE
// arithmetic, so the results are bitwise those of the words it replaces. Only the stack
// operations' branch of the teams loop tests it.
inline constexpr std::uint32_t kTeamKindFoldPush = 6u;
inline constexpr int kTeamFoldRows = 4;
inline constexpr std::int32_t kTeamRowNegate = 1 << 30;
// A pushed fold followed by a stack + takes it in (I_K1 + (I_Na + I_si + I_K) of dV/dt): this
// flag on its second row's entries adds the value below to the fold's sum (value below + sum,
// the stack word's own operation), one word less on the stream.
inline constexpr std::int32_t kTeamFoldAdd = 1 << 29;
inline constexpr std::int32_t kTeamRowIndexMask = kTeamFoldAdd - 1;
// A team SELECT word of this kind (a table kind, told apart by its opcode) makes its condition
// itself: the layout fuses a comparison pair of two leaves (`Plt V, -40` of a rate function)
// into the select that takes its value. Three table rows: the arm (a select with a leaf arm,
// the side bit for the true one) or a spare, then the comparison's left and right argument.
// The second row's entries carry the comparison (LT, LE, GT, GE, EQ, NE as 0-5) in their top
// bits, the third's kTeamCompareArm for a select with a leaf arm. The same comparison of the
// same values picks the same arm, so the results are bitwise those of the two words.
inline constexpr std::uint32_t kTeamKindCompare = 6u;
inline constexpr int kTeamCompareShift = 29;
inline constexpr std::int32_t kTeamCompareArm = kTeamFoldAdd;
static_assert(kMaxOperand <= std::uint32_t(kTeamRowIndexMask), "a row's flags above its U index");
// The same team word with another operand kind (3 bits) and operand.
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t with_team_kind(std::uint32_t word,
                                                              std::uint32_t kind,
                                                              std::uint32_t arg) {
  return (word & ((1u << kOpBits) - 1)) | (kind << kOpBits) |
         (word & (1u << (kOpBits + kKindBits))) | (arg << kArgShift);
}

// The same word with another operand (the unify pass moves per-lane operands to tables).
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t with_operand(std::uint32_t word, Op leaf,
                                                            std::uint32_t arg) {
  return encode_operand(op_of(word), leaf, operand_is_left(word), arg);
}

KOKKOS_INLINE_FUNCTION constexpr bool is_leaf(Op op) {
  return op <= VAR_IND;
}
// Operations of two arguments, which may take one of them from an operand.
KOKKOS_INLINE_FUNCTION constexpr bool is_binary(Op op) {
  return std::uint32_t(op) - std::uint32_t(ADD) <= std::uint32_t(OR) - std::uint32_t(ADD);
}
// Operations that may take a leaf argument from their operand: the binary ones; select, whose
// leaf arm (the constant of `if(V < -40, rate, 0)`, the guard of most rate functions) is its
// operand, `left` for the true arm, else the false one, the condition and the other arm on the
// stack; and exp, whose operand multiplies its argument first (exp(0.04 * (V + 77)) of every
// rate function), `left` for c * x, else x * c. Each saves a word of the stream.
KOKKOS_INLINE_FUNCTION constexpr bool takes_operand(Op op) {
  return is_binary(op) || op == SELECT || op == EXP;
}
// Whether a program word (not a team word, whose kind bits mark every U access) has an operand.
KOKKOS_INLINE_FUNCTION constexpr bool word_has_operand(std::uint32_t word) {
  return takes_operand(op_of(word)) && has_operand(word);
}

KOKKOS_INLINE_FUNCTION double ipow(double x, int n) {
  const int k = n < 0 ? -n : n;
  double r = x;
  for (int i = 1; i < k; ++i) r *= x;
  return n < 0 ? 1.0 / r : r;
}

// x^y; small integer exponents (the m^3 h and n^4 of channel gates) multiply exactly as POWI.
KOKKOS_INLINE_FUNCTION double power(double a, double b) {
  if (b == compat::floor(b) && b != 0.0 && b >= -kPowiMax && b <= kPowiMax) return ipow(a, int(b));
  return compat::pow(a, b);
}

KOKKOS_INLINE_FUNCTION constexpr bool is_unary(Op op) {
  return op == NEG || (op >= EXP && op <= FLOOR) || op == NOT;
}

KOKKOS_INLINE_FUNCTION double truth(bool b) {
  return b ? 1.0 : 0.0;
}

// One-argument operations.
KOKKOS_INLINE_FUNCTION double apply_unary(Op op, double a) {
  switch (op) {
    case NEG:
      return -a;
    case EXP:
      return compat::exp(a);
    case LOG:
      return compat::log(a);
    case LOG10:
      return compat::log(a) * 0.43429448190325182;
    case SQRT:
      return compat::sqrt(a);
    case ABS:
      return compat::fabs(a);
    case SIN:
      return compat::sin(a);
    case COS:
      return compat::cos(a);
    case TAN:
      return compat::tan(a);
    case TANH:
      return compat::tanh(a);
    case EXPREL:
      return a == 0.0 ? 1.0 : compat::expm1(a) / a;
    case EXPRELR:
      return a == 0.0 ? 1.0 : a / compat::expm1(a);
    case FLOOR:
      return compat::floor(a);
    case NOT:
      return truth(a == 0.0);
    default:
      return a;
  }
}

// Two-argument operations (a is the left operand).
KOKKOS_INLINE_FUNCTION double apply_binary(Op op, double a, double b) {
  switch (op) {
    case ADD:
      return a + b;
    case MUL:
      return a * b;
    case SUB:
      return a - b;
    case DIV:
      return a / b;
    case POW:
      return power(a, b);
    case MIN:
      return a < b ? a : b;
    case MAX:
      return a > b ? a : b;
    case MOD:
      return a - b * compat::floor(a / b);
    case LT:
      return truth(a < b);
    case LE:
      return truth(a <= b);
    case GT:
      return truth(a > b);
    case GE:
      return truth(a >= b);
    case EQ:
      return truth(a == b);
    case NE:
      return truth(a != b);
    case AND:
      return truth(a != 0.0 && b != 0.0);
    case OR:
      return truth(a != 0.0 || b != 0.0);
    default:
      return a;
  }
}

KOKKOS_INLINE_FUNCTION double apply_select(double c, double a, double b) {
  return c != 0.0 ? a : b;
}

// Host-side metadata.
const char* op_name(Op op);
// Values an instruction word pops (n-ary operations pop `arg` values; a binary operation with
// an operand pops one) and pushes (0 for stores).
int word_pops(std::uint32_t word);
int word_pushes(std::uint32_t word);

}  // namespace hayate::ode
