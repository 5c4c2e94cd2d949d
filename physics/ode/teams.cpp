#include "ode/teams.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace hayate::ode {
namespace {

// U indices are handed out by section and offset while the words are read, then placed once
// the section sizes are known.
enum Section : std::uint32_t { S_STATE, S_VAR, S_CONST, S_TIME };

struct Ref {
  Section section;
  std::uint32_t index;  // within the section
};

class TeamBuilder {
 public:
  // The groups of `p` (the program or one of its halo programs), laid out with `top`'s choices
  // (CompilerOptions::pair_leaves, place, inline_single_use) and `o`.
  TeamBuilder(const Program& p, const Program& top, const LayoutOptions& o)
      : p_(p),
        pairs_(o.pairs && top.pair_leaves),
        direct_(o.direct),
        place_(top.place),
        single_reads_(top.inline_single_use),
        euler_words_(o.euler_words) {}

  void add_group(std::size_t g) {
    const std::int32_t* rec = &p_.groups[g * kGroupFields];
    Group out;
    out.kind = rec[G_KIND];
    out.count = rec[G_COUNT];
    if (rec[G_KIND] == GROUP_UNIFIED) {
      out.code = rewrite_unified(rec);
    } else {
      for (int l = 0; l < rec[G_COUNT]; ++l) {
        const std::size_t lc = g * kWarp + std::size_t(l);
        std::vector<Word> lane;
        for (std::int32_t i = 0; i < p_.lane_len[lc]; ++i)
          lane.push_back(rewrite_plain(p_.code[std::size_t(p_.lane_code[lc] + i)]));
        out.lanes.push_back(std::move(lane));
      }
    }
    groups_.push_back(std::move(out));
  }

  void end_phase() { phase_begin_.push_back(std::int32_t(groups_.size())); }

  // After the last phase: the word rewrites that need the whole team's program (a variable read
  // once), then the per-stream ones, then each phase's placement, which needs the final lengths.
  void finish() {
    std::map<const Ref*, int> reads;
    for (const Group& g : groups_) {
      for (const Word& w : g.code) count_reads(w, g.count, reads);
      for (const auto& lane : g.lanes)
        for (const Word& w : lane) count_reads(w, 1, reads);
    }
    for (Group& g : groups_) {
      if (g.kind == GROUP_UNIFIED) {
        if (single_reads_) g.code = keep_single_reads(std::move(g.code), g.count, reads);
        if (pairs_) {
          g.code = pair_leaves(std::move(g.code));
          g.code = compare_selects(std::move(g.code));
          g.code = affine_words(std::move(g.code), g.count);
          g.code = fold_sums(std::move(g.code));
          if (euler_words_) g.code = pair_affine_words(std::move(g.code));
          if (euler_words_ && !direct_) g.code = pairs_take_in(std::move(g.code));
        }
        g.code = negate_stores(std::move(g.code));
      }
      for (auto& lane : g.lanes)
        lane = negate_stores(single_reads_ ? keep_single_reads(std::move(lane), 1, reads)
                                           : std::move(lane));
    }
    if (place_)
      for (std::size_t ph = 0; ph + 1 < phase_begin_.size(); ++ph)
        place_on_schedulers(std::size_t(phase_begin_[ph]), std::size_t(phase_begin_[ph + 1]));
  }

