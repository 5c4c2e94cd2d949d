#pragma once
// Time integration kernels: kick/drift for leapfrog (shared and block steps), predictor and
// corrector for 4th-order Hermite, and the block-step level rule.
#include "compat/kokkos_compat.hpp"
#include "gravity/state.hpp"

namespace hayate::gravity {

// Level k of the power-of-two hierarchy (step dt_max / 2^k) that satisfies
// dt <= eta sqrt(eps / |a|), capped at max_level.
KOKKOS_INLINE_FUNCTION int step_level(const double ax, const double ay, const double az,
                                      const double dt_max, const double eta, const double eps,
                                      const int max_level) {
  const double a2 = ax * ax + ay * ay + az * az;
  if (!(a2 > 0)) return 0;
  const double dt = eta * compat::sqrt(eps / compat::sqrt(a2));
  int k = 0;
  double h = dt_max;
  while (h > dt && k < max_level) {
    h *= 0.5;
    ++k;
  }
  return k;
}

// Coarsest level >= k whose steps start at `tick` (in units of the finest step, 2^max_level per
// dt_max): a particle may only move to a larger step where that step's boundary falls.
KOKKOS_INLINE_FUNCTION int aligned_level(int k, const std::int64_t tick, const int max_level) {
  while (k < max_level && (tick & ((std::int64_t(1) << (max_level - k)) - 1)) != 0) ++k;
  return k;
}

// y += h * dy for every particle: the kick (v += h a) and the drift (x += h v) of leapfrog.
template <class Space>
void advance_by(const Space& space, const char* label, const Particles<Space>& p,
                const typename Particles<Space>::Vec& y, const typename Particles<Space>::Vec& dy,
                const double h) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Space>(space, 0, p.n), KOKKOS_LAMBDA(const int i) {
        for (int c = 0; c < 3; ++c) y(i, c) += h * dy(i, c);
      });
}

template <class Space>
void kick(const Space& space, const Particles<Space>& p, const double h) {
  advance_by(space, "hayate::gravity::kick", p, p.v, p.acc, h);
}

template <class Space>
void drift(const Space& space, const Particles<Space>& p, const double h) {
  advance_by(space, "hayate::gravity::drift", p, p.x, p.v, h);
}

// Hermite predictor: x_p = x + v dt + a dt^2/2 + j dt^3/6, v_p = v + a dt + j dt^2/2, keeping
// the old state in x0, v0.
template <class Space>
void hermite_predict(const Space& space, const Particles<Space>& p,
                     const typename Particles<Space>::Vec& x0,
                     const typename Particles<Space>::Vec& v0, const double dt) {
  const auto x = p.x, v = p.v, a = p.acc, j = p.jerk;
  Kokkos::parallel_for(
      "hayate::gravity::hermite_predict", Kokkos::RangePolicy<Space>(space, 0, p.n),
      KOKKOS_LAMBDA(const int i) {
        for (int c = 0; c < 3; ++c) {
          x0(i, c) = x(i, c);
          v0(i, c) = v(i, c);
          x(i, c) += dt * (v(i, c) + dt * (0.5 * a(i, c) + dt * j(i, c) / 6.0));
          v(i, c) += dt * (a(i, c) + 0.5 * dt * j(i, c));
        }
      });
}

// Hermite corrector (Makino & Aarseth 1992, time-symmetric form) from the old state and the
// new acceleration a1 and jerk j1 evaluated at the predicted state; stores a1, j1.
template <class Space>
void hermite_correct(const Space& space, const Particles<Space>& p,
                     const typename Particles<Space>::Vec& x0,
                     const typename Particles<Space>::Vec& v0,
                     const typename Particles<Space>::Vec& a1,
                     const typename Particles<Space>::Vec& j1, const double dt) {
  const auto x = p.x, v = p.v, a = p.acc, j = p.jerk;
  Kokkos::parallel_for(
      "hayate::gravity::hermite_correct", Kokkos::RangePolicy<Space>(space, 0, p.n),
      KOKKOS_LAMBDA(const int i) {
        for (int c = 0; c < 3; ++c) {
          const double vn =
              v0(i, c) + 0.5 * dt * (a(i, c) + a1(i, c)) + dt * dt / 12.0 * (j(i, c) - j1(i, c));
          x(i, c) = x0(i, c) + 0.5 * dt * (v0(i, c) + vn) + dt * dt / 12.0 * (a(i, c) - a1(i, c));
          v(i, c) = vn;
          a(i, c) = a1(i, c);
          j(i, c) = j1(i, c);
        }
      });
}

}  // namespace hayate::gravity

