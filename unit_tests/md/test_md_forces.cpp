// Neighbor lists against a brute-force search, and every force variant against a serial
// double-precision O(N^2) reference, on every enabled backend.
#include "launch_log.hpp"
#include "md_test_util.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

namespace hayate::md::test {
namespace {

template <class Space>
class MdForces : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(MdForces);

// Pairs within the per-type neighbor cutoff, by brute force over all pairs.
std::vector<std::set<int>> brute_force_list(const std::vector<double>& x,
                                            const std::vector<int>& type, const TypeSet& t,
                                            const double box[3], double skin, bool half) {
  const int n = static_cast<int>(type.size());
  std::vector<std::set<int>> out(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j || (half && j < i)) continue;
      double r2 = 0;
      for (int k = 0; k < 3; ++k) {
        const double d = image(x[3 * i + k] - x[3 * j + k], box[k]);
        r2 += d * d;
      }
      const double c = t.cut(type[i], type[j]) + skin;
      if (r2 < c * c) out[i].insert(j);
    }
  return out;
}

TYPED_TEST(MdForces, NeighborListEqualsBruteForce) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const double skin = 0.3;
  // 4 cells: a box of 2 neighbor cells per side (each cell visited once, minimum image per
  // pair); 5: the full stencil fits. One type or two; atoms in cell order (the search merges
  // the cells of a stencil row) or reversed (it must not).
  for (const int cells : {4, 5})
    for (const bool two : {true, false})
      for (const bool reversed : {false, true}) {
        SCOPED_TRACE(std::to_string(cells) + " cells, " + (two ? "two types" : "one type") +
                     (reversed ? ", reversed order" : ", cell order"));
        InitialState init = rattled_lattice(cells, 0.8442, 0.25, two);
        MdParams params;
        params.skin = skin;
        MdSystem<Space, double, LjCut> sys(init, params);
        sys.rebuild();  // wraps and cell-sorts
        const int n = sys.size();
        // Reordered on the host (nvcc rejects device lambdas in gtest's private TestBody).
        std::vector<double> x0;
        std::vector<int> t0;
        download(sys, x0, t0);
        VecView<double, Mem> pos("pos", n);
        Kokkos::View<int*, Mem> types("types", n);
        auto hx = Kokkos::create_mirror_view(pos);
        auto ht = Kokkos::create_mirror_view(types);
        std::vector<double> x(3 * n);
        std::vector<int> type(n);
        for (int i = 0; i < n; ++i) {
          const int from = reversed ? n - 1 - i : i;
          for (int d = 0; d < 3; ++d) x[3 * i + d] = hx(i, d) = x0[3 * from + d];
          type[i] = ht(i) = t0[from];
        }
        Kokkos::deep_copy(pos, hx);
        Kokkos::deep_copy(types, ht);
        const double box[3] = {sys.box().length[0], sys.box().length[1], sys.box().length[2]};
        const auto cutoffs =
            NeighborCutoffs<double, Mem>::make(init.types.cutoff, init.types.size(), skin);
        CellBins<Space> bins;
        bins.bin(Space(), ConstVecView<double, Mem>(pos), sys.box(),
                 init.types.max_cutoff() + skin);
        EXPECT_EQ(bins.ascending, !reversed);
        for (const auto kind : {ListKind::Full, ListKind::Half}) {
          const auto expected =
              brute_force_list(x, type, init.types, box, skin, kind == ListKind::Half);
          for (const auto layout : {Layout::Csr, Layout::Padded, Layout::Transposed})
            for (const bool ghosts : {false, true}) {
              NeighborList<Space> list;
              list.kind = kind;
              list.layout = layout;
              list.use_ghosts = ghosts;
              list.capacity = 3;  // far too small: the build must grow and retry, never truncate
              list.build(Space(), ConstVecView<double, Mem>(pos),
                         Kokkos::View<const int*, Mem>(types), bins, sys.box(), cutoffs,
                         init.types.max_cutoff() + skin);
              if (layout != Layout::Csr) EXPECT_GE(list.retries, 1);
              const auto got = list.to_host();
              std::size_t total = 0;
              for (int i = 0; i < n; ++i) {
                const std::set<int> s(got[i].begin(), got[i].end());
                ASSERT_EQ(s.size(), got[i].size()) << "duplicate neighbor of atom " << i;
                ASSERT_EQ(s, expected[i]) << "atom " << i << " layout " << layout_name(layout);
                total += s.size();
              }
              EXPECT_EQ(std::int64_t(total), list.total);
              EXPECT_GT(total, std::size_t(0));
              if (!ghosts) continue;
              // Every image entry is the copy of its atom within the cutoff of i.
              auto owner =
                  Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.ghosts.owner);
              auto code =
                  Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.ghosts.code);
              const auto entries = list.entries_to_host();
              int images = 0;
              for (int i = 0; i < n; ++i)
                for (const int e : entries[i]) {
                  if (e < n) continue;
                  const int g = e - n;
                  ++images;
                  double r2 = 0;
                  for (int d = 0; d < 3; ++d) {
                    const double dx =
                        x[3 * i + d] - x[3 * owner(g) + d] - image_shift(code(g), d) * box[d];
                    r2 += dx * dx;
                  }
                  const double c = init.types.max_cutoff() + skin;
                  ASSERT_LT(r2, c * c) << "atom " << i << " image entry " << e;
                }
              EXPECT_GT(images, 0);
            }
        }
      }
}

