// Direct forces against a serial double-precision reference written independently of the
// kernels, for every precision, launch shape (j-split, tiles, teams), target subsets and Hermite.
#include "gravity/direct_solver.hpp"
#include "test_spaces.hpp"
#include "util/random.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using namespace hayate::gravity;

struct HostSet {
  int n = 0;
  std::vector<double> x, v, m;  // x, v: n*3
};

HostSet random_set(int n, std::uint64_t seed) {
  HostSet s;
  s.n = n;
  s.x.resize(3 * n);
  s.v.resize(3 * n);
  s.m.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      s.x[3 * i + c] = 2.0 * hayate::util::uniform01(seed, i, c) - 1.0;
      s.v[3 * i + c] = hayate::util::normal01(seed, i, 10 + c);
    }
    s.m[i] = (0.5 + hayate::util::uniform01(seed, i, 7)) / n;
  }
  return s;
}

// a_i = G sum_j m_j (x_j - x_i) / (r^2 + eps^2)^(3/2); phi_i excludes j = i; jerk analytic.
struct Reference {
  std::vector<double> acc, pot, jerk;
};

Reference reference(const HostSet& s, double G, double eps) {
  Reference r;
  r.acc.assign(3 * s.n, 0.0);
  r.pot.assign(s.n, 0.0);
  r.jerk.assign(3 * s.n, 0.0);
  for (int i = 0; i < s.n; ++i) {
    for (int j = 0; j < s.n; ++j) {
      if (i == j) continue;
      double d[3], dv[3];
      for (int c = 0; c < 3; ++c) {
        d[c] = s.x[3 * j + c] - s.x[3 * i + c];
        dv[c] = s.v[3 * j + c] - s.v[3 * i + c];
      }
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
      const double rr = std::sqrt(r2);
      const double rv = d[0] * dv[0] + d[1] * dv[1] + d[2] * dv[2];
      for (int c = 0; c < 3; ++c) {
        r.acc[3 * i + c] += G * s.m[j] * d[c] / (r2 * rr);
        r.jerk[3 * i + c] += G * s.m[j] * (dv[c] / (r2 * rr) - 3.0 * rv * d[c] / (r2 * r2 * rr));
      }
      r.pot[i] -= G * s.m[j] / rr;
    }
  }
  return r;
}

template <class Space>
struct DeviceSet {
  Particles<Space> p;
  explicit DeviceSet(const HostSet& s) : p(Space(), s.n) {
    auto x = Kokkos::create_mirror_view(p.x);
    auto v = Kokkos::create_mirror_view(p.v);
    auto m = Kokkos::create_mirror_view(p.m);
    for (int i = 0; i < s.n; ++i) {
      for (int c = 0; c < 3; ++c) {
        x(i, c) = s.x[3 * i + c];
        v(i, c) = s.v[3 * i + c];
      }
      m(i) = s.m[i];
    }
    Kokkos::deep_copy(p.x, x);
    Kokkos::deep_copy(p.v, v);
    Kokkos::deep_copy(p.m, m);
  }
};

// Largest |a - a_ref| / |a_ref| over the targets (rows of `acc` are compact).
template <class View>
double max_rel_error(const View& acc_dev, const std::vector<double>& ref,
                     const std::vector<int>& idx) {
  auto acc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), acc_dev);
  double worst = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const int i = idx[k];
    double num = 0, den = 0;
    for (int c = 0; c < 3; ++c) {
      const double d = acc(k, c) - ref[3 * i + c];
      num += d * d;
      den += ref[3 * i + c] * ref[3 * i + c];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
}

double bound(Precision p) {
  switch (p) {
    case Precision::Double:
      return 1e-12;
    case Precision::Mixed:
      return 2e-5;
    case Precision::Float:
      return 1e-4;
  }
  return 0;
}

template <class Space>
class GravityDirect : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(GravityDirect);

TYPED_TEST(GravityDirect, MatchesSerialReferenceForEveryPrecisionAndShape) {
  using Space = TypeParam;
  const int n = 333;  // not a multiple of any tile or team size
  const double G = 1.7, eps = 0.05;
  const HostSet hs = random_set(n, 42);
  const Reference ref = reference(hs, G, eps);
  DeviceSet<Space> ds(hs);
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;

  // Launch shapes: team, tile, splits, targets per thread (0 = automatic).
  const DirectShape shapes[] = {{0, 0, 0, 0},  {0, 32, 1, 1}, {0, 64, 4, 2},
                                {0, 16, 7, 4}, {0, 32, 3, 8}, {0, 64, 1, 8}};
  for (const Precision prec : {Precision::Float, Precision::Double, Precision::Mixed}) {
    for (const DirectShape& shape : shapes) {
      DirectSolver<Space> solver(Space(), prec, shape, G, eps);
      ForceOutput<Space> out{Kokkos::View<double* [3], typename Space::memory_space>("a", n),
                             Kokkos::View<double*, typename Space::memory_space>("pot", n),
                             {}};
      solver.compute(ds.p.x, ds.p.m, n, {{}, n}, true, out);
      const double err = max_rel_error(out.acc, ref.acc, all);
      EXPECT_LT(err, bound(prec)) << precision_name(prec) << " tile " << shape.tile << " splits "
                                  << shape.splits << " ipt " << shape.i_per_thread;
      auto pot = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.pot);
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(pot(i), ref.pot[i], bound(prec) * std::fabs(ref.pot[i]))
            << precision_name(prec) << " particle " << i;
    }
  }
}

