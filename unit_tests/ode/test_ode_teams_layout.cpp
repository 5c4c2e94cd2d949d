// Teams-mode program layouts (TeamsLayout), on the host: team programs evaluate like the
// reference interpreter, in any number of teams and with halos, and each phase's groups are
// placed on the warp schedulers.
#include "cli_runner.hpp"
#include "ode/interp.hpp"
#include "ode/reference.hpp"
#include "ode/teams.hpp"
#include "ode/teams_kernels.hpp"
#include "random_model.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hayate::ode {
namespace {

// How many times the program's streams read each variable (a lane's read counts once).
std::vector<int> variable_reads(const Program& p) {
  std::vector<int> reads(p.n_vars, 0);
  for (std::size_t g = 0; g < p.n_groups(); ++g) {
    const int count = p.group(g, G_COUNT);
    for (int l = 0; l < count; ++l) {
      const bool unified = p.group(g, G_KIND) == GROUP_UNIFIED;
      const std::size_t begin = unified ? std::size_t(p.group(g, G_CODE))
                                        : std::size_t(p.lane_code[g * kWarp + std::size_t(l)]);
      const int len = unified ? p.group(g, G_LEN) : p.lane_len[g * kWarp + std::size_t(l)];
      for (int k = 0; k < len; ++k) {
        const std::uint32_t w = p.code[begin + std::size_t(k)];
        const Op leaf = word_has_operand(w) ? operand_leaf(w) : op_of(w);
        if (leaf == PUSH_VAR)
          ++reads[arg_of(w)];
        else if (leaf == VAR_IND)
          ++reads[std::size_t(
              p.itab[(std::size_t(p.group(g, G_ITAB)) + arg_of(w)) * kWarp + std::size_t(l)])];
      }
    }
  }
  return reads;
}

// The team programs of teams mode, on the host for any number of teams: every leaf reads the
// team's value array U, each state is owned (published) by exactly one team, U holds no value
// twice, and the derivatives and variables they compute equal the reference interpreter's
// bitwise (the operations are the same; only where the operands come from changed), in the
// halo too. Phases run team by team, as the bins of a phase never read each other.
TEST(OdeTeamsLayout, TeamProgramsEvaluateLikeTheReference) {
  const FlatModel line = load_model_file(test::source_path("inputs/ode/lr_line.model.yaml"));
  test::RandomModel gen(5);
  const FlatModel random = load_model_string(gen.yaml(10, 3, 45), "random.yaml");
  struct Case {
    const FlatModel* model;
    bool unify;
    int partitions, teams;
    bool pair_leaves;
    int halo;
  };
  for (const bool direct : {false, true})
    for (const auto& [model, unify, partitions, teams, pair_leaves, halo] :
         {Case{&line, true, 0, 1, true, 0}, Case{&line, true, 0, 3, true, 0},
          Case{&line, true, 8, 8, true, 0}, Case{&line, true, 0, 3, false, 0},
          Case{&random, true, 3, 2, true, 0}, Case{&random, true, 3, 2, false, 0},
          Case{&random, false, 4, 3, true, 0}, Case{&line, true, 8, 8, true, 2},
          Case{&line, true, 25, 25, false, 5}, Case{&random, true, 3, 3, true, 1},
          Case{&random, false, 4, 4, true, 2}}) {
      SCOPED_TRACE(testing::Message()
                   << "unify " << unify << " bins " << partitions << " teams " << teams << " pairs "
                   << pair_leaves << " halo " << halo << " direct " << direct);
      CompilerOptions o = all_passes();
      o.unify = o.pad = unify;
      o.partitions = partitions;
      o.pair_leaves = pair_leaves;
      o.halo = halo;
      o.inline_single_use = !direct;  // both ways: variables read once kept on the stack or not
      int pairs = 0, direct_pairs = 0, lane_words = 0, table_words = 0, shared_rows = 0,
          negated_stores = 0, affine_words = 0, combined_affine = 0, folds = 0, adding_folds = 0,
          compare_selects = 0, lane_blocks = 0, affine_pairs = 0, taking_pairs = 0;
      const Program prog = compile(*model, o);
      ASSERT_EQ(prog.halo_programs.size(), std::size_t(halo));  // none of these closes
      LayoutOptions lo;
      lo.halo = halo;
      lo.direct = direct;
      const TeamsLayout layout = layout_teams(prog, teams, lo);
      EXPECT_EQ(layout.direct, direct);
      std::size_t halo_stores = 0;
      ASSERT_EQ(layout.teams, teams);
      ASSERT_EQ(layout.int_begin.size(), std::size_t(teams) + 1);
      EXPECT_GT(layout.scratch_bytes(), 0u);

      // The reference: derivatives and algebraic variables at a state off the initial one.
      std::vector<double> x = model->state_init;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += 1e-3 * double(i % 7);
      // The line's stimulus is on at 10.2; at 11.2 it is off although t >= 10 (its select's
      // condition is the whole `t >= 10 && mod(t - 10, 1000) < 0.5`, not its first comparison).
      const double t = teams == 3 ? 11.2 : 10.2;
      ReferenceInterpreter ref(prog, 1, Method::Euler);
      ref.x() = x;
      ref.evaluate(t);

      std::vector<double> f(prog.n_states, std::nan("")), v(prog.n_vars, std::nan(""));
      std::vector<int> stored_states(prog.n_states, 0), stored_vars(prog.n_vars, 0);
      struct Team {
        std::vector<double> u;
        const std::int32_t *h, *state_src, *state_flag, *var_src, *phase_begin, *groups, *lanes,
            *itab;
        const std::uint32_t* code;
      };
      std::vector<Team> team(static_cast<std::size_t>(teams));
      for (int k = 0; k < teams; ++k) {
        Team& tm = team[std::size_t(k)];
        tm.h = layout.ints.data() + layout.int_begin[std::size_t(k)];
        const int ns = tm.h[T_STATES], nv = tm.h[T_VARS], nc = tm.h[T_CONSTS];
        tm.state_src = tm.h + kTeamFields;
        tm.state_flag = tm.state_src + ns;
        tm.var_src = tm.state_flag + ns;
        tm.phase_begin = tm.var_src + nv;
        tm.groups = tm.phase_begin + layout.n_phases + 1;
        tm.lanes = tm.groups + std::size_t(tm.h[T_GROUPS]) * kGroupFields;
        tm.itab = tm.lanes + tm.h[T_LANES];
        tm.code = reinterpret_cast<const std::uint32_t*>(tm.itab + tm.h[T_ITAB]);
        const std::int32_t* end = layout.ints.data() + layout.int_begin[std::size_t(k) + 1];
        ASSERT_EQ(reinterpret_cast<const std::int32_t*>(tm.code) + tm.h[T_CODE], end);
        // U: the states, then the variables (each once), the constants (each value once), time.
        EXPECT_EQ(std::set<std::int32_t>(tm.state_src, tm.state_src + ns).size(), std::size_t(ns));
        EXPECT_EQ(std::set<std::int32_t>(tm.var_src, tm.var_src + nv).size(), std::size_t(nv));
        const double* c = layout.reals.data() + layout.real_begin[std::size_t(k)];
        // (By their bits: a fold's padding -0.0 is a constant of its own.) The five constants
        // of an affine word are a block of their own, once per tuple.
        std::set<int> in_blocks;
        std::set<std::int32_t> blocks;
        for (int g = 0; g < tm.h[T_GROUPS]; ++g) {
          const std::int32_t* rec = tm.groups + std::size_t(g) * kGroupFields;
          if (rec[G_KIND] != GROUP_UNIFIED) continue;
          for (int w = 0; w < rec[G_LEN]; ++w) {
            const std::uint32_t word = tm.code[rec[G_CODE] + w];
            if (op_of(word) != EXP || (word & kTeamKindMask) != kTeamKindAffine << kOpBits)
              continue;
            // A lane's own block (several rates in one warp); a pair of words has two.
            for (std::uint32_t row = 1; row <= ((word & kTeamAffinePair) != 0 ? 3u : 1u); row += 2)
              for (int l = 0; l < kWarp; ++l) {
                const std::int32_t at =
                    tm.itab[(std::size_t(rec[G_ITAB]) + arg_of(word) + row) * kWarp +
                            std::size_t(l)] &
                    kTeamAffineIndexMask;
                blocks.insert(at);
                for (int r = 0; r < kTeamAffineConstants; ++r) in_blocks.insert(at - ns - nv + r);
              }
          }
        }
        std::set<std::uint64_t> const_bits;
        std::set<std::vector<std::uint64_t>> block_bits;
        for (int j = 0; j < nc; ++j) {
          std::uint64_t bits;
          std::memcpy(&bits, c + j, sizeof bits);
          if (!in_blocks.count(j)) const_bits.insert(bits);
          if (!blocks.count(ns + nv + j)) continue;
          std::vector<std::uint64_t> tuple(kTeamAffineConstants);
          std::memcpy(tuple.data(), c + j, sizeof(std::uint64_t) * kTeamAffineConstants);
          block_bits.insert(tuple);
        }
        EXPECT_EQ(const_bits.size() + in_blocks.size(), std::size_t(nc));
        EXPECT_EQ(block_bits.size(), blocks.size());
        tm.u.resize(std::size_t(ns + nv + nc + 1));
        for (int i = 0; i < ns; ++i) tm.u[std::size_t(i)] = x[std::size_t(tm.state_src[i])];
        for (int j = 0; j < nv; ++j) tm.u[std::size_t(ns + j)] = ref.v[std::size_t(tm.var_src[j])];
        for (int j = 0; j < nc; ++j) tm.u[std::size_t(ns + nv + j)] = c[j];
        tm.u[std::size_t(ns + nv + nc)] = t;
        // The code ends with a spare word, so the interpreter reads the next word untested.
        ASSERT_GE(tm.h[T_CODE], 1);
        EXPECT_EQ(tm.code[tm.h[T_CODE] - 1], 0u);
        // Every leaf is a U read (uniform or per lane), time included; a pair reads both its
        // arguments through the table, or carries both indices when neither row needs one.
        for (int w = 0; w + 1 < tm.h[T_CODE]; ++w) {
          const std::uint32_t word = tm.code[w];
          const Op op = op_of(word);
          const bool pair = std::uint32_t(op) >= kPairFirst;
          EXPECT_LE(std::uint32_t(op), kPairLast);
          const Op leaf = is_leaf(op)                                          ? op
                          : ((takes_operand(op) || pair) && has_operand(word)) ? operand_leaf(word)
                                                                               : PUSH_VAR;
          const std::uint32_t kind = (word & kTeamReads) >> kOpBits;
          // A fold: ADDN with a table kind (onto the top, or pushed).
          const bool fold = op == ADDN && kind != 0;
          EXPECT_TRUE(!fold || kind == std::uint32_t(VAR_IND) + 1 || kind == kTeamKindFoldPush);
          folds += fold;
          // A select that compares (kTeamKindCompare, the affine kind on a SELECT).
          const bool compare = kind == kTeamKindCompare && op == SELECT;
          compare_selects += compare;
          const bool affine = kind == kTeamKindAffine && !fold && !compare;
          EXPECT_TRUE(!affine || op == EXP) << op_name(op);
          affine_words += affine;
          // A lane-offset operand's kind field reads as CONST_IND + 1 (kTeamKindLane).
          EXPECT_TRUE(leaf == PUSH_VAR || leaf == VAR_IND ||
                      (kind == kTeamKindLane && leaf == CONST_IND) || affine || fold || compare)
              << op_name(leaf);
          if (pair) {
            ++pairs;
            EXPECT_TRUE(operand_leaf(word) == VAR_IND || operand_leaf(word) == PUSH_VAR);
            direct_pairs += operand_leaf(word) == PUSH_VAR;
          }
          lane_words += !pair && kind == kTeamKindLane;
          // A store of a negated value stands for a NEG and the store (LR-Line's dV/dt).
          if (op >= ASSIGN_ALG && op <= ASSIGN_DERIV_IND)
            negated_stores += (word & kTeamNegate) != 0;
          if (op == NEG) {
            const Op after = op_of(tm.code[w + 1]);
            EXPECT_FALSE(after >= ASSIGN_ALG && after <= ASSIGN_DERIV_IND)
                << "a NEG the layout left before a store";
          }
          table_words += (word & kTeamTable) == kTeamTable;
        }
        // Words of a group that read the same table rows read one copy of them.
        for (int g = 0; g < tm.h[T_GROUPS]; ++g) {
          const std::int32_t* rec = tm.groups + std::size_t(g) * kGroupFields;
          if (rec[G_KIND] != GROUP_UNIFIED) continue;
          std::map<std::vector<std::int32_t>, std::uint32_t> row_of;
          for (int k = 0; k < rec[G_LEN]; ++k) {
            const std::uint32_t word = tm.code[rec[G_CODE] + k];
            if ((word & kTeamTable) != kTeamTable) continue;
            const bool compare = op_of(word) == SELECT && (word & kTeamKindMask) == kTeamKindCompare
                                                                                        << kOpBits;
            const bool affine = op_of(word) == EXP && (word & kTeamKindMask) == kTeamKindAffine
                                                                                    << kOpBits;
            const bool pair = std::uint32_t(op_of(word)) >= kPairFirst;
            const bool takes = pair && (word & kTeamPairTakes) != 0;
            const std::size_t n_rows = op_of(word) == ADDN                       ? kTeamFoldRows
                                       : compare || takes                        ? 3
                                       : affine && (word & kTeamAffinePair) != 0 ? 4
                                       : pair || affine                          ? 2
                                                                                 : 1;
            affine_pairs += affine && (word & kTeamAffinePair) != 0;
            taking_pairs += takes;
            const std::int32_t* first = tm.itab + (std::size_t(rec[G_ITAB]) + arg_of(word)) * kWarp;
            // A pair that takes in an operation: its third row is its second's U indices with
            // +, -, * or / in the top bits, the same in every lane.
            for (int l = 0; takes && l < rec[G_COUNT]; ++l) {
              const std::int32_t e = first[2 * kWarp + std::size_t(l)];
              EXPECT_EQ(e & kTeamRowIndexMask, first[kWarp + std::size_t(l)] & kTeamRowIndexMask);
              const std::uint32_t how = std::uint32_t(e) >> kTeamPairTakeShift;
              EXPECT_TRUE(how >= AFFINE_ADD && how <= AFFINE_DIV) << how;
              EXPECT_EQ(how, std::uint32_t(first[2 * kWarp]) >> kTeamPairTakeShift);
            }
            const std::vector<std::int32_t> rows(first, first + n_rows * kWarp);
            const auto [at, added] = row_of.emplace(rows, arg_of(word));
            EXPECT_EQ(at->second, arg_of(word)) << "group " << g << " word " << k;
            shared_rows += !added;
            // An affine word's second row (and a pair's fourth): the same function and flags
            // in every lane, and a block of five constants (each lane's own where their rates
            // differ).
            for (std::size_t row = 1; affine && row < n_rows; row += 2)
              for (int l = 0; l < rec[G_COUNT]; ++l) {
                const std::int32_t e = first[row * kWarp + std::size_t(l)];
                EXPECT_EQ(e & ~kTeamAffineIndexMask, first[row * kWarp] & ~kTeamAffineIndexMask)
                    << "group " << g;
                lane_blocks += l > 0 && e != first[row * kWarp];
                const std::int32_t at = e & kTeamAffineIndexMask;
                const std::int32_t consts = tm.h[T_STATES] + tm.h[T_VARS];
                EXPECT_GE(at, consts);
                EXPECT_LE(at + kTeamAffineConstants, consts + tm.h[T_CONSTS]);
                if (l == 0)
                  combined_affine += (std::uint32_t(e) >> kTeamAffineCombineShift) != AFFINE_PUSH;
              }
            // A fold's later rows read U values, subtracted where flagged; a zero among the
            // constants they read is the -0.0 of the padding (x + -0.0 is x; x + 0.0 is not
            // for x = -0.0).
            // Only a pushed fold's second row may add the value below (kTeamFoldAdd).
            if (op_of(word) == ADDN) {
              const bool adds = (first[kWarp] & kTeamFoldAdd) != 0;
              adding_folds += adds;
              EXPECT_TRUE(!adds || (word & kTeamKindMask) == kTeamKindFoldPush << kOpBits);
              for (int l = 0; l < rec[G_COUNT]; ++l) {
                EXPECT_EQ(first[kWarp + std::size_t(l)] & kTeamFoldAdd, adds ? kTeamFoldAdd : 0);
                for (std::size_t r = 2; r < n_rows; ++r)
                  EXPECT_EQ(first[r * kWarp + std::size_t(l)] & kTeamFoldAdd, 0);
              }
            }
            if (op_of(word) == ADDN)
              for (std::size_t r = 1; r < n_rows; ++r)
                for (int l = 0; l < rec[G_COUNT]; ++l) {
                  const std::int32_t at = first[r * kWarp + std::size_t(l)] & kTeamRowIndexMask;
                  ASSERT_LT(std::size_t(at), tm.u.size());
                  const std::int32_t consts = tm.h[T_STATES] + tm.h[T_VARS];
                  if (at >= consts && at < consts + tm.h[T_CONSTS] && tm.u[std::size_t(at)] == 0.0)
                    EXPECT_TRUE(std::signbit(tm.u[std::size_t(at)])) << "group " << g;
                }
          }
        }
      }
      if (model == &line) EXPECT_GT(negated_stores, 0);
      // LR-Line's rate functions run as affine words.
      if (model == &line && unify && pair_leaves) EXPECT_GT(affine_words, 0);
      // Some warps hold several gates' rates of one shape, each lane with its own constants
      // (alpha_d, beta_f, beta_X).
      if (model == &line && unify && pair_leaves) EXPECT_GT(lane_blocks, 0);
      // Some of them take in the division or addition after them (beta_j, dV/dt).
      if (model == &line && unify && pair_leaves) EXPECT_GT(combined_affine, 0);
      // Its pairs of exponentials (beta_j's two arms, each `AF AF div`) run as pairs of words.
      if (model == &line && unify && pair_leaves) EXPECT_GT(affine_pairs, 0);
      // Its products and quotients of pairs (`Pmul g_K, X; mul` of I_K, `Pmul; div` of dV/dt)
      // take in the operation after them, in table layouts.
      if (model == &line && unify && pair_leaves && !direct) EXPECT_GT(taking_pairs, 0);
      if (direct) EXPECT_EQ(taking_pairs, 0);
      // Its sum of currents runs as folds.
      if (model == &line && unify && pair_leaves) EXPECT_GT(folds, 0);
      // Its rate functions' guards (V < -40) are compared by their selects.
      if (model == &line && unify && pair_leaves) EXPECT_GT(compare_selects, 0);
      // One of them adds I_K1, below it on the stack in dV/dt where it is not stored.
      if (model == &line && unify && pair_leaves && o.inline_single_use) EXPECT_GT(adding_folds, 0);
      // The cells of a line sit in U in lane order, so most of its per-lane rows need no table.
      if (!direct) {
        EXPECT_EQ(lane_words + direct_pairs, 0);
      } else if (model == &line && unify) {
        EXPECT_GT(lane_words, 0);
        if (pair_leaves) EXPECT_GT(direct_pairs, 0);
      }
      // Scheduled variables start as NaN in U, so a read before its store (or of another team's
      // variable) would show in the results.
      std::set<std::uint32_t> folded;
      for (const auto& [index, value] : prog.constant_vars) folded.insert(index);
      for (Team& tm : team)
        for (int j = 0; j < tm.h[T_VARS]; ++j) {
          const auto var = std::uint32_t(tm.var_src[j]);
          if (var < prog.n_alg && !folded.count(var))
            tm.u[std::size_t(tm.h[T_STATES] + j)] = std::nan("");
        }
      // A team whose states are updated in place (T_IN_PLACE) has each state overwritten by its
      // store, here with NaN, so a read that the layout let run after it would show in the
      // results. The groups and lanes of a phase run in either order on a GPU: the second pass
      // runs them backwards.
      int in_place_stores = 0;
      std::vector<std::vector<double>> u0;
      for (const Team& tm : team) u0.push_back(tm.u);
      for (const bool backwards : {false, true}) {
        SCOPED_TRACE(backwards ? "groups and lanes backwards" : "groups and lanes in order");
        for (std::size_t k = 0; k < team.size(); ++k) team[k].u = u0[k];
        std::fill(f.begin(), f.end(), std::nan(""));
        std::fill(v.begin(), v.end(), std::nan(""));
        std::fill(stored_states.begin(), stored_states.end(), 0);
        std::fill(stored_vars.begin(), stored_vars.end(), 0);
        halo_stores = 0;
        in_place_stores = 0;
        for (int ph = 0; ph < layout.n_phases; ++ph)
          for (Team& tm : team) {
            // Derivative stores name the U index of their state.
            const auto assign = [&](std::size_t k, double value) {
              const std::size_t i = std::size_t(tm.state_src[k]);
              ASSERT_NE(tm.state_flag[k], STATE_READ) << "state " << i;
              if (tm.h[T_IN_PLACE] != 0) {
                tm.u[k] = std::nan("");
                ++in_place_stores;
              }
              if (tm.state_flag[k] == STATE_HALO) {
                EXPECT_EQ(value, ref.f[i]) << "halo state " << i;
                ++halo_stores;
                return;
              }
              f[i] = value;
              ++stored_states[i];
            };
            const int first = tm.phase_begin[ph], n = (tm.phase_begin[ph + 1] - first) * kWarp;
            for (int j = 0; j < n; ++j) {
              const int at = backwards ? n - 1 - j : j;
              const int g = first + at / kWarp, l = at % kWarp;
              if (direct)
                run_local_group_lane<Kokkos::DefaultHostExecutionSpace, true>(
                    tm.code, tm.groups, tm.lanes, tm.itab, g, l, tm.u.data(), assign);
              else
                run_local_group_lane<Kokkos::DefaultHostExecutionSpace, false>(
                    tm.code, tm.groups, tm.lanes, tm.itab, g, l, tm.u.data(), assign);
            }
          }
        // Without a halo every variable is stored by one team; with one, the variables of a
        // team's halo are stored again there (with the same values).
        for (Team& tm : team)
          for (int j = 0; j < tm.h[T_VARS]; ++j) {
            const std::size_t var = std::size_t(tm.var_src[j]);
            if (var >= prog.n_alg) continue;
            const double value = tm.u[std::size_t(tm.h[T_STATES] + j)];
            if (std::isnan(value) || folded.count(std::uint32_t(var))) continue;
            if (stored_vars[var] > 0 && halo > 0) {
              EXPECT_EQ(value, v[var]) << "variable " << var;
              continue;
            }
            v[var] = value;
            ++stored_vars[var];
          }
        if (halo > 0)
          EXPECT_GT(halo_stores, 0u);
        else
          EXPECT_EQ(halo_stores, 0u);
        for (std::size_t i = 0; i < prog.n_states; ++i) {
          EXPECT_EQ(stored_states[i], 1) << "state " << i;
          EXPECT_EQ(f[i], ref.f[i]) << "state " << i;
        }
      }
      // LR-Line's states are all read in phases before their derivatives' (or by the storing
      // lane before its store), and its time only in the first phase: every team updates in
      // place and writes the next time at the start of phase 1.
      for (const Team& tm : team) {
        EXPECT_GE(tm.h[T_TIME_PHASE], 0);
        EXPECT_LE(tm.h[T_TIME_PHASE], layout.n_phases);
        if (model == &line && tm.h[T_STATES] > 0) {
          EXPECT_EQ(tm.h[T_IN_PLACE], 1);
          EXPECT_EQ(tm.h[T_TIME_PHASE], 1);
        }
      }
      if (model == &line) EXPECT_GT(in_place_stores, 0);
      // A variable that one stream stores and reads once stays on its stack (inline_single_use):
      // only variables the program reads once go unstored.
      const std::vector<int> reads = variable_reads(prog);
      int kept = 0;
      for (std::size_t j = 0; j < prog.n_alg; ++j) {
        if (folded.count(std::uint32_t(j))) continue;
        if (stored_vars[j] == 0 && reads[j] == 1) {
          ++kept;
          continue;
        }
        EXPECT_EQ(stored_vars[j], 1) << "variable " << j;
        EXPECT_EQ(v[j], ref.v[j]) << "variable " << j;
      }
      // LR-Line's merged streams store Xi for I_K and I_K1 for I_ion, which dV/dt reads.
      if (!o.inline_single_use)
        EXPECT_EQ(kept, 0);
      else if (model == &line)
        EXPECT_GE(kept, 3 * int(prog.n_states / 8));
      if (model == &line && unify && !direct) EXPECT_GT(shared_rows, 0);
      // Pairs only come from unified streams, and only when asked for.
      if (unify && pair_leaves)
        EXPECT_GT(pairs, 0);
      else
        EXPECT_EQ(pairs, 0);
    }
}

// Teams layouts place each phase's groups on a GPU multiprocessor's four warp schedulers (warp w
// on scheduler w % 4): the same groups per phase as in bin order, and no scheduler's estimate
// (its longest stream plus a quarter of the words of the others) above the bin order's worst. For
// LR-Line the longest stream of a phase then shares its scheduler with fewer words than in bin
// order.
TEST(OdeTeamsLayout, PhasesArePlacedOnTheWarpSchedulers) {
  struct Case {
    const char* file;
    int halo;
  };
  for (const auto& [file, halo] :
       {Case{"inputs/ode/lr_line.model.yaml", 8}, Case{"inputs/ode/lr_line.model.yaml", 0},
        Case{"inputs/ode/rybak_cpg.model.yaml", 4}}) {
    SCOPED_TRACE(testing::Message() << file << " halo " << halo);
    const FlatModel model = load_model_file(test::source_path(file));
    CompilerOptions o = all_passes();
    o.partitions = 0;
    o.halo = halo;
    const Program placed_prog = compile(model, o);
    o.place = false;
    const Program plain_prog = compile(model, o);
    const int h = std::min(halo, int(placed_prog.halo_programs.size()));
    const int teams = int(placed_prog.n_bins);
    LayoutOptions lo;
    lo.halo = h;
    const TeamsLayout placed = layout_teams(placed_prog, teams, lo);
    const TeamsLayout plain = layout_teams(plain_prog, teams, lo);
    // Per phase of team t: the group lengths in order.
    const auto phases = [](const TeamsLayout& l, int t) {
      const std::int32_t* hd = l.ints.data() + l.int_begin[std::size_t(t)];
      const std::int32_t* phase_begin = hd + kTeamFields + 2 * hd[T_STATES] + hd[T_VARS];
      const std::int32_t* recs = phase_begin + l.n_phases + 1;
      std::vector<std::vector<int>> out;
      for (int ph = 0; ph < l.n_phases; ++ph) {
        out.emplace_back();
        for (int g = phase_begin[ph]; g < phase_begin[ph + 1]; ++g)
          out.back().push_back(recs[std::size_t(g) * kGroupFields + G_LEN]);
      }
      return out;
    };
    // The worst scheduler's estimate, and the words sharing the longest stream's scheduler.
    const auto estimate = [](const std::vector<int>& len, double* beside_longest) {
      double longest[4] = {}, total[4] = {};
      std::size_t at = 0;
      for (std::size_t p = 0; p < len.size(); ++p) {
        longest[p % 4] = std::max(longest[p % 4], double(len[p]));
        total[p % 4] += len[p];
        if (len[p] > len[at]) at = p;
      }
      *beside_longest = total[at % 4] - len[at];
      double worst = 0.0;
      for (int k = 0; k < 4; ++k)
        worst = std::max(worst, longest[k] + 0.25 * (total[k] - longest[k]));
      return worst;
    };
    int fewer = 0;
    for (int t = 0; t < teams; ++t) {
      const auto a = phases(placed, t), b = phases(plain, t);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t ph = 0; ph < a.size(); ++ph) {
        auto sa = a[ph], sb = b[ph];
        std::sort(sa.begin(), sa.end());
        std::sort(sb.begin(), sb.end());
        EXPECT_EQ(sa, sb) << "team " << t << " phase " << ph;
        if (a[ph].size() > 24) continue;
        double beside_a = 0, beside_b = 0;
        EXPECT_LE(estimate(a[ph], &beside_a), estimate(b[ph], &beside_b))
            << "team " << t << " phase " << ph;
        fewer += beside_a < beside_b;
      }
    }
    // With the default halo LR-Line's longest streams share a scheduler in bin order (without
    // one, its phase-0 streams are so even that bin order already spreads them).
    if (std::string(file).find("lr_line") != std::string::npos && halo > 0) EXPECT_GT(fewer, 0);
  }
}

}  // namespace
}  // namespace hayate::ode