template <class Space, class Real, class Style = LjCut>
void check_variants(double force_tolerance, double energy_tolerance, bool shift, bool two = true,
                    const TypeSet* types = nullptr, int cells = 5) {
  InitialState init = rattled_lattice(cells, 0.8442, 0.2, two, 1.0, types);
  init.types.shift = shift;
  MdParams params;
  MdSystem<Space, Real, Style> sys(init, params);
  sys.initialize();
  std::vector<double> x;
  std::vector<int> type;
  download(sys, x, type);
  const double box[3] = {sys.box().length[0], sys.box().length[1], sys.box().length[2]};
  const Reference ref = reference_forces(x, type, init.types, box);
  const auto variants = all_variants<Space>();
  ASSERT_GE(variants.size(), 9u);
  for (const auto& [options, layout] : variants) {
    SCOPED_TRACE(variant_name(options) + "/" + layout_name(layout));
    sys.set_force_options(options, layout);
    sys.compute_forces(true);
    const auto f = download_forces(sys);
    EXPECT_LE(max_relative(f, ref.f), force_tolerance);
    EXPECT_NEAR(sys.energy_virial().energy, ref.energy, energy_tolerance * std::fabs(ref.energy));
    EXPECT_NEAR(sys.energy_virial().virial, ref.virial, energy_tolerance * std::fabs(ref.virial));
    // Newton's third law: the total force vanishes.
    double total[3] = {0, 0, 0}, fmax = 0;
    for (int i = 0; i < sys.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        total[d] += f[3 * i + d];
        fmax = std::max(fmax, std::fabs(f[3 * i + d]));
      }
    for (int d = 0; d < 3; ++d) EXPECT_LE(std::fabs(total[d]), force_tolerance * fmax * sys.size());
    // Without the energy request the forces are the same.
    sys.compute_forces(false);
    EXPECT_LE(max_relative(download_forces(sys), ref.f), force_tolerance);
  }
}