namespace hayate::gravity {

// Block steps. Opening half kick of a dt_max cycle: every particle gets its level from its
// acceleration (any level may start at tick 0).
template <class Space>
void block_open(const Space& space, const Particles<Space>& p, const double dt_max,
                const double eta, const double eps, const int max_level) {
  const auto v = p.v, a = p.acc;
  const auto level = p.level;
  Kokkos::parallel_for(
      "hayate::gravity::block_open", Kokkos::RangePolicy<Space>(space, 0, p.n),
      KOKKOS_LAMBDA(const int i) {
        const int k = step_level(a(i, 0), a(i, 1), a(i, 2), dt_max, eta, eps, max_level);
        level(i) = k;
        const double h = dt_max / double(std::int64_t(1) << k);
        for (int c = 0; c < 3; ++c) v(i, c) += 0.5 * h * a(i, c);
      });
}

// The coarsest and finest levels in use.
struct LevelRange {
  int coarsest, finest;
};

// Block-step passes over all particles go by chunks of kBlockChunk particles, one team each.
// Index r of a team loop over `runs` (the team size) visits the chunk's particles r, r + runs,
// ..., kStride at a time, their loads issued before any is used: a plain team loop has one load
// in flight per thread, and these passes are bound by memory latency.
inline constexpr int kBlockChunk = 4096;
inline constexpr int kStride = 4;

struct ChunkRange {
  int begin, end;
  KOKKOS_INLINE_FUNCTION ChunkRange(const int n, const int c)
      : begin(c * kBlockChunk),
        end(n - c * kBlockChunk < kBlockChunk ? n : (c + 1) * kBlockChunk) {}
};

// Index k's share of a chunk (of a team loop over `runs`): particles chunk.begin + k, + runs,
// ..., kStride of their levels loaded before f(i, level of i) sees any of them.
template <class LevelView, class F>
KOKKOS_INLINE_FUNCTION void for_levels(const LevelView& level, const ChunkRange& chunk, const int k,
                                       const int runs, const F& f) {
  for (int i = chunk.begin + k; i < chunk.end; i += kStride * runs) {
    int l[kStride];
    for (int j = 0; j < kStride; ++j) l[j] = i + j * runs < chunk.end ? level(i + j * runs) : -1;
    for (int j = 0; j < kStride; ++j)
      if (l[j] >= 0) f(i + j * runs, l[j]);
  }
}

// `work` is kept between calls (one min and max per chunk).
template <class Space>
LevelRange block_levels(const Space& space, const Particles<Space>& p,
                        Kokkos::View<int*, typename Space::memory_space>& work) {
  const int n = p.n, chunks = (n + kBlockChunk - 1) / kBlockChunk;
  ensure_size(work, 2 * chunks, "hayate::gravity::block_level_chunks");
  const auto level = p.level;
  const auto range = work;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  Kokkos::parallel_for(
      "hayate::gravity::block_levels", Policy(space, chunks, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Member& team) {
        const int c = team.league_rank(), runs = team.team_size();
        const ChunkRange chunk(n, c);
        Kokkos::MinMaxScalar<int> r;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, runs),
            [&](const int k, Kokkos::MinMaxScalar<int>& m) {
              for_levels(level, chunk, k, runs, [&](const int, const int l) {
                m.min_val = l < m.min_val ? l : m.min_val;
                m.max_val = l > m.max_val ? l : m.max_val;
              });
            },
            Kokkos::MinMax<int>(r));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          range(2 * c) = r.min_val;
          range(2 * c + 1) = r.max_val;
        });
      });
  Kokkos::MinMaxScalar<int> r;
  Kokkos::parallel_reduce(
      "hayate::gravity::block_level_range", Kokkos::RangePolicy<Space>(space, 0, chunks),
      KOKKOS_LAMBDA(const int c, Kokkos::MinMaxScalar<int>& m) {
        m.min_val = range(2 * c) < m.min_val ? range(2 * c) : m.min_val;
        m.max_val = range(2 * c + 1) > m.max_val ? range(2 * c + 1) : m.max_val;
      },
      Kokkos::MinMax<int>(r));
  return {r.min_val, r.max_val};
}

