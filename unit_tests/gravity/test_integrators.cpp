// Block-step passes: the chunked list of due particles and the level range against serial
// references.
#include "gravity/integrators.hpp"
#include "test_spaces.hpp"
#include "util/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using namespace hayate::gravity;

template <class Space>
class GravityIntegrators : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(GravityIntegrators);

// Every tick of a cycle, for sizes below, at and across the chunk size, with levels drawn so
// that some chunks hold no due particle and some only due ones: the list is the due particles
// in index order and the count is theirs, and `row` is the list's inverse (-1 for particles
// not due).
TYPED_TEST(GravityIntegrators, BlockSelectListsTheDueParticlesInOrder) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const int max_level = 5;
  Kokkos::View<int*, Mem> work;  // reused across sizes, as a run reuses it across ticks
  for (const int n : {1, 77, 4096, 4097, 3 * 4096 + 5, 20000}) {
    Particles<Space> p(Space(), n);
    auto level = Kokkos::create_mirror_view(p.level);
    for (int i = 0; i < n; ++i) {
      // Runs of one level over whole chunks (4096..8191 all at the finest level) and mixed
      // levels elsewhere.
      level(i) = (i / 4096) % 2 == 1
                     ? max_level
                     : int(hayate::util::uniform01(1000 + n, 0, i) * (max_level + 1));
      if (level(i) > max_level) level(i) = max_level;
    }
    Kokkos::deep_copy(p.level, level);
    Kokkos::View<int*, Mem> active("active", n), row("row", n);
    Kokkos::deep_copy(row, 12345);  // every entry must be written
    for (std::int64_t tick = 1; tick <= (std::int64_t(1) << max_level); ++tick) {
      std::vector<int> expect;
      for (int i = 0; i < n; ++i)
        if (tick % (std::int64_t(1) << (max_level - level(i))) == 0) expect.push_back(i);
      const int count = block_select(Space(), p, tick, max_level, active, row, work);
      ASSERT_EQ(count, int(expect.size())) << "n " << n << " tick " << tick;
      auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), active);
      for (int k = 0; k < count; ++k)
        ASSERT_EQ(got(k), expect[k]) << "n " << n << " tick " << tick << " entry " << k;
      auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row);
      std::vector<int> expect_row(n, -1);
      for (int k = 0; k < count; ++k) expect_row[expect[k]] = k;
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(rows(i), expect_row[i]) << "n " << n << " tick " << tick << " particle " << i;
    }
  }
}

// The coarsest and finest levels in use, for sizes below, at and across the chunk size, with
// the extremes placed at the first particle, the last one, and inside a later chunk.
TYPED_TEST(GravityIntegrators, BlockLevelsFindTheCoarsestAndFinest) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  Kokkos::View<int*, Mem> work;
  for (const int n : {1, 77, 4096, 4097, 3 * 4096 + 5, 20000}) {
    for (int where = 0; where < 3; ++where) {
      Particles<Space> p(Space(), n);
      auto level = Kokkos::create_mirror_view(p.level);
      for (int i = 0; i < n; ++i)
        level(i) = 3 + int(hayate::util::uniform01(7 + n, where, i) * 5);  // 3..7
      const int lo = where == 0 ? 0 : where == 1 ? n - 1 : (n * 2) / 3;
      const int hi = where == 0 ? n - 1 : where == 1 ? 0 : n / 3;
      level(hi) = 11;
      level(lo) = 1;  // wins where lo == hi (n = 1)
      Kokkos::deep_copy(p.level, level);
      const LevelRange r = block_levels(Space(), p, work);
      int expect_lo = level(0), expect_hi = level(0);
      for (int i = 0; i < n; ++i) {
        expect_lo = std::min(expect_lo, level(i));
        expect_hi = std::max(expect_hi, level(i));
      }
      EXPECT_EQ(r.coarsest, expect_lo) << "n " << n << " case " << where;
      EXPECT_EQ(r.finest, expect_hi) << "n " << n << " case " << where;
      if (n > 1) {
        EXPECT_EQ(r.coarsest, 1) << "n " << n << " case " << where;
        EXPECT_EQ(r.finest, 11) << "n " << n << " case " << where;
      }
    }
  }
}