  // Appends the team's integer block and constants. owned(state): the team's own bins write
  // it (the others of its stores are halo).
  template <class Owned>
  void emit(std::vector<std::int32_t>& ints, std::vector<double>& reals, const Owned& owned) const {
    const std::uint32_t n_states = std::uint32_t(states_.order.size());
    const std::uint32_t n_vars = std::uint32_t(vars_.order.size());
    const std::uint32_t n_consts = std::uint32_t(consts_.size());
    const std::uint32_t base[4] = {0, n_states, n_states + n_vars, n_states + n_vars + n_consts};
    const std::size_t n_u = std::size_t(base[3]) + 1;
    if (n_u > kMaxOperand) throw std::length_error("ode: teams: too many values for one team");
    const auto u = [&](const Ref& r) { return base[r.section] + r.index; };
    const auto word = [&](const Word& w) { return w.ref ? w.make(u(*w.ref)) : w.fixed; };

    std::vector<std::int32_t> recs, lanes, itab;
    std::vector<std::uint32_t> code;
    const bool any_lane = std::any_of(groups_.begin(), groups_.end(),
                                      [](const Group& g) { return g.kind != GROUP_UNIFIED; });
    for (const Group& g : groups_) {
      std::int32_t rec[kGroupFields] = {};
      rec[G_KIND] = g.kind;
      rec[G_COUNT] = g.count;
      if (g.kind == GROUP_UNIFIED) {
        rec[G_CODE] = std::int32_t(code.size());
        rec[G_LEN] = std::int32_t(g.code.size());
        rec[G_ITAB] = std::int32_t(itab.size() / kWarp);
        // A word whose rows the group already holds (a lane's own cell variable read again, a
        // pair of the same two values) reads those: fewer rows let wider layouts fit shared
        // memory.
        std::map<std::vector<std::int32_t>, std::uint32_t> rows_at;
        for (const Word& w : g.code) {
          if (w.slot.empty()) {
            code.push_back(team_word(word(w)));
            continue;
          }
          // Direct layouts: a row whose lanes all read one value, or values one apart in lane
          // order, needs no table; its word carries the index (and for a pair both indices).
          if (direct_ && !w.affine && w.fold == 0 && !w.compare) {
            const std::uint32_t made = team_word(w.make(0));
            Row rows[2];
            const std::size_t n_rows = w.slot.size() / kWarp;
            for (std::size_t r = 0; r < n_rows; ++r)
              rows[r] = classify(w.slot.data() + r * kWarp, g.count, u);
            const bool pair = op_of(made) >= kPairFirst;
            if (!pair && rows[0].kind != Row::TABLE) {
              code.push_back(with_team_kind(
                  made, rows[0].kind == Row::UNIFORM ? std::uint32_t(PUSH_VAR) + 1 : kTeamKindLane,
                  rows[0].first));
              continue;
            }
            if (pair && rows[0].kind != Row::TABLE && rows[1].kind != Row::TABLE &&
                rows[0].first <= kTeamPairIndexMax && rows[1].first <= kTeamPairIndexMax) {
              code.push_back(
                  with_team_kind(made, std::uint32_t(PUSH_VAR) + 1,
                                 team_pair_operands(rows[0].first, rows[0].kind == Row::LANE,
                                                    rows[1].first, rows[1].kind == Row::LANE)));
              continue;
            }
          }
          std::vector<std::int32_t> rows;
          for (const auto& entry : w.slot)
            rows.push_back(std::int32_t(u(*entry.ref)) | (entry.negate ? kTeamRowNegate : 0) |
                           entry.flags);
          const auto [at, added] = rows_at.emplace(
              rows, std::uint32_t(itab.size() / kWarp) - std::uint32_t(rec[G_ITAB]));
          if (added) itab.insert(itab.end(), rows.begin(), rows.end());
          code.push_back(
              w.affine    ? with_team_kind(w.make(at->second), kTeamKindAffine, at->second)
              : w.compare ? with_team_kind(encode(SELECT, 0) | (w.left ? kTeamNegate : 0u),
                                           kTeamKindCompare, at->second)
              : w.fold != 0
                  ? with_team_kind(encode(ADDN, 0) | (w.left ? kTeamNegate : 0u),
                                   w.fold == 2 ? kTeamKindFoldPush : std::uint32_t(VAR_IND) + 1,
                                   at->second)
                  : team_word(w.make(at->second)));
        }
      } else {
        rec[G_CTAB] = std::int32_t(lanes.size());
        lanes.resize(lanes.size() + 2 * kWarp, 0);
        for (std::size_t l = 0; l < g.lanes.size(); ++l) {
          lanes[std::size_t(rec[G_CTAB]) + l] = std::int32_t(code.size());
          lanes[std::size_t(rec[G_CTAB]) + kWarp + l] = std::int32_t(g.lanes[l].size());
          for (const Word& w : g.lanes[l]) code.push_back(team_word(word(w)));
        }
      }
      // run_local_stream reads a stream's last word as a store and stores after its loop.
      const auto ends_with_store = [&](std::int32_t begin, std::int32_t len) {
        const Op last = len > 0 ? op_of(code[std::size_t(begin + len - 1)]) : PUSH_VAR;
        if (last < ASSIGN_ALG || last > ASSIGN_DERIV_IND)
          throw std::logic_error("ode: teams: a stream that does not end with a store");
      };
      if (g.kind == GROUP_UNIFIED)
        ends_with_store(rec[G_CODE], rec[G_LEN]);
      else
        for (std::size_t l = 0; l < g.lanes.size(); ++l)
          ends_with_store(lanes[std::size_t(rec[G_CTAB]) + l],
                          lanes[std::size_t(rec[G_CTAB]) + kWarp + l]);
      recs.insert(recs.end(), rec, rec + kGroupFields);
    }
    if (!any_lane) lanes.clear();
    // One word past the last stream, so that the interpreter's fetch of the next word needs no
    // bounds test.
    code.push_back(0u);

    const Hazards hz = hazards();
    const bool in_place = std::all_of(written_.begin(), written_.end(), [&](std::uint32_t i) {
      return hz.in_place.count(&states_.of.at(i)) != 0;
    });
    const std::int32_t header[kTeamFields] = {
        std::int32_t(n_states),       std::int32_t(n_vars),       std::int32_t(consts_.size()),
        std::int32_t(groups_.size()), std::int32_t(lanes.size()), std::int32_t(itab.size()),
        std::int32_t(code.size()),    std::int32_t(in_place),     hz.time_phase};
    ints.insert(ints.end(), header, header + kTeamFields);
    for (std::uint32_t i : states_.order) ints.push_back(std::int32_t(i));
    for (std::uint32_t i : states_.order)
      ints.push_back(!written_.count(i) ? STATE_READ : owned(i) ? STATE_OWNED : STATE_HALO);
    for (std::uint32_t i : vars_.order) ints.push_back(std::int32_t(i));
    ints.insert(ints.end(), phase_begin_.begin(), phase_begin_.end());
    ints.insert(ints.end(), recs.begin(), recs.end());
    ints.insert(ints.end(), lanes.begin(), lanes.end());
    ints.insert(ints.end(), itab.begin(), itab.end());
    for (const std::uint32_t w : code) {
      std::int32_t bits;
      std::memcpy(&bits, &w, sizeof bits);
      ints.push_back(bits);
    }
    reals.insert(reals.end(), consts_.begin(), consts_.end());
  }

 private:
  // Which written states the integrator may update in U itself, and the first phase from which
  // no stream reads time (T_IN_PLACE, T_TIME_PHASE). The groups and lanes of a phase run at the
  // same time on a GPU, so a read of a state in the phase of its derivative store (or later) is
  // safe only where it comes earlier in the storing lane's own stream. Every table row of a word
  // counts (pairs and exp pairs read two, folds four).
  struct Hazards {
    std::set<const Ref*> in_place;
    std::int32_t time_phase = 0;
  };
  Hazards hazards() const {
    struct At {
      int phase, group, lane, pc;
    };
    std::map<const Ref*, At> stored;
    std::vector<std::pair<const Ref*, At>> reads;
    int last_time = -1;
    const int n_phases = int(phase_begin_.size()) - 1;
    for (int ph = 0; ph < n_phases; ++ph)
      for (int g = phase_begin_[std::size_t(ph)]; g < phase_begin_[std::size_t(ph) + 1]; ++g) {
        const auto scan = [&](const std::vector<Word>& code, int lane_first, int lane_end) {
          for (std::size_t pc = 0; pc < code.size(); ++pc) {
            const Word& w = code[pc];
            const bool store = !w.operand && w.op >= ASSIGN_ALG && w.op <= ASSIGN_DERIV_IND;
            const bool deriv = store && (w.op == ASSIGN_DERIV || w.op == ASSIGN_DERIV_IND);
            for (int l = lane_first; l < lane_end; ++l) {
              const At at{ph, g, l, int(pc)};
              const auto touch = [&](const Ref* r) {
                if (r == nullptr) return;
                if (deriv)
                  stored[r] = at;
                else if (!store && r->section == S_STATE)
                  reads.push_back({r, at});
                else if (!store && r->section == S_TIME)
                  last_time = std::max(last_time, ph);
              };
              touch(w.ref);
              for (std::size_t row = 0; row * kWarp < w.slot.size(); ++row)
                touch(w.slot[row * kWarp + std::size_t(l)].ref);
            }
          }
        };
        const Group& group = groups_[std::size_t(g)];
        if (group.kind == GROUP_UNIFIED)
          scan(group.code, 0, group.count);
        else
          for (std::size_t l = 0; l < group.lanes.size(); ++l)
            scan(group.lanes[l], int(l), int(l) + 1);
      }
    std::set<const Ref*> unsafe;
    for (const auto& [ref, read] : reads) {
      const auto it = stored.find(ref);
      if (it == stored.end()) continue;
      const At& st = it->second;
      const bool earlier_phase = read.phase < st.phase;
      const bool earlier_in_lane = read.phase == st.phase && read.group == st.group &&
                                   read.lane == st.lane && read.pc < st.pc;
      if (!earlier_phase && !earlier_in_lane) unsafe.insert(ref);
    }
    Hazards out;
    for (const auto& [ref, at] : stored)
      if (!unsafe.count(ref)) out.in_place.insert(ref);
    out.time_phase = std::int32_t(last_time + 1);
    return out;
  }