// A rank's share on several ranks (md/domain.hpp): its sub-box's atoms, then ghosts (the
// other atoms, shifted across the periodic boundary where they cross it, within the reach of
// the sub-box), listed in the rank's neighbor box (origin, no images along the cut axis). The
// owned atoms' lists must hold exactly their neighbors in the whole periodic box.
// Full lists: a sub-box's atoms with their ghosts list exactly the neighbors those atoms have in
// the whole periodic box. Half lists (ghosts decided by global id): the two sub-boxes together
// list every pair of the box exactly once.
TYPED_TEST(MdForces, SubBoxWithGhostsListsEveryNeighborOfItsAtoms) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const double skin = 0.3;
  const InitialState init = rattled_lattice(6, 0.8442, 0.25, true);
  const double reach = init.types.max_cutoff() + skin;
  const double box[3] = {init.box[0], init.box[1], init.box[2]};
  const auto cutoffs =
      NeighborCutoffs<double, Mem>::make(init.types.cutoff, init.types.size(), skin);
  const int n = int(init.size());
  std::vector<double> wrapped(init.x);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      wrapped[3 * i + d] -= box[d] * std::floor(wrapped[3 * i + d] / box[d]);
  const auto expected = brute_force_list(wrapped, init.type, init.types, box, skin, false);
  const auto expected_half = brute_force_list(wrapped, init.type, init.types, box, skin, true);
  for (const int axis : {0, 2}) {
    // Pairs (lower, higher atom) the half lists hold, summed over both sub-boxes, per variant.
    std::map<std::string, std::map<std::pair<int, int>, int>> half_pairs;
    for (const int me : {0, 1}) {
      SCOPED_TRACE("cut along axis " + std::to_string(axis) + ", sub-box " + std::to_string(me));
      BrickGrid grid;
      grid.p[axis] = 2;
      grid.me[axis] = me;
      for (int d = 0; d < 3; ++d) grid.length[d] = box[d];
      const Domain<Space, double> domain(grid, reach, Space());
      const NeighborBox<double> nbox = domain.neighbor_box();
      // Owned atoms, then ghosts with the shift their crossing gives (global index kept).
      std::vector<int> source;
      std::vector<double> x;
      const double lo = grid.lo(axis), hi = grid.hi(axis), margin = reach * (1 + 1e-5);
      for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < n; ++j)
          for (const int shift : {-1, 0, 1}) {
            const double p = wrapped[3 * j + axis] + shift * box[axis];
            const bool owned = shift == 0 && p >= lo && p < hi;
            const bool ghost = !owned && p >= lo - margin && p < hi + margin;
            if (pass == 0 ? !owned : !ghost) continue;
            source.push_back(j);
            for (int d = 0; d < 3; ++d) x.push_back(d == axis ? p : wrapped[3 * j + d]);
          }
      int owned = 0;
      for (int j = 0; j < n; ++j) {
        const double p = wrapped[3 * j + axis];
        owned += p >= lo && p < hi ? 1 : 0;
      }
      const int total = int(source.size());
      ASSERT_GT(total, owned);
      VecView<double, Mem> pos("pos", total);
      Kokkos::View<int*, Mem> types("types", total);
      auto hx = Kokkos::create_mirror_view(pos);
      auto ht = Kokkos::create_mirror_view(types);
      for (int k = 0; k < total; ++k) {
        for (int d = 0; d < 3; ++d) hx(k, d) = x[3 * k + d];
        ht(k) = init.type[source[k]];
      }
      Kokkos::deep_copy(pos, hx);
      Kokkos::deep_copy(types, ht);
      Kokkos::View<std::int64_t*, Mem> ids("ids", total);
      auto hid = Kokkos::create_mirror_view(ids);
      for (int k = 0; k < total; ++k) hid(k) = source[k];
      Kokkos::deep_copy(ids, hid);
      CellBins<Space> bins;
      for (int d = 0; d < 3; ++d) bins.origin[d] = nbox.origin[d];
      bins.bin(Space(), ConstVecView<double, Mem>(pos), nbox.box, reach);
      for (const bool images : {false, true})
        for (const auto layout : {Layout::Csr, Layout::Transposed})
          for (const auto kind : {ListKind::Full, ListKind::Half}) {
            const std::string variant = std::string(images ? "images, " : "no images, ") +
                                        layout_name(layout) +
                                        (kind == ListKind::Half ? ", half" : ", full");
            NeighborList<Space> list;
            list.layout = layout;
            list.kind = kind;
            list.use_ghosts = images;
            list.ids = ids;
            for (int d = 0; d < 3; ++d) list.ghosts.images[d] = nbox.images[d];
            list.build(Space(), ConstVecView<double, Mem>(pos),
                       Kokkos::View<const int*, Mem>(types), bins, nbox.box, cutoffs, reach, owned);
            const auto got = list.to_host();
            ASSERT_EQ(int(got.size()), owned);
            for (int i = 0; i < owned; ++i) {
              std::set<int> neighbors;
              for (const int k : got[i]) neighbors.insert(source[k]);
              ASSERT_EQ(neighbors.size(), got[i].size())
                  << "an atom listed twice for " << source[i] << ", " << variant;
              if (kind == ListKind::Full) {
                ASSERT_EQ(neighbors, expected[source[i]])
                    << "atom " << source[i] << ", " << variant;
                continue;
              }
              for (const int j : neighbors)
                ++half_pairs[variant][{std::min(source[i], j), std::max(source[i], j)}];
            }
          }
    }
    ASSERT_EQ(half_pairs.size(), 4u);  // with and without images, two layouts
    for (const auto& [variant, pairs] : half_pairs) {
      SCOPED_TRACE("cut along axis " + std::to_string(axis) + ", " + variant);
      std::map<std::pair<int, int>, int> want;
      for (int i = 0; i < n; ++i)
        for (const int j : expected_half[i]) want[{i, j}] = 1;
      EXPECT_EQ(pairs.size(), want.size());
      EXPECT_TRUE(pairs == want) << "a pair listed twice, by neither sub-box, or not a pair";
    }
  }
}

