#pragma once
// Compiler: constant folding, dependency DAG over algebraic variables (reads of ODE states are
// not edges: derivatives read the stage input), cycle detection, level scheduling into phases,
// stack bytecode, and the passes that shape the phases for SIMT execution: phase merging,
// similarity reordering, redundant-lane padding and per-warp unification.
#include "ode/model.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hayate::ode {

struct CompilerOptions {
  bool fold = true;    // constant folding (also across constant algebraics) and x^n -> POWI
  bool merge = false;  // append an expression to the one expression of the previous phase it reads
  int merge_max_length = 64;  // cap (instructions) on a merged stream, beyond the phase's longest
  // With merge: a task of derivatives only (nothing in the step reads it) that would be appended
  // to a stream of phase q joins phase q + 1 instead where that phase already holds tasks, so
  // no phase is added and the stream it would have lengthened is not (LR-Line's dCai/dt after
  // E_si -> I_si). Runs in teams mode decide it by the layout's critical path (sink_shortens).
  bool sink_derivatives = false;
  bool reorder = false;  // sort each phase by length and opcode-sequence similarity
  bool pad = false;      // never mix opcode sequences in a warp: pad with idle lanes
  bool unify = false;    // one opcode stream per warp, differing operands in per-warp tables
  // Parts that a step's phases may run without seeing each other: the equations are split along
  // the connected components of their algebraic dependencies (whole cells of a network, since
  // coupling goes through states) into this many contiguous, balanced bins; 0 = enough bins for
  // about 4 copies of the most repeated equation in each.
  int partitions = 1;
  // A variable read once is not stored: the fused ensemble stream evaluates it where it is read,
  // and a teams stream that stores and reads it keeps it on the stack (layout_teams).
  bool inline_single_use = true;
  // Teams mode: a leaf and the binary operation with a leaf operand after it run as one
  // dispatch (kPairFirst), in unified streams. With pair words the layout also folds runs of
  // additions of leaves, fuses a rate function's shifted and scaled exp, exprel, exprelr or log
  // with its factor and offset into one word, and a comparison of two leaves into the select
  // that takes it (layout_teams); without, it does none of these (the tests' reference, and the
  // engine's fallback where a layout with pairs does not fit shared memory).
  bool pair_leaves = true;
  // Teams mode: each bin may also evaluate the cells within up to this many rings of state reads
  // around its own (a halo), so a team runs halo + 1 sweeps between exchanges with the other
  // teams; the engine takes the widest halo whose layout fits (tuning.halo).
  int halo = 8;
  // Teams mode: the groups of each phase ordered so that its longest streams share a GPU warp
  // scheduler with little other work (TeamsLayout).
  bool place = true;
};

// Every pass on, as runs use them. The defaults above leave merge, reorder, pad and unify off,
// so that tests and benchmarks can switch them on one at a time.
inline CompilerOptions all_passes() {
  CompilerOptions o;
  o.merge = o.reorder = o.pad = o.unify = true;
  return o;
}

// Group kinds: lanes run their own streams, or share the group's unified stream.
enum GroupKind : std::int32_t { GROUP_PER_LANE = 0, GROUP_UNIFIED = 1 };
// Fields of a group record (ints, kGroupFields per group).
enum GroupField : int { G_KIND, G_COUNT, G_CODE, G_LEN, G_ITAB, G_CTAB, kGroupFields };

struct Program {
  std::size_t n_states = 0, n_vars = 0, n_alg = 0;
  std::vector<double> consts;
  std::vector<std::uint32_t> code;
  // Group g: groups[g * kGroupFields + field]. Phase p holds groups [phase_begin[p],
  // phase_begin[p+1]).
  std::vector<std::int32_t> groups;
  std::vector<std::int32_t> phase_begin;
  // Per-lane groups: lane l of group g runs code[lane_code[g*kWarp+l] ...] for lane_len[...] words.
  std::vector<std::int32_t> lane_code, lane_len;
  // Unified groups: operand slot k of lane l is itab/ctab[(base + k) * kWarp + l].
  std::vector<std::int32_t> itab;
  std::vector<double> ctab;
  // Phase p, bin b holds groups [bin_begin[p * n_bins + b], bin_begin[p * n_bins + b + 1]);
  // bin_begin[p * n_bins] = phase_begin[p]. No group of a bin reads a variable another bin writes.
  std::size_t n_bins = 1;
  std::vector<std::int32_t> bin_begin;
  // Every scheduled equation in one stream, in dependency order, plain operands only: what one
  // thread runs to evaluate the whole model for one ensemble member. Its variable operands are
  // slots: slot k is variable serial_vars[k] (algebraic or swept parameter); variables it
  // evaluates inline have no slot.
  std::vector<std::uint32_t> serial;
  std::vector<std::int32_t> serial_vars;
  int max_stack = 0;
  bool pair_leaves = true;  // CompilerOptions::pair_leaves, applied by layout_teams
  bool inline_single_use =
      true;           // CompilerOptions::inline_single_use, also applied by layout_teams
  bool place = true;  // CompilerOptions::place, applied by layout_teams
  // Halo (CompilerOptions::halo > 0 and more than one bin): halo_programs[h - 1] holds the groups
  // of every bin extended by its halo of h rings, in a program of its own (its groups, code,
  // tables and bin_begin; phase_begin spans all bins; halo and halo_sweeps set), for teams mode
  // only; the list stops at the first halo that reads nothing outside itself. state_bin: the bin
  // whose equations write each state.
  int halo = 0;         // in a halo program: its rings
  int halo_sweeps = 1;  // sweeps a bin's own states stay exact without an exchange (halo + 1; 0
                        // when no extended bin reads anything outside itself)
  std::vector<std::int32_t> state_bin;
  std::vector<std::shared_ptr<const Program>> halo_programs;
  // Algebraic variables that fold to constants: stored once, never scheduled.
  std::vector<std::pair<std::uint32_t, double>> constant_vars;

  // Statistics for logs, docs and benchmarks.
  std::size_t n_equations = 0;     // expressions evaluated per function evaluation (scheduled)
  std::size_t n_tasks = 0;         // lanes with work (after merging)
  std::size_t n_instructions = 0;  // bytecode words of all equations
  std::size_t n_levels = 0;        // phases before merging

  std::size_t n_phases() const { return phase_begin.empty() ? 0 : phase_begin.size() - 1; }
  std::size_t n_groups() const { return groups.size() / kGroupFields; }
  std::int32_t group(std::size_t g, GroupField f) const { return groups[g * kGroupFields + f]; }
  std::size_t max_groups_per_phase() const;
  std::size_t unified_groups() const;
};

// Throws core::InputError (pointing into the model file) for algebraic cycles, division by a
// constant zero and expressions deeper than the evaluation stack.
Program compile(const FlatModel& model, const CompilerOptions& options = {});

// Constant folding of one expression (exposed for tests): folds constant subtrees and constant
// prefixes of sums and products, rewrites x^n (small integer n) to POWI; division by a constant
// zero is an error.
NodePtr fold(NodePtr node);

// Bytecode of one expression followed by its store; returns the stack depth it needs.
int emit_equation(const Node& expr, Op store, std::uint32_t target, std::vector<double>& consts,
                  std::vector<std::uint32_t>& code);

// The dependency order of the algebraic equations: every equation after those it reads.
// Throws InputError naming the cycle when there is one.
std::vector<std::size_t> topological_order(const FlatModel& model);

std::string disassemble(const std::vector<std::uint32_t>& code, std::size_t begin, std::size_t len);

}  // namespace hayate::ode