// Whether particle i's step ends at `tick`: tick is a multiple of its level's step,
// 2^(max_level - level) ticks (a mask, not a 64-bit division per particle).
template <class Space>
struct DueAt {
  Kokkos::View<const int*, typename Space::memory_space> level;
  std::int64_t tick;
  int max_level;
  KOKKOS_INLINE_FUNCTION bool operator()(const int i) const { return of_level(level(i)); }
  // For a level already loaded.
  KOKKOS_INLINE_FUNCTION bool of_level(const int l) const {
    return l >= 0 && (tick & ((std::int64_t(1) << (max_level - l)) - 1)) == 0;
  }
};

// Lists (in index order) the particles whose step ends at `tick`; returns their count. `row`
// gets every particle's position in that list, or -1 (Targets::row): written in the same pass,
// it spares the tree walk a map of its own, set and reset per walk. `work` is kept between
// calls. By chunks: each chunk's count, an exclusive scan of the counts, then each chunk's
// entries. For those the team copies the chunk's levels into scratch (strided, kStride loads
// in flight), each thread numbers one run of consecutive particles from its offset of a single
// team scan, in scratch, and the team stores rows and list in particle order. A team scan over
// the particles takes one scan step per team-size particles, and reading the runs straight from
// global memory touches a line per lane; both measured slower on GPUs.
template <class Space>
int block_select(const Space& space, const Particles<Space>& p, const std::int64_t tick,
                 const int max_level,
                 const Kokkos::View<int*, typename Space::memory_space>& active,
                 const Kokkos::View<int*, typename Space::memory_space>& row,
                 Kokkos::View<int*, typename Space::memory_space>& work) {
  const int n = p.n, chunks = (n + kBlockChunk - 1) / kBlockChunk;
  ensure_size(work, chunks, "hayate::gravity::block_chunks");
  const auto base = work;
  const auto level = p.level;
  const DueAt<Space> due{p.level, tick, max_level};
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  Kokkos::parallel_for(
      "hayate::gravity::block_count", Policy(space, chunks, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Member& team) {
        const int c = team.league_rank(), runs = team.team_size();
        const ChunkRange chunk(n, c);
        int count = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, runs),
            [&](const int k, int& sum) {
              for_levels(level, chunk, k, runs,
                         [&](const int, const int l) { sum += due.of_level(l); });
            },
            count);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { base(c) = count; });
      });
  int total = 0;
  Kokkos::parallel_scan(
      "hayate::gravity::block_chunk_offsets", Kokkos::RangePolicy<Space>(space, 0, chunks),
      KOKKOS_LAMBDA(const int c, int& offset, const bool last) {
        const int count = base(c);
        if (last) base(c) = offset;
        offset += count;
      },
      total);
  using Scratch = Kokkos::View<int*, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::parallel_for(
      "hayate::gravity::block_active",
      Policy(space, chunks, Kokkos::AUTO)
          .set_scratch_size(0, Kokkos::PerTeam(2 * Scratch::shmem_size(kBlockChunk))),
      KOKKOS_LAMBDA(const Member& team) {
        const int c = team.league_rank(), runs = team.team_size();
        const ChunkRange chunk(n, c);
        const int length = chunk.end - chunk.begin;
        const Scratch local(team.team_scratch(0), kBlockChunk);
        const Scratch local_row(team.team_scratch(0), kBlockChunk);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, runs), [&](const int k) {
          for_levels(level, chunk, k, runs,
                     [&](const int i, const int l) { local(i - chunk.begin) = l; });
        });
        team.team_barrier();
        const int first = base(c), run = (length + runs - 1) / runs;
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, runs),
                              [&](const int k, int& offset, const bool last) {
                                const int b = k * run < length ? k * run : length;
                                const int e = b + run < length ? b + run : length;
                                if (last) {
                                  int at = first + offset;
                                  for (int i = b; i < e; ++i)
                                    local_row(i) = due.of_level(local(i)) ? at++ : -1;
                                }
                                for (int i = b; i < e; ++i) offset += due.of_level(local(i));
                              });
        team.team_barrier();
        // The rows leave scratch in particle order, so a warp's stores are consecutive: stored
        // by each thread along its own run they touch a line per thread.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, length), [&](const int i) {
          const int r = local_row(i);
          row(chunk.begin + i) = r;
          if (r >= 0) active(r) = chunk.begin + i;
        });
      });
  return total;
}

