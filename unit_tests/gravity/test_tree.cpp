// Tree structure invariants and tree forces against direct summation.
#include "gravity/force_error.hpp"
#include "gravity/initial_conditions.hpp"
#include "gravity/tree_solver.hpp"
#include "test_spaces.hpp"

#include <cmath>
#include <vector>

namespace {

using namespace hayate::gravity;

template <class Space>
Particles<Space> to_device(const HostParticles& hp) {
  Particles<Space> p(hp.size());
  auto x = Kokkos::create_mirror_view(p.x);
  auto v = Kokkos::create_mirror_view(p.v);
  auto m = Kokkos::create_mirror_view(p.m);
  for (int i = 0; i < hp.size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      x(i, c) = hp.x[3 * i + c];
      v(i, c) = hp.v[3 * i + c];
    }
    m(i) = hp.m[i];
  }
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.v, v);
  Kokkos::deep_copy(p.m, m);
  return p;
}

template <class Space>
class GravityTree : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(GravityTree);

TYPED_TEST(GravityTree, StructureCoversParticlesAndMomentsAreExact) {
  using Space = TypeParam;
  // A concentrated model plus a duplicated particle: deep levels and a leaf that cannot split.
  HostParticles hp = hernquist(3000, 1.0, 0.1, 100.0, 1.0, 21);
  for (int c = 0; c < 3; ++c) hp.x[3 * 7 + c] = hp.x[3 * 8 + c];
  auto p = to_device<Space>(hp);
  Tree<Space> tree;
  tree.leaf_size = 8;
  hayate::core::Timers timers;
  tree.build(p.x, p.n, timers);
  tree.moments(p.x, p.m);
  const int nn = tree.n_nodes();
  auto order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.order());
  auto begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.begin());
  auto end = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.end());
  auto skip = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.skip());
  auto mono = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.mono());
  auto size = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.size());
  // The order is a permutation.
  std::vector<int> seen(p.n, 0);
  for (int k = 0; k < p.n; ++k) ++seen[order(k)];
  for (int i = 0; i < p.n; ++i) ASSERT_EQ(seen[i], 1);
  ASSERT_EQ(begin(0), 0);
  ASSERT_EQ(end(0), p.n);
  EXPECT_GT(tree.levels(), 5);
  for (int k = 0; k < nn; ++k) {
    ASSERT_LT(begin(k), end(k));
    if (skip(k) == k + 1) continue;  // leaf
    // Children (k + 1, then along skip links) partition the parent's range.
    int at = begin(k), ch = k + 1;
    for (; ch < skip(k); ch = skip(ch)) {
      ASSERT_EQ(begin(ch), at) << "node " << k;
      at = end(ch);
    }
    ASSERT_EQ(at, end(k));
    ASSERT_EQ(ch, skip(k));
  }
  // Every particle's distance from its leaf's centre of mass is within b_J, and the root's
  // moments are the totals.
  double mt = 0, com[3] = {0, 0, 0};
  for (int i = 0; i < p.n; ++i) {
    mt += hp.m[i];
    for (int c = 0; c < 3; ++c) com[c] += hp.m[i] * hp.x[3 * i + c];
  }
  EXPECT_NEAR(mono(0, 3), mt, 1e-12);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(mono(0, c), com[c] / mt, 1e-12);
  for (int k = 0; k < nn; ++k) {
    for (int s = begin(k); s < end(k); ++s) {
      const int i = order(s);
      double r2 = 0;
      for (int c = 0; c < 3; ++c) r2 += std::pow(hp.x[3 * i + c] - mono(k, c), 2);
      ASSERT_LE(std::sqrt(r2), size(k, 0) * (1 + 1e-12) + 1e-15) << "node " << k;
    }
  }
}