// A rank computes its interior atoms' forces before the ghosts' positions arrive: the border
// test must leave no ghost in an interior atom's list row, and the reorder must put the interior
// atoms first, each part in the order it had.
TYPED_TEST(MdForces, InteriorAtomsComeFirstAndListNoGhost) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const double skin = 0.3;
  const InitialState init = rattled_lattice(8, 0.8442, 0.25, true);  // sub-boxes 6.7 wide
  const double reach = init.types.max_cutoff() + skin;
  const double box[3] = {init.box[0], init.box[1], init.box[2]};
  const auto cutoffs =
      NeighborCutoffs<double, Mem>::make(init.types.cutoff, init.types.size(), skin);
  const int n = int(init.size());
  for (const int me : {0, 1}) {
    SCOPED_TRACE("sub-box " + std::to_string(me));
    BrickGrid grid;
    grid.p[2] = 2;
    grid.me[2] = me;
    for (int d = 0; d < 3; ++d) grid.length[d] = box[d];
    const Domain<Space, double> domain(grid, reach, Space());
    const NeighborBox<double> nbox = domain.neighbor_box();
    const double lo = grid.lo(2), hi = grid.hi(2), margin = reach * (1 + 1e-5);
    // Owned atoms (wrapped, in input order), then every ghost within the margin.
    std::vector<double> x;
    std::vector<int> type;
    std::vector<bool> interior;
    for (int pass = 0; pass < 2; ++pass)
      for (int j = 0; j < n; ++j)
        for (const int shift : {-1, 0, 1}) {
          double p[3];
          for (int d = 0; d < 3; ++d)
            p[d] = init.x[3 * j + d] - box[d] * std::floor(init.x[3 * j + d] / box[d]);
          p[2] += shift * box[2];
          const bool owned = shift == 0 && p[2] >= lo && p[2] < hi;
          const bool ghost = !owned && p[2] >= lo - margin && p[2] < hi + margin;
          if (pass == 0 ? !owned : !ghost) continue;
          x.insert(x.end(), p, p + 3);
          type.push_back(init.type[j]);
          if (owned) interior.push_back(p[2] >= lo + margin && p[2] < hi - margin);
        }
    const int owned = int(interior.size()), total = int(type.size());
    const int inner = int(std::count(interior.begin(), interior.end(), true));
    ASSERT_GT(inner, 0);
    ASSERT_LT(inner, owned);
    VecView<double, Mem> pos("pos", total);
    Kokkos::View<int*, Mem> types("types", total), identity("identity", owned);
    auto hx = Kokkos::create_mirror_view(pos);
    auto ht = Kokkos::create_mirror_view(types);
    auto hp = Kokkos::create_mirror_view(identity);
    for (int k = 0; k < total; ++k) {
      for (int d = 0; d < 3; ++d) hx(k, d) = x[3 * std::size_t(k) + std::size_t(d)];
      ht(k) = type[std::size_t(k)];
    }
    for (int k = 0; k < owned; ++k) hp(k) = k;
    Kokkos::deep_copy(pos, hx);
    Kokkos::deep_copy(types, ht);
    Kokkos::deep_copy(identity, hp);
    // In input order the first border atom is the first that is not interior.
    const int first = int(std::find(interior.begin(), interior.end(), false) - interior.begin());
    EXPECT_EQ(domain.first_border(pos, owned), first);
    // The reorder: interior atoms in their order, then the border atoms in theirs.
    const auto order = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), domain.interior_first(identity, pos, owned));
    std::vector<int> want;
    for (const bool inside : {true, false})
      for (int i = 0; i < owned; ++i)
        if (interior[std::size_t(i)] == inside) want.push_back(i);
    ASSERT_EQ(int(order.extent(0)), owned);
    for (int k = 0; k < owned; ++k) ASSERT_EQ(order(k), want[std::size_t(k)]) << "row " << k;
    // Reordered so, the border starts after the interior atoms.
    VecView<double, Mem> sorted("sorted", owned);
    auto hs = Kokkos::create_mirror_view(sorted);
    for (int k = 0; k < owned; ++k)
      for (int d = 0; d < 3; ++d) hs(k, d) = hx(order(k), d);
    Kokkos::deep_copy(sorted, hs);
    EXPECT_EQ(domain.first_border(sorted, owned), inner);
    EXPECT_EQ(domain.first_border(sorted, inner), inner);  // no border atom: all of them
    // No interior atom's full list row holds a ghost (rows >= owned), while border atoms' do.
    CellBins<Space> bins;
    for (int d = 0; d < 3; ++d) bins.origin[d] = nbox.origin[d];
    bins.bin(Space(), ConstVecView<double, Mem>(pos), nbox.box, reach);
    for (const bool images : {false, true}) {
      NeighborList<Space> list;
      list.kind = ListKind::Full;
      list.use_ghosts = images;
      for (int d = 0; d < 3; ++d) list.ghosts.images[d] = nbox.images[d];
      list.build(Space(), ConstVecView<double, Mem>(pos), Kokkos::View<const int*, Mem>(types),
                 bins, nbox.box, cutoffs, reach, owned);
      const auto rows = list.to_host();
      int border_with_ghosts = 0;
      for (int i = 0; i < owned; ++i) {
        const bool ghost = std::any_of(rows[std::size_t(i)].begin(), rows[std::size_t(i)].end(),
                                       [&](int k) { return k >= owned; });
        if (interior[std::size_t(i)])
          ASSERT_FALSE(ghost) << "interior atom " << i << " lists a ghost";
        else
          border_with_ghosts += ghost ? 1 : 0;
      }
      EXPECT_GT(border_with_ghosts, 0);
    }
  }
}