  // The groups of a phase in the order that puts them on a GPU multiprocessor's four warp
  // schedulers (warp w of a team on scheduler w % 4, one warp per group when the team has one
  // for each). A scheduler issues for all its warps, so the phase's longest streams should not
  // share one: each group, longest first, goes to the scheduler where the estimated time (its
  // longest stream plus a quarter of the words of the others, which take its issue slots) grows
  // least, among equals the one with fewer warps, unless the order they came in estimates less.
  // A quarter measured best of 0, 1/4, 1/2, 1 and 2 on GPUs (docs/dev/decisions.md). Phases
  // wider than a team of 24 warps keep their order.
  void place_on_schedulers(std::size_t begin, std::size_t end) {
    constexpr std::size_t kSchedulers = 4, kMostWarps = 24;
    const std::size_t n = end - begin;
    if (n <= 1 || n > kMostWarps) return;
    const auto length = [&](const Group& g) {
      std::size_t most = g.code.size();
      for (const auto& lane : g.lanes) most = std::max(most, lane.size());
      return double(most);
    };
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = begin + i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return length(groups_[a]) > length(groups_[b]);
    });
    struct Scheduler {
      std::size_t slots = 0;
      double longest = 0.0, total = 0.0;
      std::vector<std::size_t> groups;
      double time_with(double len) const {
        const double most = std::max(longest, len);
        return most + 0.25 * (total + len - most);
      }
    };
    Scheduler sched[kSchedulers];
    for (std::size_t p = 0; p < n; ++p) ++sched[p % kSchedulers].slots;
    for (std::size_t g : order) {
      const double len = length(groups_[g]);
      std::size_t best = kSchedulers;
      for (std::size_t k = 0; k < kSchedulers; ++k) {
        if (sched[k].groups.size() == sched[k].slots) continue;
        // Ties go to the scheduler with fewer slots: fewer warps left to share it.
        if (best == kSchedulers || sched[k].time_with(len) < sched[best].time_with(len) ||
            (sched[k].time_with(len) == sched[best].time_with(len) &&
             sched[k].slots < sched[best].slots))
          best = k;
      }
      sched[best].longest = std::max(sched[best].longest, len);
      sched[best].total += len;
      sched[best].groups.push_back(g);
    }
    // The greedy choice can lose to the order the groups came in: keep the better estimate.
    const auto worst = [](const Scheduler* s) {
      double most = 0.0;
      for (std::size_t k = 0; k < kSchedulers; ++k)
        most = std::max(most, s[k].longest + 0.25 * (s[k].total - s[k].longest));
      return most;
    };
    Scheduler given[kSchedulers];
    for (std::size_t p = 0; p < n; ++p) {
      Scheduler& s = given[p % kSchedulers];
      const double len = length(groups_[begin + p]);
      s.longest = std::max(s.longest, len);
      s.total += len;
    }
    if (worst(given) < worst(sched)) return;
    std::vector<Group> placed(n);
    for (std::size_t k = 0; k < kSchedulers; ++k)
      for (std::size_t j = 0; j < sched[k].groups.size(); ++j)
        placed[k + j * kSchedulers] = std::move(groups_[sched[k].groups[j]]);
    std::move(placed.begin(), placed.end(), groups_.begin() + std::ptrdiff_t(begin));
  }

  // A rewritten word: fixed, or made from one U index (ref), or from a team-local table slot
  // whose kWarp entries are U indices.
  struct Entry {
    const Ref* ref = nullptr;
    bool negate = false;     // a fold's row after the first: subtracted (kTeamRowNegate)
    std::int32_t flags = 0;  // an affine word's constants row: its function and divide bits
  };
  struct Word {
    std::uint32_t fixed = 0;
    const Ref* ref = nullptr;
    std::vector<Entry> slot;
    // Rebuilds the word around its new argument. A pair's slot spans two table rows.
    Op op = PUSH_VAR, leaf = PUSH_VAR;
    bool operand = false, left = false, negate = false;
    // An affine word (kTeamKindAffine): the leaf's row, then the constants' row, kept as rows.
    bool affine = false;
    // A fold (kTeamFoldRows table rows, kept as rows): 1 onto the top, 2 pushed; `left`
    // subtracts its first row from the top.
    int fold = 0;
    // A select that compares (kTeamKindCompare): three rows, the arm (or a spare), then the
    // comparison's two arguments; `operand` when it has a leaf arm, `left` for the true one.
    bool compare = false;
    std::uint32_t make(std::uint32_t arg) const {
      return operand ? encode_operand(op, leaf, left, arg)
                     : encode(op, arg) | (negate ? kTeamNegate : 0u);
    }
  };
  // The U indices of a table row over a group's lanes: one value, one apart, or neither.
  struct Row {
    enum Kind { UNIFORM, LANE, TABLE } kind = TABLE;
    std::uint32_t first = 0;
  };
  template <class UIndex>
  static Row classify(const Entry* row, std::int32_t count, const UIndex& u) {
    Row out;
    out.first = u(*row[0].ref);
    bool uniform = true, lane = true;
    for (std::int32_t l = 1; l < count; ++l) {
      const std::uint32_t at = u(*row[l].ref);
      uniform = uniform && at == out.first;
      lane = lane && at == out.first + std::uint32_t(l);
    }
    out.kind = uniform ? Row::UNIFORM : lane ? Row::LANE : Row::TABLE;
    return out;
  }
  struct Group {
    std::int32_t kind = 0, count = 0;
    std::vector<Word> code;                // unified
    std::vector<std::vector<Word>> lanes;  // per lane
  };
  struct Index {
    std::map<std::uint32_t, Ref> of;
    std::vector<std::uint32_t> order;
    const Ref* at(Section s, std::uint32_t key) {
      auto it = of.find(key);
      if (it == of.end()) {
        it = of.emplace(key, Ref{s, std::uint32_t(order.size())}).first;
        order.push_back(key);
      }
      return &it->second;
    }
  };

  // A state the team's derivative stores write: it has a place in U like the states read.
  const Ref* written(std::uint32_t state) {
    written_.insert(state);
    return states_.at(S_STATE, state);
  }

  const Ref* constant(double value) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    auto it = const_of_.find(bits);
    if (it == const_of_.end()) {
      it = const_of_.emplace(bits, Ref{S_CONST, std::uint32_t(consts_.size())}).first;
      consts_.push_back(value);
    }
    return &it->second;
  }

  // The U reference of a plain leaf.
  const Ref* plain_ref(Op leaf, std::uint32_t a) {
    switch (leaf) {
      case PUSH_CONST:
        return constant(p_.consts[a]);
      case PUSH_STATE:
        return states_.at(S_STATE, a);
      case PUSH_VAR:
        return vars_.at(S_VAR, a);
      default:
        return &time_;
    }
  }

  Word rewrite_plain(std::uint32_t w) {
    const Op op = op_of(w);
    const std::uint32_t a = arg_of(w);
    Word out;
    out.fixed = w;
    if (is_leaf(op)) {
      if (op >= CONST_IND) throw std::logic_error("ode: teams: table operand in a per-lane stream");
      out.ref = plain_ref(op, a);
    } else if (word_has_operand(w)) {
      const Op leaf = operand_leaf(w);
      if (leaf >= CONST_IND)
        throw std::logic_error("ode: teams: table operand in a per-lane stream");
      out.ref = plain_ref(leaf, a);
      out.operand = true;
      out.left = operand_is_left(w);
    } else if (op == ASSIGN_ALG) {
      out.ref = vars_.at(S_VAR, a);
    } else if (op == ASSIGN_DERIV) {
      out.ref = written(a);
    } else if (op == ASSIGN_ALG_IND || op == ASSIGN_DERIV_IND) {
      throw std::logic_error("ode: teams: table store in a per-lane stream");
    }
    out.op = out.operand ? op : (op == ASSIGN_ALG || op == ASSIGN_DERIV ? op : PUSH_VAR);
    return out;
  }

  // A word's U reads as a table row: its slot, or its one U value in every lane.
  static std::vector<Entry> lane_entries(const Word& w) {
    return w.slot.empty() ? std::vector<Entry>(kWarp, Entry{w.ref}) : w.slot;
  }

  // A leaf (every leaf is a U read here) followed by a binary operation with a leaf operand
  // becomes one pair word. Its two arguments are two consecutive rows of the unified table (a
  // uniform value repeated in every lane): the left one where any per-lane operand is, so the
  // word decodes like one, the right one in the row after it. (A leaf followed by exp with a
  // leaf factor is left to affine_words.)
  static std::vector<Word> pair_leaves(std::vector<Word> code) {
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i) {
      const Word& w = code[i];
      // Other words keep op PUSH_VAR with neither a ref nor a slot (their fixed word).
      const bool leaf = !w.operand && (w.op == PUSH_VAR || w.op == VAR_IND) &&
                        (w.ref != nullptr || !w.slot.empty());
      if (!leaf || i + 1 == code.size() || !code[i + 1].operand || !is_binary(code[i + 1].op)) {
        out.push_back(w);
        continue;
      }
      const Word& b = code[i + 1];
      // A pair reads its left argument first.
      const Word& x = b.left ? b : w;
      const Word& y = b.left ? w : b;
      Word pair;
      pair.operand = true;
      pair.op = Op(kPairFirst + (std::uint32_t(b.op) - std::uint32_t(ADD)));
      pair.leaf = VAR_IND;
      pair.slot = lane_entries(x);
      const std::vector<Entry> second = lane_entries(y);
      pair.slot.insert(pair.slot.end(), second.begin(), second.end());
      out.push_back(std::move(pair));
      ++i;
    }
    return out;
  }

  // A comparison pair (`Plt V, -40`) whose value only a later select takes as its condition,
  // with no store between them (a store may change what it compared), goes into that select
  // (kTeamKindCompare): the select compares the same two values with the same operation.
  static std::vector<Word> compare_selects(std::vector<Word> code) {
    const auto comparison = [](const Word& w) {
      const std::uint32_t op = std::uint32_t(w.op);
      if (!w.operand || w.fold != 0 || op < kPairFirst || op > kPairLast) return -1;
      const Op c = Op(op - kPairFirst + std::uint32_t(ADD));
      return c == LT ? 0 : c == LE ? 1 : c == GT ? 2 : c == GE ? 3 : c == EQ ? 4 : c == NE ? 5 : -1;
    };
    std::vector<bool> drop(code.size(), false);
    for (std::size_t i = 0; i < code.size(); ++i) {
      const int how = comparison(code[i]);
      if (how < 0) continue;
      // Above the condition: values the words between push and pop, never below it.
      int depth = 0;
      for (std::size_t j = i + 1; j < code.size(); ++j) {
        const Word& w = code[j];
        if (is_store(w) || w.compare || w.affine || w.fold != 0) break;
        const std::uint32_t x = bytecode(w);
        const bool arm = w.operand;
        if (op_of(x) == SELECT && depth == (arm ? 1 : 2)) {
          Word s;
          s.op = SELECT;
          s.compare = true;
          s.operand = arm;
          s.left = arm && w.left;
          s.leaf = VAR_IND;
          // Row 1: the arm, or the comparison's first row again (read and not used).
          s.slot = arm ? lane_entries(w)
                       : std::vector<Entry>(code[i].slot.begin(), code[i].slot.begin() + kWarp);
          s.slot.insert(s.slot.end(), code[i].slot.begin(), code[i].slot.end());
          for (int l = 0; l < kWarp; ++l) {
            s.slot[std::size_t(kWarp + l)].flags =
                std::int32_t(std::uint32_t(how) << kTeamCompareShift);
            s.slot[std::size_t(2 * kWarp + l)].flags = arm ? kTeamCompareArm : 0;
          }
          code[j] = std::move(s);
          drop[i] = true;
          break;
        }
        // A pair pushes its value and pops nothing. A word that pops the condition takes it
        // (`t >= 10 && ...`): not a select's any more.
        const int pops = std::uint32_t(w.op) >= kPairFirst ? 0 : word_pops(x);
        if (pops > depth) break;
        depth += (std::uint32_t(w.op) >= kPairFirst ? 1 : word_pushes(x)) - pops;
      }
    }
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i)
      if (!drop[i]) out.push_back(std::move(code[i]));
    return out;
  }

  // Five constants at consecutive U indices (an affine word's a, b, k, q, p), once per tuple.
  const Ref* constant_block(const std::array<double, kTeamAffineConstants>& values) {
    std::array<std::uint64_t, kTeamAffineConstants> key;
    std::memcpy(key.data(), values.data(), sizeof key);
    auto it = blocks_.find(key);
    if (it == blocks_.end()) {
      it = blocks_.emplace(key, Ref{S_CONST, std::uint32_t(consts_.size())}).first;
      consts_.insert(consts_.end(), values.begin(), values.end());
    }
    return &it->second;
  }

  // [leaf x] [+ a, - a or a -; or * k, / k] [+ b or - b] [* k or / k] f [* q] [+ p, - p or p -], f
  // = exp (also exp with its factor k as operand), exprel, exprelr or log, and every a, b, k, q,
  // p a constant in every lane, becomes one affine word (ops.hpp, kTeamKindAffine): an exp pair,
  // `Padd; exp k; add 1` of a rate function's denominator, `push Cai; log; mul q; sub p`,
  // `Psub V, E_K1; add 5.476; exp 0.08032`. The constants may differ from lane to lane (a warp of
  // several gates' rates of one shape, LR-Line's alpha_d, beta_f and beta_X): each lane reads the
  // block of its own tuple. A stack +, -, * or / right after goes into it too. What the words did
  // not have takes its identity, a subtraction adds the negated constant, and a - x (or -x) becomes
  // x + (-a) with -k: exact up to the sign of a zero argument, which none of the four functions
  // tells apart.
  std::vector<Word> affine_words(std::vector<Word> code, std::int32_t count) {
    using Lanes = std::array<double, kWarp>;
    const auto filled = [](double v) {
      Lanes out;
      out.fill(v);
      return out;
    };
    const auto negated = [](Lanes v) {
      for (double& x : v) x = -x;
      return v;
    };
    // Each lane's constant of a row, when every lane reads a constant; lanes past the group's
    // count take lane 0's (they run nothing, and need no block of their own).
    const auto row_constants = [&](const Entry* row, Lanes* values) {
      for (std::int32_t l = 0; l < count; ++l)
        if (row[l].ref == nullptr || row[l].ref->section != S_CONST || row[l].negate) return false;
      for (int l = 0; l < kWarp; ++l)
        (*values)[std::size_t(l)] = consts_[row[l < count ? l : 0].ref->index];
      return true;
    };
    // A word with one leaf operand (not a pair, an affine word or a fold).
    const auto operand_word = [](const Word& w) {
      return w.operand && !w.affine && w.fold == 0 && std::uint32_t(w.op) < kPairFirst;
    };
    const auto operand_constants = [&](const Word& w, Lanes* values) {
      const std::vector<Entry> e = lane_entries(w);
      return row_constants(e.data(), values);
    };
    const auto function_of = [](int op) {
      return op == int(EXP)       ? 0
             : op == int(EXPREL)  ? 1
             : op == int(EXPRELR) ? 2
             : op == int(LOG)     ? 3
                                  : -1;
    };
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i) {
      std::vector<Entry> x;
      Lanes a = filled(-0.0), b = filled(-0.0), k = filled(1.0), q = filled(1.0), p = filled(-0.0),
            c{};
      double sign = 1.0;
      bool divide = false, scaled = false;
      int fn = -1;
      std::size_t j = i;
      const Word& w = code[i];
      const bool leaf = !w.operand && (w.op == PUSH_VAR || w.op == VAR_IND) &&
                        (w.ref != nullptr || !w.slot.empty());
      const std::uint32_t pair_op =
          std::uint32_t(w.op) >= kPairFirst && std::uint32_t(w.op) <= kPairLast
              ? std::uint32_t(w.op) - kPairFirst + std::uint32_t(ADD)
              : 0u;
      if (w.operand && pair_op != 0 && w.fold == 0) {
        const Entry* left = w.slot.data();
        const Entry* right = w.slot.data() + kWarp;
        const Op op = Op(pair_op);
        const bool right_const = row_constants(right, &c);
        if ((op == ADD || op == SUB || op == MUL || op == DIV) && right_const) {
          x.assign(left, left + kWarp);
          if (op == ADD) a = c;
          if (op == SUB) a = negated(c);
          if (op == MUL || op == DIV) k = c, scaled = true, divide = op == DIV;
        } else if ((op == ADD || op == SUB || op == MUL) && row_constants(left, &c)) {
          x.assign(right, right + kWarp);
          if (op == ADD) a = c;
          if (op == SUB) a = negated(c), sign = -1.0;  // c - x = -(x + (-c))
          if (op == MUL) k = c, scaled = true;
        }
        if (!x.empty()) ++j;
        // A second shift, (x + a) + b (`V - E_K1 + 5.476`): a constant added on either side or
        // subtracted on the right.
        if (!x.empty() && !scaled && sign > 0.0 && j < code.size() && operand_word(code[j]) &&
            (code[j].op == ADD || (code[j].op == SUB && !code[j].left)) &&
            operand_constants(code[j], &c)) {
          b = code[j].op == ADD ? c : negated(c);
          ++j;
        }
      } else if (leaf) {
        x = lane_entries(w);
        ++j;
        if (j < code.size() && fixed_op(code[j]) == int(NEG)) sign = -1.0, ++j;
      }
      if (!x.empty() && fn < 0 && !scaled && j < code.size() && operand_word(code[j])) {
        const Word& s = code[j];
        if ((s.op == MUL || (s.op == DIV && !s.left)) && operand_constants(s, &k)) {
          scaled = true, divide = s.op == DIV, ++j;
        } else if (s.op == EXP && operand_constants(s, &k)) {
          scaled = true, fn = 0, ++j;
        } else if (s.op == EXP && j == i + 1 && sign > 0.0 && row_constants(x.data(), &k)) {
          // `push k; exp x`: the leaf is the factor, the operand the argument.
          x = lane_entries(s);
          scaled = true, fn = 0, ++j;
        }
      }
      if (!x.empty() && fn < 0 && j < code.size()) {
        fn = function_of(fixed_op(code[j]));
        if (fn >= 0) ++j;
      }
      if (fn < 0) {
        out.push_back(std::move(code[i]));
        continue;
      }
      if (j < code.size() && operand_word(code[j]) && code[j].op == MUL &&
          operand_constants(code[j], &c))
        q = c, ++j;
      if (j < code.size() && operand_word(code[j]) && (code[j].op == ADD || code[j].op == SUB) &&
          operand_constants(code[j], &c)) {
        if (code[j].op == ADD)
          p = c;
        else if (!code[j].left)
          p = negated(c);  // r - p
        else
          p = c, q = negated(q);  // p - q r = p + (-q) r
        ++j;
      }
      Word f;
      f.operand = true;
      f.affine = true;
      f.op = EXP;
      f.leaf = VAR_IND;
      f.slot = std::move(x);
      // A stack +, -, * or / right after takes the word's value as its right argument: the
      // word does it (kTeamAffineCombineShift).
      const int next_op = j < code.size() ? fixed_op(code[j]) : -1;
      const std::uint32_t combine = take_of(next_op);
      if (combine != AFFINE_PUSH) ++j;
      const std::int32_t flags = (fn << kTeamAffineFnShift) | (divide ? kTeamAffineDivide : 0) |
                                 std::int32_t(combine << kTeamAffineCombineShift);
      for (int l = 0; l < kWarp; ++l) {
        const std::size_t at = std::size_t(l);
        Entry constants{constant_block({a[at], b[at], sign * k[at], q[at], p[at]})};
        constants.flags = flags;
        f.slot.push_back(constants);
      }
      out.push_back(std::move(f));
      i = j - 1;
    }
    return out;
  }

  // Two affine words in a row become one (ops.hpp, kTeamAffinePair): its four rows are the
  // first word's two, then the second's. Each reads a leaf and constants only, so the second's
  // value never waits on the first's: the interpreter computes both side by side, then applies
  // them to the stack in order, as the two words would.
  static std::vector<Word> pair_affine_words(std::vector<Word> code) {
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i) {
      if (i + 1 < code.size() && code[i].affine && code[i + 1].affine && !code[i].left &&
          !code[i + 1].left) {
        Word w = std::move(code[i]);
        w.left = true;
        w.slot.insert(w.slot.end(), code[i + 1].slot.begin(), code[i + 1].slot.end());
        out.push_back(std::move(w));
        ++i;
        continue;
      }
      out.push_back(std::move(code[i]));
    }
    return out;
  }

  // A pair of +, -, * or / followed by a stack +, -, * or / takes it in (ops.hpp, kTeamPairTakes):
  // `Pmul g_K, X; mul` of I_K, `Pmul; div` of dV/dt. The pair's value was the stack word's right
  // argument and the value below it its left one; the pair now does that operation, so the bits
  // are the same and the stream a word shorter. Its third row repeats the second's U indices
  // with the operation in their top bits.
  static std::vector<Word> pairs_take_in(std::vector<Word> code) {
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i) {
      Word& w = code[i];
      const std::uint32_t op = std::uint32_t(w.op);
      const bool pair = w.operand && op >= kPairFirst && op <= kPairLast && !w.affine &&
                        w.fold == 0 && !w.compare && w.slot.size() == 2 * kWarp &&
                        take_of(int(op - kPairFirst + std::uint32_t(ADD))) != AFFINE_PUSH;
      const std::uint32_t how = i + 1 < code.size() ? take_of(fixed_op(code[i + 1])) : AFFINE_PUSH;
      if (!pair || how == AFFINE_PUSH) {
        out.push_back(std::move(w));
        continue;
      }
      w.left = true;
      for (int l = 0; l < kWarp; ++l) {
        Entry e = w.slot[std::size_t(kWarp + l)];
        e.negate = false;
        e.flags = std::int32_t(how << kTeamPairTakeShift);
        w.slot.push_back(e);
      }
      out.push_back(std::move(w));
      ++i;
    }
    return out;
  }

  // A run of additions and subtractions of leaves becomes one fold word (kTeamFoldRows rows):
  // words with a leaf operand that add it on either side or subtract it on the right fold onto
  // the top; a pair that adds or subtracts starts a pushed fold with its two rows. Runs longer
  // than the rows are cut, and a fold is made only where it replaces at least kFoldLeast words:
  // its dispatch is the stack operations' branch, the loop's longest.
  static constexpr int kFoldLeast = 2;
  std::vector<Word> fold_sums(std::vector<Word> code) {
    const auto additive = [](Op op) { return op == ADD || op == SUB; };
    // A word that adds or subtracts one leaf to the top: top + x, x + top or top - x.
    const auto folds_onto = [&](const Word& w) {
      return w.operand && !w.affine && w.fold == 0 && additive(w.op) && (w.op == ADD || !w.left);
    };
    const auto pair_op = [](const Word& w) {
      const std::uint32_t op = std::uint32_t(w.op);
      return op >= kPairFirst && op <= kPairLast ? Op(op - kPairFirst + std::uint32_t(ADD)) : w.op;
    };
    const auto starts_push = [&](const Word& w) {
      return w.operand && !w.affine && w.fold == 0 && std::uint32_t(w.op) >= kPairFirst &&
             additive(pair_op(w));
    };
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size();) {
      const bool push = starts_push(code[i]);
      std::size_t n = push ? 1 : 0;  // words of the run
      int rows = push ? 2 : 0;
      while (i + n < code.size() && rows < kTeamFoldRows && folds_onto(code[i + n])) ++n, ++rows;
      if (int(n) < kFoldLeast) {
        out.push_back(std::move(code[i]));
        ++i;
        continue;
      }
      Word f;
      f.fold = push ? 2 : 1;
      f.leaf = VAR_IND;
      for (std::size_t k = 0; k < n; ++k) {
        const Word& w = code[i + k];
        std::vector<Entry> e = lane_entries(w);
        const bool negate = push && k == 0 ? false : w.op == SUB || pair_op(w) == SUB;
        if (push && k == 0) {
          // The pair's right row is the fold's second: subtracted for a pair's SUB.
          for (int l = 0; l < kWarp; ++l) e[std::size_t(kWarp + l)].negate = pair_op(w) == SUB;
        } else if (f.slot.empty()) {
          f.left = negate;  // the first row is a plain index: the side bit subtracts it
        } else {
          for (Entry& x : e) x.negate = negate;
        }
        f.slot.insert(f.slot.end(), e.begin(), e.end());
      }
      while (f.slot.size() < std::size_t(kTeamFoldRows) * kWarp)
        f.slot.push_back(Entry{constant(-0.0)});
      // A pushed fold followed by a stack + adds the value below itself (kTeamFoldAdd).
      const Word* after = i + n < code.size() ? &code[i + n] : nullptr;
      if (push && after != nullptr && after->ref == nullptr && after->slot.empty() &&
          !after->operand && op_of(after->fixed) == ADD) {
        for (int l = 0; l < kWarp; ++l) f.slot[std::size_t(kWarp + l)].flags = kTeamFoldAdd;
        ++n;
      }
      out.push_back(std::move(f));
      i += n;
    }
    return out;
  }

  static bool is_store(const Word& w) { return w.op >= ASSIGN_ALG && w.op <= ASSIGN_DERIV_IND; }
  // A word without U access: its opcode, else -1.
  static int fixed_op(const Word& w) {
    return w.ref == nullptr && w.slot.empty() && !w.operand ? int(op_of(w.fixed)) : -1;
  }
  // What a word that takes in the stack operation `op` after it does (TeamAffineCombine): +, -,
  // * or /, else nothing (AFFINE_PUSH).
  static std::uint32_t take_of(int op) {
    return op == int(ADD)   ? AFFINE_ADD
           : op == int(SUB) ? AFFINE_SUB
           : op == int(MUL) ? AFFINE_MUL
           : op == int(DIV) ? AFFINE_DIV
                            : AFFINE_PUSH;
  }
  // The U values a word reads in each of the first `count` lanes (none for fixed words).
  static std::vector<const Ref*> lane_refs(const Word& w, std::int32_t count) {
    std::vector<const Ref*> out;
    if (w.ref == nullptr && w.slot.empty()) return out;
    for (std::int32_t l = 0; l < count; ++l) out.push_back(w.slot.empty() ? w.ref : w.slot[l].ref);
    return out;
  }
  static void count_reads(const Word& w, std::int32_t count, std::map<const Ref*, int>& reads) {
    if (is_store(w)) return;
    for (const Ref* r : lane_refs(w, count)) ++reads[r];
  }
  static std::uint32_t bytecode(const Word& w) {
    return w.ref == nullptr && w.slot.empty() ? w.fixed : w.make(0);
  }

  // An algebraic variable that the team reads once, in the stream that stores it, stays on the
  // stack instead (LR-Line: Xi read by I_K, I_K1 by I_ion, I_ion by dV/dt, one word each on its
  // longest streams). [store v] [w...] [push v] becomes [w...] when the words w leave the stack as
  // they found it, and [store v] [w...] [op with operand v] becomes [w...] [op over the stack]
  // when the words w compute one value x without touching v and op(v, x) is the operation's own
  // order: v its left argument, or op commutative (+, *). The same operations on the same
  // values, so the results are bitwise those of the program; only the team's copy changes (the
  // other modes and evaluate() still store v; the team's variables are never read back).
  static std::vector<Word> keep_single_reads(std::vector<Word> code, std::int32_t count,
                                             const std::map<const Ref*, int>& reads) {
    const auto depth_profile = [](const std::vector<Word>& c) {
      int d = 0, most = 0;
      for (const Word& w : c) {
        const std::uint32_t x = bytecode(w);
        d += word_pushes(x) - word_pops(x);
        most = std::max(most, d);
      }
      return most;
    };
    for (std::size_t i = 0; i < code.size(); ++i) {
      const Word& store = code[i];
      if (store.op != ASSIGN_ALG && store.op != ASSIGN_ALG_IND) continue;
      const std::vector<const Ref*> v = lane_refs(store, count);
      const bool once = std::all_of(v.begin(), v.end(), [&](const Ref* r) {
        const auto it = reads.find(r);
        return it != reads.end() && it->second == 1;
      });
      if (!once) continue;
      std::size_t j = i + 1;
      int d = 0;
      bool inside = true;  // the words before the read never reach below their start
      for (; j < code.size(); ++j) {
        if (!is_store(code[j]) && lane_refs(code[j], count) == v) break;
        const std::uint32_t x = bytecode(code[j]);
        d -= word_pops(x);
        inside = inside && d >= 0;
        d += word_pushes(x);
      }
      if (j == code.size() || !inside) continue;
      const Word& read = code[j];
      std::vector<Word> out(code.begin(), code.begin() + std::ptrdiff_t(i));
      if (!read.operand && d == 0) {
        out.insert(out.end(), code.begin() + std::ptrdiff_t(i + 1),
                   code.begin() + std::ptrdiff_t(j));
      } else if (read.operand && is_binary(read.op) && d == 1 &&
                 (read.left || read.op == ADD || read.op == MUL)) {
        out.insert(out.end(), code.begin() + std::ptrdiff_t(i + 1),
                   code.begin() + std::ptrdiff_t(j));
        Word stack;
        stack.fixed = encode(read.op, 0);
        out.push_back(stack);
      } else {
        continue;
      }
      out.insert(out.end(), code.begin() + std::ptrdiff_t(j + 1), code.end());
      // v waits on the stack below the words between: the stream must still fit it.
      if (depth_profile(out) > kMaxStack) continue;
      code = std::move(out);
      i = std::size_t(-1);  // again from the start: indices moved
    }
    return code;
  }

  // A NEG followed by a store becomes a store of the negated value (kTeamNegate): one word less
  // on the stream, where dV/dt = -(...) ends most cell models' critical chains.
  static std::vector<Word> negate_stores(std::vector<Word> code) {
    std::vector<Word> out;
    for (std::size_t i = 0; i < code.size(); ++i) {
      const Word& w = code[i];
      const bool neg = w.ref == nullptr && w.slot.empty() && op_of(w.fixed) == NEG;
      if (neg && i + 1 < code.size() && code[i + 1].op >= ASSIGN_ALG &&
          code[i + 1].op <= ASSIGN_DERIV_IND && !code[i + 1].operand && !code[i + 1].negate) {
        out.push_back(code[i + 1]);
        out.back().negate = true;
        ++i;
        continue;
      }
      out.push_back(w);
    }
    return out;
  }

  std::vector<Word> rewrite_unified(const std::int32_t* rec) {
    std::vector<Word> out;
    for (std::int32_t i = 0; i < rec[G_LEN]; ++i) {
      const std::uint32_t w = p_.code[std::size_t(rec[G_CODE] + i)];
      const Op op = op_of(w);
      const std::uint32_t a = arg_of(w);
      const bool operand = word_has_operand(w);
      const Op kind = operand ? operand_leaf(w) : op;
      const bool table =
          (is_leaf(kind) && kind >= CONST_IND) || op == ASSIGN_ALG_IND || op == ASSIGN_DERIV_IND;
      if (!table) {
        out.push_back(rewrite_plain(w));
        continue;
      }
      Word t;
      t.operand = operand;
      t.left = operand && operand_is_left(w);
      t.op = operand                  ? op
             : op == ASSIGN_ALG_IND   ? ASSIGN_ALG_IND
             : op == ASSIGN_DERIV_IND ? ASSIGN_DERIV_IND
                                      : VAR_IND;
      t.leaf = VAR_IND;
      for (int l = 0; l < kWarp; ++l) {
        Entry e;
        if (kind == CONST_IND) {
          e.ref = constant(p_.ctab[std::size_t(rec[G_CTAB] + std::int32_t(a)) * kWarp + l]);
        } else {
          const std::int32_t idx = p_.itab[std::size_t(rec[G_ITAB] + std::int32_t(a)) * kWarp + l];
          if (kind == STATE_IND)
            e.ref = states_.at(S_STATE, std::uint32_t(idx));
          else if (op == ASSIGN_DERIV_IND)
            e.ref = written(std::uint32_t(idx));
          else
            e.ref = vars_.at(S_VAR, std::uint32_t(idx));
        }
        t.slot.push_back(e);
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  const Program& p_;
  bool pairs_, direct_, place_, single_reads_, euler_words_;
  std::map<std::array<std::uint64_t, kTeamAffineConstants>, Ref> blocks_;
  Index states_, vars_;
  std::unordered_map<std::uint64_t, Ref> const_of_;
  std::vector<double> consts_;
  const Ref time_{S_TIME, 0};  // the stage time, written into U at every sweep
  std::vector<Group> groups_;
  std::vector<std::int32_t> phase_begin_{0};
  std::set<std::uint32_t> written_;
};

}  // namespace

std::size_t TeamsLayout::scratch_bytes(int state_buffers) const {
  std::size_t most = 0;
  for (int t = 0; t < teams; ++t) {
    const std::int32_t* h = ints.data() + int_begin[std::size_t(t)];
    const std::size_t n_u =
        std::size_t(h[T_STATES]) + std::size_t(h[T_VARS]) + std::size_t(h[T_CONSTS]) + 1;
    const std::size_t n_int =
        std::size_t(int_begin[std::size_t(t) + 1] - int_begin[std::size_t(t)]);
    most = std::max(most,
                    (n_u + std::size_t(state_buffers) * std::size_t(h[T_STATES])) * sizeof(double) +
                        (n_int * sizeof(std::int32_t) + 7) / 8 * 8);
  }
  return most;
}

int TeamsLayout::critical_words() const {
  int most = 0;
  for (int t = 0; t < teams; ++t) {
    const std::int32_t* h = ints.data() + int_begin[std::size_t(t)];
    const std::int32_t* phase_begin = h + kTeamFields + 2 * h[T_STATES] + h[T_VARS];
    const std::int32_t* groups = phase_begin + n_phases + 1;
    const std::int32_t* lanes = groups + std::size_t(h[T_GROUPS]) * kGroupFields;
    int sum = 0;
    for (int ph = 0; ph < n_phases; ++ph) {
      int longest = 0;
      for (int g = phase_begin[ph]; g < phase_begin[ph + 1]; ++g) {
        const std::int32_t* rec = groups + std::size_t(g) * kGroupFields;
        if (rec[G_KIND] == GROUP_UNIFIED) {
          longest = std::max(longest, int(rec[G_LEN]));
        } else {
          for (int l = 0; l < rec[G_COUNT]; ++l)
            longest = std::max(longest, int(lanes[rec[G_CTAB] + kWarp + l]));
        }
      }
      sum += longest;
    }
    most = std::max(most, sum);
  }
  return most;
}

bool sink_shortens(const FlatModel& model, const CompilerOptions& options) {
  if (!options.merge) return false;
  CompilerOptions o = options;
  o.halo = 0;
  const auto critical = [&](bool sink) {
    o.sink_derivatives = sink;
    const Program prog = compile(model, o);
    return layout_teams(prog, int(prog.n_bins)).critical_words();
  };
  return critical(true) < critical(false);
}

SplitChoice choose_split_sums(const std::function<FlatModel(int)>& load,
                              const CompilerOptions& options) {
  CompilerOptions o = options;
  o.halo = 0;  // the halo widens every stream of a phase alike
  const auto critical = [&](const FlatModel& model) {
    const Program prog = compile(model, o);
    return layout_teams(prog, int(prog.n_bins)).critical_words();
  };
  SplitChoice choice;
  const FlatModel whole = load(0);
  const std::size_t longest = longest_sum(whole);
  if (longest < 3) return choice;
  choice.critical = critical(whole);
  choice.trials.push_back({0, choice.critical});
  // Limits of 2 to 8, then a few wider ones: past 8 the part counts change slowly. Whole sums
  // count as the widest limit: a cut must do better than them.
  int best = 0, best_words = choice.critical + 1;
  for (int limit : {2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128}) {
    if (std::size_t(limit) >= longest) break;
    const int words = critical(load(limit));
    choice.trials.push_back({limit, words});
    if (words <= best_words) best = limit, best_words = words;
  }
  if (best_words < choice.critical) choice.limit = best, choice.critical = best_words;
  return choice;
}

TeamsLayout layout_teams(const Program& prog, int teams, const LayoutOptions& options) {
  const int halo = options.halo;
  if (teams < 1) throw std::logic_error("ode: teams: at least one team");
  if (halo < 0 || std::size_t(halo) > prog.halo_programs.size())
    throw std::logic_error("ode: teams: the program has no halo that wide");
  const Program& src = halo > 0 ? *prog.halo_programs[std::size_t(halo) - 1] : prog;
  TeamsLayout out;
  out.teams = teams;
  out.n_phases = int(src.n_phases());
  out.halo = halo;
  out.direct = options.direct;
  const std::size_t n_bins = src.n_bins;
  out.int_begin.push_back(0);
  out.real_begin.push_back(0);
  for (int t = 0; t < teams; ++t) {
    TeamBuilder team(src, prog, options);
    for (std::size_t ph = 0; ph < src.n_phases(); ++ph) {
      for (std::size_t b = std::size_t(t); b < n_bins; b += std::size_t(teams))
        for (std::int32_t g = src.bin_begin[ph * n_bins + b];
             g < src.bin_begin[ph * n_bins + b + 1]; ++g)
          team.add_group(std::size_t(g));
      team.end_phase();
    }
    team.finish();
    // Without a halo every state a team writes is its own.
    team.emit(out.ints, out.reals,
              [&](std::uint32_t state) { return halo == 0 || prog.state_bin[state] % teams == t; });
    out.int_begin.push_back(std::int64_t(out.ints.size()));
    out.real_begin.push_back(std::int64_t(out.reals.size()));
  }
  return out;
}

}  // namespace hayate::ode
