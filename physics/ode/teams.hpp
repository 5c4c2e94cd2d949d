#pragma once
// Teams mode keeps each team's share of the program and every value its streams read in team
// scratch memory. On a GPU a team runs on one multiprocessor for a whole output interval, and
// its streams are latency-bound chains: an operand read from L2 (the L1 is small next to the
// scratch carve-out, and the grid barrier's fence invalidates it every sweep) costs about ten
// times a shared-memory read.
#include "ode/compiler.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace hayate::ode {

// Header fields of a team's integer block.
enum TeamField : int {
  T_STATES,    // states the team's streams read (copied into U at every sweep)
  T_VARS,      // variables they read or write (copied into U at the start of a launch)
  T_CONSTS,    // constants, uniform and per-lane (copied into U at the start of a launch); the
               // stage time follows them in U
  T_GROUPS,    // group records
  T_LANES,     // per-lane code offsets and lengths: 2 * kWarp per group when any group is per-lane
  T_ITAB,      // unified-table entries
  T_CODE,      // instruction words
  T_IN_PLACE,  // 1: the integrator writes every state the team writes into U itself, because
               // no stream reads a state once its derivative may be stored (every read is in
               // an earlier phase, or earlier in the storing lane's own stream), so a sweep
               // needs no copy of stage results into U after it; 0: it writes stage buffers
  T_TIME_PHASE,  // the first phase from which no stream reads the stage time (n_phases: none):
                 // with T_IN_PLACE the next sweep's time is written at its start
  kTeamFields
};

// What a team does with each of its states (the flag after state_src in its integer block).
enum TeamState : std::int32_t {
  STATE_READ = 0,   // read only: another team writes it
  STATE_OWNED = 1,  // written by the team's own bins: the team publishes it
  STATE_HALO = 2,   // written by the team's halo: a private copy, refreshed at every exchange
};

// Every team's program, rewritten so that each leaf reads one team-local array U = [states |
// variables | constants | time]: a leaf or operand becomes PUSH_VAR (one U index for the warp) or
// VAR_IND (a U index per lane), and an algebraic store ASSIGN_ALG(_IND) writes U. Derivative
// stores ASSIGN_DERIV(_IND) name the U index of their state too: the teams kernel's assign
// policies keep the stage buffers in scratch beside U. Time is the last value of U, which
// the kernel writes at every sweep, so every leaf is the same kind of read. The words are team
// words (team_word: each marks its U access). The arithmetic is untouched, so results are
// bitwise those of the program it came from.
struct TeamsLayout {
  int teams = 0;
  int n_phases = 0;
  // Team t: ints[int_begin[t], int_begin[t + 1]) and reals[real_begin[t], real_begin[t + 1]).
  // Its integer block is the header (kTeamFields counts), then state_src (global state index of
  // each U state), state_flag (TeamState of each U state), var_src (global variable index of each U
  // variable), phase_begin (n_phases + 1 group offsets), the group records (G_CODE and G_ITAB
  // team-local, G_CTAB the group's offset in the lane table), the lane table, the unified table (U
  // indices) and the code. reals holds the constants of U.
  std::vector<std::int64_t> int_begin, real_begin;
  std::vector<std::int32_t> ints;
  std::vector<double> reals;

  int halo = 0;  // rings of the halo program it was laid out from (0: none)
  // Table-free words where a row allows: a per-lane operand whose U indices run up by one from
  // lane to lane becomes a lane-offset word (kTeamKindLane), and a pair whose rows are uniform
  // or lane-offset carries both indices (team_pair_operands). Less shared memory, a longer
  // decode (run_local_stream<true>).
  bool direct = false;

  // What a sweep waits for: the largest, over teams, of the sum over phases of the team's
  // longest stream, in team words (a per-lane group counts its longest lane).
  int critical_words() const;

  // Scratch memory of the largest team: U in doubles (time included), `state_buffers` arrays of
  // its states (the integrator's stage buffers), then its integer block.
  std::size_t scratch_bytes(int state_buffers = 0) const;
};

// How layout_teams lays a program out.
struct LayoutOptions {
  // Pair words and the words built on them (comparing selects, affine words, folds), where the
  // program allows them (Program::pair_leaves).
  bool pairs = true;
  // With halo > 0, the bins extended by that many rings (Program::halo_programs); a state is a
  // team's own when Program::state_bin puts it in one of the team's bins.
  int halo = 0;
  bool direct = false;  // table-free words where a row allows (TeamsLayout::direct)
  // The words only the Euler kernel's interpreter decodes: pairs of affine words and, in table
  // layouts, pairs that take in the stack operation after them; the RK4 kernel's has neither.
  bool euler_words = true;
};

// Team t runs bins t, t + teams, ... of every phase, in that order, each phase's groups placed
// on the warp schedulers as Program::place asks (CompilerOptions::place).
TeamsLayout layout_teams(const Program& prog, int teams, const LayoutOptions& options = {});

// compiler.split_sums: auto. Loads the model with several limits on the terms of a sum
// (`load(limit)`, 0 = whole sums) and returns the one whose teams layout (one team per bin,
// pair words as `options` asks, no halo) has the fewest critical words, ties to the larger limit
// (fewer parts). The best limit depends on a term's words and on the other streams of the
// phase, which only the layout shows. A model
// without sums of three or more computed terms gets 0 without a trial.
struct SplitChoice {
  int limit = 0;
  int critical = 0;                         // critical team words with that limit
  std::vector<std::pair<int, int>> trials;  // (limit, critical words), in the order tried
};
// Teams mode: whether sinking derivative tasks (CompilerOptions::
// sink_derivatives) shortens the layout's critical path (one team per bin, no halo).
bool sink_shortens(const FlatModel& model, const CompilerOptions& options);
SplitChoice choose_split_sums(const std::function<FlatModel(int)>& load,
                              const CompilerOptions& options);

}  // namespace hayate::ode