// The j-split partial sums are added in split order: every call writes every target, with the
// same bits whatever order the teams ran in.
TYPED_TEST(GravityDirect, SplitSumsAreWrittenAndIdenticalOnEveryCall) {
  using Space = TypeParam;
  using V = Kokkos::View<double* [3], typename Space::memory_space>;
  const int n = 1000;
  const HostSet hs = random_set(n, 5);
  DeviceSet<Space> ds(hs);
  for (const Precision prec : {Precision::Float, Precision::Double}) {
    DirectSolver<Space> solver(Space(), prec, {0, 32, 7, 1}, 1.0, 0.05);
    V first("first", n);
    for (int call = 0; call < 4; ++call) {
      ForceOutput<Space> out{V("a", n), {}, {}};
      Kokkos::deep_copy(out.acc, std::nan(""));
      solver.compute(ds.p.x, ds.p.m, n, {{}, n}, false, out);
      if (call == 0) {
        Kokkos::deep_copy(first, out.acc);
        continue;
      }
      auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.acc);
      auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), first);
      for (int i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d) {
          ASSERT_TRUE(std::isfinite(a(i, d))) << "particle " << i << " not written";
          ASSERT_EQ(std::memcmp(&a(i, d), &b(i, d), sizeof(double)), 0)
              << precision_name(prec) << " call " << call << " particle " << i;
        }
    }
  }
}

TYPED_TEST(GravityDirect, SubsetOfTargetsIsCompactAndExact) {
  using Space = TypeParam;
  const int n = 200;
  const HostSet hs = random_set(n, 7);
  const Reference ref = reference(hs, 1.0, 0.1);
  DeviceSet<Space> ds(hs);
  std::vector<int> idx;
  for (int i = 3; i < n; i += 5) idx.push_back(i);
  Kokkos::View<int*, typename Space::memory_space> index("index", idx.size());
  auto h = Kokkos::create_mirror_view(index);
  for (std::size_t k = 0; k < idx.size(); ++k) h(k) = idx[k];
  Kokkos::deep_copy(index, h);
  DirectSolver<Space> solver(Space(), Precision::Double, {0, 32, 3}, 1.0, 0.1);
  ForceOutput<Space> out{
      Kokkos::View<double* [3], typename Space::memory_space>("a", idx.size()), {}, {}};
  solver.compute(ds.p.x, ds.p.m, n, {index, int(idx.size())}, false, out);
  EXPECT_LT(max_rel_error(out.acc, ref.acc, idx), 1e-12);
}

TYPED_TEST(GravityDirect, HermiteJerkMatchesReference) {
  using Space = TypeParam;
  const int n = 150;
  const HostSet hs = random_set(n, 11);
  const Reference ref = reference(hs, 1.0, 0.05);
  DeviceSet<Space> ds(hs);
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  for (const Precision prec : {Precision::Double, Precision::Mixed}) {
    for (const int splits : {1, 3}) {
      DirectSolver<Space> solver(Space(), prec, {0, 16, splits}, 1.0, 0.05);
      using V = Kokkos::View<double* [3], typename Space::memory_space>;
      ForceOutput<Space> out{V("a", n), {}, V("j", n)};
      solver.compute_hermite(ds.p.x, ds.p.v, ds.p.m, n, {{}, n}, false, out);
      EXPECT_LT(max_rel_error(out.acc, ref.acc, all), bound(prec));
      // Jerks cancel more than accelerations; relative to the typical jerk size.
      EXPECT_LT(max_rel_error(out.jerk, ref.jerk, all), 50 * bound(prec)) << precision_name(prec);
    }
  }
}

TYPED_TEST(GravityDirect, ForceSumConservesMomentum) {
  using Space = TypeParam;
  const int n = 500;
  const HostSet hs = random_set(n, 99);
  DeviceSet<Space> ds(hs);
  for (const Precision prec : {Precision::Float, Precision::Double, Precision::Mixed}) {
    DirectSolver<Space> solver(Space(), prec, {}, 1.0, 0.02);
    ForceOutput<Space> out{Kokkos::View<double* [3], typename Space::memory_space>("a", n), {}, {}};
    solver.compute(ds.p.x, ds.p.m, n, {{}, n}, false, out);
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.acc);
    double sum[3] = {0, 0, 0}, scale = 0;
    for (int i = 0; i < n; ++i) {
      double mag = 0;
      for (int c = 0; c < 3; ++c) {
        sum[c] += hs.m[i] * a(i, c);
        mag += a(i, c) * a(i, c);
      }
      scale += hs.m[i] * std::sqrt(mag);
    }
    const double net = std::sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
    EXPECT_LT(net / scale, prec == Precision::Double ? 1e-13 : 1e-5) << precision_name(prec);
  }
}

TEST(GravityDirectShape, SplitFillsTheDeviceForSmallN) {
  // 4096 targets, one per thread, on a device with 270k threads: split up to one tile per team.
  EXPECT_EQ(choose_splits(4096, 4096, 256, 1, 270336, 0), 16);
  EXPECT_EQ(choose_splits(1 << 20, 1 << 20, 256, 1, 270336, 0), 1);
  EXPECT_EQ(choose_splits(1000, 1024, 256, 8, 2, 0), 1);
  EXPECT_EQ(choose_splits(1000, 1024, 256, 8, 2, 9), 4);  // capped at one tile per split
}

}  // namespace