// Tree accelerations of all particles (the first call with the theta MAC, as a run starts,
// then the acceleration MAC from those accelerations) against double direct summation.
template <class Space>
ForceErrorStats tree_error(const Particles<Space>& p, const TreeParams& params) {
  using V = Kokkos::View<double* [3], typename Space::memory_space>;
  const double eps = 0.01;
  DirectSolver<Space> direct(Precision::Double, {}, 1.0, eps);
  V ref("ref", p.n);
  direct.compute(p.x, p.m, p.n, {{}, p.n}, false, {ref, {}, {}});
  TreeForce<Space> tree(Precision::Double, params, 1.0, eps, direct);
  hayate::core::Timers timers;
  tree.accelerations(p, {{}, p.n}, false, {p.acc, {}, {}}, timers, false);
  V acc("acc", p.n);
  tree.accelerations(p, {{}, p.n}, false, {acc, {}, {}}, timers, false);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), acc);
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ref);
  return force_error_stats(a, r, p.n);
}

TYPED_TEST(GravityTree, AccelerationMacErrorMeetsToleranceAndShrinks) {
  using Space = TypeParam;
  auto p = to_device<Space>(plummer(3000, 1.0, 1.0, 1.0, 33));
  double last = 1;
  for (const int e : {7, 9, 11}) {
    TreeParams params;
    params.dacc = std::ldexp(1.0, -e);
    const ForceErrorStats s = tree_error(p, params);
    if (e == 9) {
      EXPECT_LE(s.p99, 1e-3);
    }
    EXPECT_LT(s.p99, last) << "dacc = 2^-" << e;
    EXPECT_LE(s.p50, s.p90);
    EXPECT_LE(s.p90, s.p99);
    EXPECT_LE(s.p99, s.max);
    last = s.p99;
  }
  // The quadrupole moments are what brings the error under the tolerance.
  TreeParams mono;
  mono.dacc = std::ldexp(1.0, -9);
  mono.quadrupole = false;
  const ForceErrorStats s = tree_error(p, mono);
  EXPECT_GT(s.p99, 1e-3);
  EXPECT_LT(s.p99, 1e-2);
}

TYPED_TEST(GravityTree, ThetaMacErrorShrinksWithTheta) {
  using Space = TypeParam;
  auto p = to_device<Space>(plummer(2000, 1.0, 1.0, 1.0, 34));
  double last = 1;
  for (const double theta : {0.8, 0.5, 0.3}) {
    TreeParams params;
    params.mac = Mac::Theta;
    params.theta = theta;
    const ForceErrorStats s = tree_error(p, params);
    EXPECT_LT(s.p99, last) << "theta " << theta;
    EXPECT_LT(s.p99, 0.05);
    last = s.p99;
  }
}

TYPED_TEST(GravityTree, SubsetOfTargetsMatchesTheFullWalk) {
  using Space = TypeParam;
  using V = Kokkos::View<double* [3], typename Space::memory_space>;
  auto p = to_device<Space>(plummer(700, 1.0, 1.0, 1.0, 35));
  DirectSolver<Space> direct(Precision::Mixed, {}, 1.0, 0.02);
  TreeForce<Space> tree(Precision::Mixed, TreeParams{}, 1.0, 0.02, direct);
  hayate::core::Timers timers;
  tree.accelerations(p, {{}, p.n}, false, {p.acc, {}, {}}, timers, false);
  V all("all", p.n);
  tree.accelerations(p, {{}, p.n}, false, {all, {}, {}}, timers, true);
  std::vector<int> idx;
  for (int i = 5; i < p.n; i += 7) idx.push_back(i);
  Kokkos::View<int*, typename Space::memory_space> index("index", idx.size());
  auto h = Kokkos::create_mirror_view(index);
  for (std::size_t k = 0; k < idx.size(); ++k) h(k) = idx[k];
  Kokkos::deep_copy(index, h);
  V sub("sub", idx.size());
  tree.accelerations(p, {index, int(idx.size())}, false, {sub, {}, {}}, timers, true);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), all);
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sub);
  for (std::size_t k = 0; k < idx.size(); ++k)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(s(k, c), a(idx[k], c)) << k;
}

TEST(GravityTreeKeys, MortonInterleavesBits) {
  EXPECT_EQ(morton_key(1, 0, 0), 1u);
  EXPECT_EQ(morton_key(0, 1, 0), 2u);
  EXPECT_EQ(morton_key(0, 0, 1), 4u);
  EXPECT_EQ(morton_key(3, 0, 0), 9u);
  EXPECT_EQ(morton_key(0x1fffff, 0x1fffff, 0x1fffff), (std::uint64_t(1) << 63) - 1);
}

}  // namespace
