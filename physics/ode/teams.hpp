#pragma once
// Teams mode keeps each team's share of the program and every value its streams read in team
// scratch memory. On a GPU a team runs on one multiprocessor for a whole output interval, and
// its streams are latency-bound chains: an operand read from L2 (the L1 is small next to the
// scratch carve-out, and the grid barrier's fence invalidates it every sweep) costs about ten
// times a shared-memory read.
#include "ode/compiler.hpp"

#include <cstdint>
#include <vector>

namespace hayate::ode {

// Header fields of a team's integer block.
enum TeamField : int {
  T_STATES,  // states the team's streams read (copied into U at every sweep)
  T_VARS,    // variables they read or write (copied into U at the start of a launch)
  T_CONSTS,  // constants, uniform and per-lane (copied into U at the start of a launch); the
             // stage time follows them in U
  T_GROUPS,  // group records
  T_LANES,   // per-lane code offsets and lengths: 2 * kWarp per group when any group is per-lane
  T_ITAB,    // unified-table entries
  T_CODE,    // instruction words
  kTeamFields
};

// Every team's program, rewritten so that each leaf reads one team-local array U = [states |
// variables | constants | time]: a leaf or operand becomes PUSH_VAR (one U index for the warp) or
// VAR_IND (a U index per lane), and an algebraic store ASSIGN_ALG(_IND) writes U. Derivative
// stores keep the global state indices of the assign policy. Time is the last value of U, which
// the kernel writes at every sweep, so every leaf is the same kind of read. The arithmetic is
// untouched, so results are bitwise those of the program it came from.
struct TeamsLayout {
  int teams = 0;
  int n_phases = 0;
  // Team t: ints[int_begin[t], int_begin[t + 1]) and reals[real_begin[t], real_begin[t + 1]).
  // Its integer block is the header (kTeamFields counts), then state_src (global state index of
  // each U state), var_src (global variable index of each U variable), phase_begin (n_phases + 1
  // group offsets), the group records (G_CODE and G_ITAB team-local, G_CTAB the group's offset in
  // the lane table), the lane table, the unified table (U indices, or global state indices in
  // derivative-store slots) and the code. reals holds the constants of U.
  std::vector<std::int64_t> int_begin, real_begin;
  std::vector<std::int32_t> ints;
  std::vector<double> reals;

  // Scratch memory of the largest team: U in doubles (time included), then its integer block.
  std::size_t scratch_bytes() const;
};

// Team t runs bins t, t + teams, ... of every phase, in that order. Pair words
// (Program::pair_leaves) unless `pairs` is false.
TeamsLayout layout_teams(const Program& prog, int teams, bool pairs = true);

}  // namespace hayate::ode