TEST(MdDomain, ChoosesTheGridOfLeastSurfaceThatKeepsSubBoxesAsWideAsTheReach) {
  const double cube[3] = {20, 20, 20}, flat[3] = {20, 20, 10};
  auto grid = [](int ranks, const double* box, double reach) {
    const BrickGrid g = BrickGrid::choose(ranks, ranks - 1, box, reach);
    return std::to_string(g.p[0]) + "x" + std::to_string(g.p[1]) + "x" + std::to_string(g.p[2]);
  };
  EXPECT_EQ(grid(2, cube, 2.8), "1x1x2");
  EXPECT_EQ(grid(4, cube, 2.8), "1x2x2");
  EXPECT_EQ(grid(8, cube, 2.8), "2x2x2");
  EXPECT_EQ(grid(4, flat, 2.8), "2x2x1");
  // Ties (12 ranks of a cube: 2, 2 and 3 along any axes) go to any of them.
  const std::string twelve = grid(12, cube, 2.8);
  EXPECT_TRUE(twelve == "2x2x3" || twelve == "2x3x2" || twelve == "3x2x2") << twelve;
  // Sub-boxes at least the reach wide: 8 ranks of a 10-wide cube at reach 6 cannot split.
  const double small[3] = {10, 10, 10};
  EXPECT_EQ(grid(8, small, 6.0), "0x1x1");
  EXPECT_EQ(grid(2, small, 5.0), "1x1x2");
  // The last rank sits at the far corner of the grid.
  const BrickGrid g = BrickGrid::choose(8, 7, cube, 2.8);
  EXPECT_EQ(g.me[0] + g.me[1] + g.me[2], 3);
  EXPECT_DOUBLE_EQ(g.lo(0), 10.0);
  EXPECT_DOUBLE_EQ(g.hi(2), 20.0);
}

TYPED_TEST(MdForces, EveryVariantMatchesSerialReferenceDouble) {
  check_variants<TypeParam, double>(1e-12, 1e-12, false);
}