// Closing half kick of the active particles with their new accelerations (compact rows of
// new_acc); unless the cycle ends, a new level and the opening half kick of the next step.
template <class Space>
void block_kick(const Space& space, const Particles<Space>& p,
                const Kokkos::View<int*, typename Space::memory_space>& active, const int count,
                const typename Particles<Space>::Vec& new_acc, const std::int64_t tick,
                const double dt_max, const double eta, const double eps, const int max_level) {
  const auto v = p.v, a = p.acc;
  const auto level = p.level;
  const std::int64_t ticks = std::int64_t(1) << max_level;
  Kokkos::parallel_for(
      "hayate::gravity::block_kick", Kokkos::RangePolicy<Space>(space, 0, count),
      KOKKOS_LAMBDA(const int k) {
        // Every load before any store: the views may alias as far as the compiler knows, so a
        // store between loads would order them one after the other (half the bandwidth).
        const int i = active(k);
        const int old_level = level(i);
        double acc[3], vel[3];
        for (int c = 0; c < 3; ++c) {
          acc[c] = new_acc(k, c);
          vel[c] = v(i, c);
        }
        const double h_old = dt_max / double(std::int64_t(1) << old_level);
        for (int c = 0; c < 3; ++c) vel[c] += 0.5 * h_old * acc[c];
        if (tick < ticks) {
          const int want = step_level(acc[0], acc[1], acc[2], dt_max, eta, eps, max_level);
          const int lv = aligned_level(want, tick, max_level);
          level(i) = lv;
          const double h = dt_max / double(std::int64_t(1) << lv);
          for (int c = 0; c < 3; ++c) vel[c] += 0.5 * h * acc[c];
        }
        for (int c = 0; c < 3; ++c) {
          a(i, c) = acc[c];
          v(i, c) = vel[c];
        }
      });
}

// The kernels above are compiled once, in gravity_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_GRAVITY_INTEGRATOR_KERNELS(EXTERN, S)                                               \
  EXTERN template void advance_by<S>(const S&, const char*, const Particles<S>&,                   \
                                     const Particles<S>::Vec&, const Particles<S>::Vec&, double);  \
  EXTERN template void hermite_predict<S>(const S&, const Particles<S>&, const Particles<S>::Vec&, \
                                          const Particles<S>::Vec&, double);                       \
  EXTERN template void hermite_correct<S>(const S&, const Particles<S>&, const Particles<S>::Vec&, \
                                          const Particles<S>::Vec&, const Particles<S>::Vec&,      \
                                          const Particles<S>::Vec&, double);                       \
  EXTERN template void block_open<S>(const S&, const Particles<S>&, double, double, double, int);  \
  EXTERN template LevelRange block_levels<S>(const S&, const Particles<S>&,                        \
                                             Kokkos::View<int*, S::memory_space>&);                \
  EXTERN template int block_select<S>(const S&, const Particles<S>&, std::int64_t, int,            \
                                      const Kokkos::View<int*, S::memory_space>&,                  \
                                      const Kokkos::View<int*, S::memory_space>&,                  \
                                      Kokkos::View<int*, S::memory_space>&);                       \
  EXTERN template void block_kick<S>(                                                              \
      const S&, const Particles<S>&, const Kokkos::View<int*, S::memory_space>&, int,              \
      const Particles<S>::Vec&, std::int64_t, double, double, double, int);
#ifndef HAYATE_GRAVITY_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_GRAVITY_INTEGRATOR_KERNELS, extern)
#endif

}  // namespace hayate::gravity
