// The teams interpreter (run_local_stream) against the general one (run_stream), word by word, on
// every execution space: every team word kind gives bitwise the values of the words it replaces.
#include "ode/interp.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace hayate::ode {
namespace {

template <class Space>
class OdeTeamWords : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(OdeTeamWords);

// The teams interpreter decodes team words (team_word) by bit tests, and for the binary family
// (pairs, an operand on either side, a stack argument) selects its arguments and the result of
// +, * and - instead of branching. Every operation of exact IEEE semantics, on signed zeros,
// infinities, NaN and subnormals, as a stack operation, with its operand on either side and as a
// pair, must give bitwise what run_stream gives; the stored value is read back by the next word,
// and deeper stacks mix the paths.
struct StreamAssign {
  double* f;
  int i;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t, double value) const { f[i] = value; }
};

template <class Space, class T>
Kokkos::View<T*, typename Space::memory_space> to_device(const std::vector<T>& host) {
  Kokkos::View<T*, typename Space::memory_space> v("copy", host.size());
  Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                           host.data(), host.size()));
  return v;
}

template <class View>
std::vector<double> to_host(const View& v) {
  std::vector<double> out(v.extent(0));
  Kokkos::deep_copy(
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), out.size()), v);
  return out;
}

// Case i runs code[begin(i), begin(i) + length(i)) on u[9i, 9i + 9), its derivative into f(i).
// (A free function: nvcc rejects device lambdas inside gtest's private TestBody.)
// The unified table: lane 0 reads u[0] (a) through row 0 and u[1] (b) through row 1 (and the folds
// rows 2-4, the affine words rows 5-84, a fold rows 85-88, comparing selects rows 89-142, below).
template <class Space, bool Direct, class Ints, class Code, class Reals>
void run_team_streams(const Code& code, const Ints& begin, const Ints& length, const Ints& itab,
                      const Reals& u, const Reals& f) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(begin.extent(0))), KOKKOS_LAMBDA(const int i) {
        run_local_stream<Space, Direct>(code.data() + begin(i), length(i), itab.data(), 0,
                                        u.data() + 9 * i, StreamAssign{f.data(), i});
      });
  Kokkos::fence();
}

// Case i of the general interpreter: run_stream over u[9i, 9i + 9) read as variables.
template <class Space, class Ints, class Code, class Reals>
void run_general_streams(const Code& code, const Ints& begin, const Ints& length, const Reals& u,
                         const Reals& f) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(begin.extent(0))), KOKKOS_LAMBDA(const int i) {
        const StateRef s{nullptr, u.data() + 9 * i, 0.0, 1};
        run_stream(code.data() + begin(i), length(i), nullptr, nullptr, 0, nullptr, s, 0,
                   StreamAssign{f.data(), i});
      });
  Kokkos::fence();
}