TYPED_TEST(MdForces, EveryVariantMatchesSerialReferenceShifted) {
  check_variants<TypeParam, double>(1e-12, 1e-12, true);
}

// One type takes the kernels' register-held coefficients instead of the type table.
TYPED_TEST(MdForces, EveryVariantMatchesSerialReferenceOneType) {
  check_variants<TypeParam, double>(1e-12, 1e-12, true, false);
}

TYPED_TEST(MdForces, EveryVariantMatchesSerialReferenceFloat) {
  check_variants<TypeParam, float>(2e-5, 2e-5, false);
}

TYPED_TEST(MdForces, MorseEveryVariantMatchesSerialReference) {
  const TypeSet one = morse_types(false), two = morse_types(true);
  check_variants<TypeParam, double, Morse>(1e-12, 1e-12, false, false, &one);
  check_variants<TypeParam, double, Morse>(1e-12, 1e-12, true, true, &two);
  check_variants<TypeParam, float, Morse>(2e-5, 2e-5, false, true, &two);
}

// Many types (beyond the few a by-value table held): every pair's coefficients from the table.
TYPED_TEST(MdForces, TwentyTypesMatchSerialReference) {
  const TypeSet types = many_types(20);
  check_variants<TypeParam, double>(1e-12, 1e-12, true, true, &types, 6);
}

// A pair table built from the lj/cut coefficients gives the shifted energy at the cutoff as
// zero, and Morse has its minimum -D0 at r0 with no force there.
TEST(MdPairStyles, EnergiesAtTheCutoffAndMinimum) {
  TypeSet lj = TypeSet::single(2.5);
  lj.shift = true;
  const auto c = LjCut::coeff<double>(lj.pair(0, 0));
  const double offset = LjCut::compute(2.5 * 2.5, c).energy;
  EXPECT_NEAR(offset, 4.0 * (std::pow(2.5, -12) - std::pow(2.5, -6)), 1e-15);
  const TypeSet m = morse_types(false);
  const auto mc = Morse::coeff<double>(m.pair(0, 0));
  const PairForce<double> at_r0 = Morse::compute(1.1 * 1.1, mc);
  EXPECT_NEAR(at_r0.energy, -1.0, 1e-15);
  EXPECT_NEAR(at_r0.fpair, 0.0, 1e-15);
}

// Force and energy run on the instance the system was given.
TYPED_TEST(MdForces, RunsOnTheGivenInstance) {
  using Space = TypeParam;
  compat::IndependentInstance<Space> instance;
  const InitialState init = rattled_lattice(4, 0.8442, 0.1, true);
  for (const auto& [options, layout] : all_variants<Space>()) {
    if (options.positions == Positions::Split || layout != Layout::Padded) continue;
    SCOPED_TRACE(variant_name(options));
    MdParams params;
    params.force = options;
    params.layout = layout;
    hayate::test::KernelLaunchLog log;
    MdSystem<Space, double, LjCut> sys(init, params, instance.space());
    sys.initialize();
    for (int s = 1; s <= 3; ++s) sys.advance(true);
    sys.rebuild();
    EXPECT_GT(sys.thermo().temp, 0);
    EXPECT_FALSE(log.hayate_kernels().empty());
    const auto elsewhere = log.elsewhere(compat::tools_device_id(instance.space()));
    EXPECT_TRUE(elsewhere.empty()) << elsewhere.front();
  }
}

// The list kind of the system follows the options: a half list holds half the pairs.
TYPED_TEST(MdForces, HalfListHoldsHalfThePairs) {
  using Space = TypeParam;
  InitialState init = rattled_lattice(4, 0.8442, 0.1, false);
  MdParams params;
  MdSystem<Space, double, LjCut> sys(init, params);
  sys.initialize();
  sys.set_force_options({ListKind::Full, Scatter::Atomic, Parallel::Thread}, Layout::Csr);
  const std::int64_t full = sys.neighbors().total;
  sys.set_force_options({ListKind::Half, Scatter::Atomic, Parallel::Thread}, Layout::Csr);
  EXPECT_EQ(2 * sys.neighbors().total, full);
}

}  // namespace
}  // namespace hayate::md::test