TYPED_TEST(OdeTeamWords, TeamStreamsMatchTheGeneralInterpreterBitwise) {
  using MemSpace = typename TypeParam::memory_space;
  const double values[] = {0.0,       -0.0,         1.5,      -2.25,   3.0,    INFINITY,
                           -INFINITY, std::nan(""), 4.9e-324, -1e-310, 1.7e308};
  std::vector<std::uint32_t> code, team_code;  // run_stream's words, run_local_stream's
  std::vector<int> begin, length, team_begin, team_length;
  // Per case: a, b, the stored slot (NaN until stored), -0.0 for folds, and an affine word's
  // constants.
  std::vector<double> u;
  // `team`: the team words of the case when they are not those of `words` (pairs).
  const auto add_case = [&](std::vector<std::uint32_t> words, double a, double b,
                            std::vector<std::uint32_t> team = {},
                            std::array<double, kTeamAffineConstants> constants = {}) {
    begin.push_back(int(code.size()));
    length.push_back(int(words.size()));
    code.insert(code.end(), words.begin(), words.end());
    if (team.empty()) team = words;
    for (std::uint32_t& w : team) w = team_word(w);  // idempotent
    team_begin.push_back(int(team_code.size()));
    team_length.push_back(int(team.size()));
    team_code.insert(team_code.end(), team.begin(), team.end());
    u.insert(u.end(), {a, b, std::nan(""), -0.0});
    u.insert(u.end(), constants.begin(), constants.end());
  };
  // Store the top in slot 2, read it back, and hand it to the derivative store.
  const std::vector<std::uint32_t> tail = {encode(ASSIGN_ALG, 2), encode(PUSH_VAR, 2),
                                           encode(ASSIGN_DERIV, 0)};
  const auto with_tail = [&](std::vector<std::uint32_t> w) {
    w.insert(w.end(), tail.begin(), tail.end());
    return w;
  };
  const std::uint32_t a = encode(PUSH_VAR, 0), b = encode(PUSH_VAR, 1);
  for (Op op : {ADD, SUB, MUL, DIV, MIN, MAX, LT, LE, GT, GE, EQ, NE, AND, OR})
    for (double x : values)
      for (double y : values) {
        add_case(with_tail({a, b, encode(op, 0)}), x, y);
        add_case(with_tail({a, encode_operand(op, PUSH_VAR, false, 1)}), x, y);
        add_case(with_tail({b, encode_operand(op, PUSH_VAR, true, 0)}), x, y);
        // A pair op(a, b) on a non-empty stack, then an operation on both.
        const std::uint32_t pair = encode_operand(
            Op(kPairFirst + (std::uint32_t(op) - std::uint32_t(ADD))), VAR_IND, false, 0);
        add_case(with_tail({b, a, encode_operand(op, PUSH_VAR, false, 1), encode(MIN, 0),
                            encode(NEG, 0)}),
                 x, y, with_tail({b, pair, encode(MIN, 0), encode(NEG, 0)}));
        // A pair of +, -, * or / taking in the stack operation after it (kTeamPairTakes): b op2
        // op(a, b), rows 143 + 3 (4 (p - 1) + c - 1): a, b, then b with op2 (c) in the top bits
        // (1 ... 4 for +, -, *, /).
        const auto combine_op = [](std::uint32_t c) {
          return c == AFFINE_ADD ? ADD : c == AFFINE_SUB ? SUB : c == AFFINE_MUL ? MUL : DIV;
        };
        for (std::uint32_t p = 1; p <= 4; ++p)
          for (std::uint32_t c = 1; c <= 4; ++c) {
            if (combine_op(p) != op) continue;
            const std::uint32_t takes =
                encode_operand(Op(kPairFirst + (std::uint32_t(op) - std::uint32_t(ADD))), VAR_IND,
                               true, 143 + 3 * (4 * (p - 1) + c - 1));
            add_case(
                with_tail({b, a, encode_operand(op, PUSH_VAR, false, 1), encode(combine_op(c), 0)}),
                x, y, with_tail({b, takes}));
          }
      }
  for (Op op : {NEG, ABS, SQRT, FLOOR, NOT})
    for (double x : values) add_case(with_tail({a, encode(op, 0)}), x, 0.0);
  for (double x : values)
    for (double y : values) {
      // a - b * sqrt(a / b), a + b * (a - b) - a, select(a, b, a), a + b + a.
      add_case(
          with_tail({a, b, a, b, encode(DIV, 0), encode(SQRT, 0), encode(MUL, 0), encode(SUB, 0)}),
          x, y);
      add_case(with_tail({a, b, a, encode_operand(SUB, PUSH_VAR, false, 1), encode(MUL, 0),
                          encode(ADD, 0), encode_operand(SUB, PUSH_VAR, false, 0)}),
               x, y);
      add_case(with_tail({a, b, a, encode(SELECT, 0)}), x, y);
      // select(a, b, a) and select(b, b, a) with a leaf arm as the operand, then one under b.
      add_case(with_tail({a, b, encode_operand(SELECT, PUSH_VAR, false, 0)}), x, y);
      add_case(with_tail({b, a, encode_operand(SELECT, PUSH_VAR, true, 1)}), x, y);
      add_case(with_tail({b, a, b, encode_operand(SELECT, PUSH_VAR, false, 0), encode(SUB, 0)}), x,
               y);
      // exp(b * a) and exp(a * b) with a factor as the operand, then one under a.
      add_case(with_tail({a, encode_operand(EXP, PUSH_VAR, true, 1)}), x, y);
      add_case(with_tail({a, b, encode_operand(EXP, PUSH_VAR, false, 0), encode(ADD, 0)}), x, y);
      // Affine words p + q f(((a + c) + d) k) (or / k), c, d, k, q, p in slots 4-8, for each
      // function and both scales, alone and pushed over a value: rows 5 + 2j (a) and 6 + 2j (the
      // constants and flags of combination j). y takes the place of the shift, of the second
      // shift, then of the scale, among constants of rate functions and identities.
      const std::array<double, kTeamAffineConstants> blocks[] = {
          {-0.0, -0.0, 1.0, 1.0, -0.0},      {40.14, -0.0, -0.1378, 1.0, 1.0},
          {77.0, -0.0, 0.04, 0.11348, -0.0}, {y, -0.0, -2.5, -13.0287, 7.7},
          {-10.66, -0.0, y, 0.13, -1.0},     {87.8929, 5.476, 0.08032, 0.49124, -0.0},
          {-87.8929, y, 0.2385, 1.0, 1.0}};
      // The words of function j (j / 2) with its scale (divide for odd j), after a leaf.
      const auto affine_source = [&](int j) {
        const Op fn = j / 2 == 0 ? EXP : j / 2 == 1 ? EXPREL : j / 2 == 2 ? EXPRELR : LOG;
        return std::vector<std::uint32_t>{
            encode_operand(ADD, PUSH_VAR, false, 4),
            encode_operand(ADD, PUSH_VAR, false, 5),
            encode_operand(j % 2 != 0 ? DIV : MUL, PUSH_VAR, false, 6),
            encode(fn, 0),
            encode_operand(MUL, PUSH_VAR, true, 7),
            encode_operand(ADD, PUSH_VAR, true, 8)};
      };
      const auto combine_op = [](int c) {
        return c == 0 ? ADD : c == 1 ? SUB : c == 2 ? MUL : DIV;
      };
      for (int j = 0; j < 8; ++j) {
        const std::uint32_t affine = with_team_kind(encode_operand(EXP, VAR_IND, false, 0),
                                                    kTeamKindAffine, std::uint32_t(5 + 2 * j));
        const std::vector<std::uint32_t> words = affine_source(j);
        for (const auto& block : blocks) {
          std::vector<std::uint32_t> alone = {a}, over = {b, a};
          alone.insert(alone.end(), words.begin(), words.end());
          over.insert(over.end(), words.begin(), words.end());
          over.push_back(encode(SUB, 0));
          add_case(with_tail(alone), x, y, with_tail({affine}), block);
          add_case(with_tail(over), x, y, with_tail({b, affine, encode(SUB, 0)}), block);
          // The word taking in the operation after it: b op value (rows 21 + 2 (4 c + j) and
          // the next, c = 0 ... 3 for +, -, *, /).
          for (int c = 0; c < 4; ++c) {
            const Op bop = combine_op(c);
            std::vector<std::uint32_t> combined = {b, a};
            combined.insert(combined.end(), words.begin(), words.end());
            combined.push_back(encode(bop, 0));
            add_case(with_tail(combined), x, y,
                     with_tail(
                         {b, with_team_kind(encode_operand(EXP, VAR_IND, false, 0), kTeamKindAffine,
                                            std::uint32_t(21 + 2 * (8 * c + j)))}),
                     block);
          }
        }
      }
      // Two affine words as one (kTeamAffinePair), rows R and R + 1 the first's, R + 2 and
      // R + 3 the second's: R = 5 + 2 j pushes functions j and j + 1 (then their difference),
      // R = 19 pushes function 7 and adds function 0, R = 21 + 2 m does combinations m and m + 1
      // of the words above.
      for (const auto& block : {blocks[1], blocks[3], blocks[6]}) {
        const auto pair = [](std::uint32_t row) {
          return with_team_kind(encode_operand(EXP, VAR_IND, false, 0) | kTeamAffinePair,
                                kTeamKindAffine, row);
        };
        for (int j = 0; j + 1 < 8; ++j) {
          std::vector<std::uint32_t> both = {b, a};
          for (std::uint32_t w : affine_source(j)) both.push_back(w);
          both.push_back(a);
          for (std::uint32_t w : affine_source(j + 1)) both.push_back(w);
          both.push_back(encode(SUB, 0));
          add_case(with_tail(both), x, y,
                   with_tail({b, pair(std::uint32_t(5 + 2 * j)), encode(SUB, 0)}), block);
        }
        std::vector<std::uint32_t> across = {b, a};
        for (std::uint32_t w : affine_source(7)) across.push_back(w);
        across.push_back(a);
        for (std::uint32_t w : affine_source(0)) across.push_back(w);
        across.push_back(encode(ADD, 0));
        add_case(with_tail(across), x, y, with_tail({b, pair(19)}), block);
        for (int m = 0; m + 1 < 32; ++m) {
          std::vector<std::uint32_t> both = {b};
          for (int k = m; k <= m + 1; ++k) {
            both.push_back(a);
            for (std::uint32_t w : affine_source(k % 8)) both.push_back(w);
            both.push_back(encode(combine_op(k / 8), 0));
          }
          add_case(with_tail(both), x, y, with_tail({b, pair(std::uint32_t(21 + 2 * m))}), block);
        }
      }
      add_case(with_tail({a, b, a, encode(ADDN, 3), a, encode(MULN, 2), encode(NEG, 0)}), x, y);
      // A stream's last store is done after the loop: a negated one (the layout's fused NEG),
      // of either kind, and an algebraic one last.
      add_case({a, b, encode(SUB, 0), encode(NEG, 0), encode(ASSIGN_ALG, 2), encode(PUSH_VAR, 2),
                encode(NEG, 0), encode(ASSIGN_DERIV, 0)},
               x, y,
               {a, b, encode(SUB, 0), encode(ASSIGN_ALG, 2) | kTeamNegate, encode(PUSH_VAR, 2),
                encode(ASSIGN_DERIV, 0) | kTeamNegate});
      add_case({a, encode_operand(MUL, PUSH_VAR, false, 1), encode(ASSIGN_ALG, 2)}, x, y);
      add_case({b, encode_operand(DIV, PUSH_VAR, true, 0), encode(NEG, 0), encode(ASSIGN_ALG, 2)},
               x, y,
               {b, encode_operand(DIV, PUSH_VAR, true, 0), encode(ASSIGN_ALG, 2) | kTeamNegate});
      // Folds over rows 0-3 (+a, +b, -b, +a) and 1-4 (+b, -b, +a, the -0.0 of slot 3): onto
      // the top, with the first row added or subtracted, and pushed over a value.
      const auto add_op = [](std::uint32_t slot, bool subtract) {
        return encode_operand(subtract ? SUB : ADD, PUSH_VAR, false, slot);
      };
      for (bool subtract : {false, true}) {
        const auto fold = [&](std::uint32_t row) {
          return with_team_kind(encode(ADDN, 0) | (subtract ? kTeamNegate : 0u),
                                std::uint32_t(VAR_IND) + 1, row);
        };
        add_case(with_tail(
                     {b, add_op(0, subtract), add_op(1, false), add_op(1, true), add_op(0, false)}),
                 x, y, with_tail({b, fold(0)}));
        add_case(with_tail({a, add_op(1, subtract), add_op(1, true), add_op(0, false)}), x, y,
                 with_tail({a, fold(1)}));
      }
      const auto push_fold = [](std::uint32_t row) {
        return with_team_kind(encode(ADDN, 0), kTeamKindFoldPush, row);
      };
      add_case(
          with_tail({b, a, add_op(1, false), add_op(1, true), add_op(0, false), encode(SUB, 0)}), x,
          y, with_tail({b, push_fold(0), encode(SUB, 0)}));
      add_case(with_tail({a, b, add_op(1, true), add_op(0, false), encode(SUB, 0)}), x, y,
               with_tail({a, push_fold(1), encode(SUB, 0)}));
      // Selects that compare a and b themselves (rows 89 + 9 c + 3 v: the arm or a spare, a with
      // the comparison, b with the arm flag), with both arms on the stack (v = 0) or a leaf arm,
      // a the true one (v = 1) or b the false one (v = 2).
      for (int c = 0; c < 6; ++c) {
        const Op cmp = Op(std::uint32_t(LT) + std::uint32_t(c));
        const auto compare = [&](int v) {
          return with_team_kind(encode(SELECT, 0) | (v == 1 ? kTeamNegate : 0u), kTeamKindCompare,
                                std::uint32_t(89 + 9 * c + 3 * v));
        };
        add_case(with_tail({a, b, encode(cmp, 0), b, a, encode(SELECT, 0)}), x, y,
                 with_tail({b, a, compare(0)}));
        add_case(with_tail({a, b, encode(cmp, 0), b, encode_operand(SELECT, PUSH_VAR, true, 0)}), x,
                 y, with_tail({b, compare(1)}));
        add_case(with_tail({a, b, encode(cmp, 0), a, encode_operand(SELECT, PUSH_VAR, false, 1)}),
                 x, y, with_tail({a, compare(2)}));
      }
      // A pushed fold that adds the value below (rows 85-88: a, b with kTeamFoldAdd, -b, a).
      add_case(
          with_tail({b, a, add_op(1, false), add_op(1, true), add_op(0, false), encode(ADD, 0)}), x,
          y, with_tail({b, push_fold(85)}));
    }
  const int n = int(begin.size());

  // Expected: run_stream in the same space (its exp, log and expm1 may differ from the host's in
  // the last place), whose leaves read the same values as variables.
  std::vector<double> u_expected, f_expected;
  {
    auto d_u = to_device<TypeParam>(u);
    Kokkos::View<double*, MemSpace> d_f("f", std::size_t(n));
    Kokkos::deep_copy(d_f, std::nan(""));
    run_general_streams<TypeParam>(to_device<TypeParam>(code), to_device<TypeParam>(begin),
                                   to_device<TypeParam>(length), d_u, d_f);
    u_expected = to_host(d_u);
    f_expected = to_host(d_f);
  }

  // The table-free words of a direct layout (TeamsLayout::direct): every U access as a
  // lane-offset word (lane 0 reads the index itself) and the table pairs as direct pairs.
  std::vector<std::uint32_t> direct_code = team_code;
  for (std::uint32_t& w : direct_code) {
    if (op_of(w) >= kPairFirst && (w & kTeamPairTakes) != 0)
      continue;  // pairs that take in an operation keep their table rows
    else if (op_of(w) >= kPairFirst)
      w = with_team_kind(w, std::uint32_t(PUSH_VAR) + 1, team_pair_operands(0, true, 1, true));
    else if (((op_of(w) == EXP || op_of(w) == SELECT) && (w & kTeamKindMask) == kTeamKindAffine
                                                                                    << kOpBits) ||
             op_of(w) == ADDN)
      continue;  // affine words, comparing selects and folds keep their table rows
    else if ((w & kTeamReads) != 0)
      w = with_team_kind(w, kTeamKindLane, arg_of(w));
  }
  // Lane 0's rows: a, b, -b, a, the -0.0, as the folds above read them; then a and the
  // constants with each function and scale, as the affine words read them.
  std::vector<int> itab(191 * kWarp, 0);
  for (std::uint32_t p = 1; p <= 4; ++p)
    for (std::uint32_t c = 1; c <= 4; ++c) {
      const std::size_t base = std::size_t(143 + 3 * (4 * (p - 1) + c - 1)) * kWarp;
      itab[base + kWarp] = 1;
      itab[base + 2 * kWarp] = 1 | std::int32_t(c << kTeamPairTakeShift);
    }
  for (int c = 0; c < 6; ++c)
    for (int v = 0; v < 3; ++v) {
      const std::size_t base = std::size_t(89 + 9 * c + 3 * v) * kWarp;
      itab[base] = v == 2 ? 1 : 0;
      itab[base + kWarp] = std::int32_t(std::uint32_t(c) << kTeamCompareShift);
      itab[base + 2 * kWarp] = 1 | (v > 0 ? kTeamCompareArm : 0);
    }
  itab[86 * kWarp] = 1 | kTeamFoldAdd;
  itab[87 * kWarp] = 1 | kTeamRowNegate;
  itab[kWarp] = 1;
  itab[2 * kWarp] = 1 | kTeamRowNegate;
  itab[4 * kWarp] = 3;
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 5; ++c)
      itab[std::size_t(c == 0 ? 6 + 2 * j : 22 + 2 * (8 * (c - 1) + j)) * kWarp] =
          4 | (j / 2) << kTeamAffineFnShift | (j % 2 != 0 ? kTeamAffineDivide : 0) |
          std::int32_t(std::uint32_t(c) << kTeamAffineCombineShift);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant == 0   ? "table decode"
                 : variant == 1 ? "direct decode, table words"
                                : "direct decode, direct words");
    auto d_u = to_device<TypeParam>(u);
    Kokkos::View<double*, MemSpace> d_f("f", std::size_t(n));
    Kokkos::deep_copy(d_f, std::nan(""));
    const auto d_code = to_device<TypeParam>(variant == 2 ? direct_code : team_code);
    if (variant == 0)
      run_team_streams<TypeParam, false>(d_code, to_device<TypeParam>(team_begin),
                                         to_device<TypeParam>(team_length),
                                         to_device<TypeParam>(itab), d_u, d_f);
    else
      run_team_streams<TypeParam, true>(d_code, to_device<TypeParam>(team_begin),
                                        to_device<TypeParam>(team_length),
                                        to_device<TypeParam>(itab), d_u, d_f);
    const std::vector<double> got_u = to_host(d_u), got_f = to_host(d_f);
    const auto same = [](double p, double q) {
      return (std::isnan(p) && std::isnan(q)) || std::memcmp(&p, &q, sizeof(double)) == 0;
    };
    int bad = 0;
    for (int i = 0; i < n && bad < 10; ++i) {
      const std::size_t k = std::size_t(i);
      if (same(got_u[9 * k + 2], u_expected[9 * k + 2]) && same(got_f[k], f_expected[k])) continue;
      ++bad;
      ADD_FAILURE() << "case " << i << " a " << u[9 * k] << " b " << u[9 * k + 1] << ": stored "
                    << got_u[9 * k + 2] << " expected " << u_expected[9 * k + 2] << ", derivative "
                    << got_f[k] << " expected " << f_expected[k] << "\n"
                    << disassemble(code, std::size_t(begin[k]), std::size_t(length[k]));
    }
  }
  // The cases cover both paths of the interpreter.
  EXPECT_GT(n, 2000);
}

}  // namespace
}  // namespace hayate::ode
