// Counting experiment (CPU, serial tree, double): interactions per target of the group walk on
// a Plummer sphere, for Morton or Hilbert keys, several group formations and MAC variants.
// Build from the repository root after `make build`:
//   g++ -O2 -fopenmp -std=c++17 -Iphysics -Icore -Ibackends -isystem .deps/install-openmp/include \
//     group-count.cpp -o group-count
// Usage: group-count N HILBERT(0/1) DACC MODE(0 runs, 1 leaves, 2 leaves of one parent) GROUP_CELL
// Environment: SUB=k (k sub-boxes per group), AMIN_ONLY=1 (distance to the nearest member),
// EXACT=1 (every member's own criterion), BOUND=1 (b_J bounded as the device's moments do).
// Round 35 added: HYBRID=1 (a node the box rejects is tested again at every member's distance;
// REP=1/2 pre-filters with one member, OWN=1 uses each member's own |a|, LEAVES=1 only for
// leaves, MINP=k only for nodes of >= k particles); SAMPLE=s (every s-th group: one member's
// force from the group's list against direct summation in double, percentiles of |da|/|a|);
// LEVELS=1 (nodes and leaves per level); ROUNDS=1 (traversal rounds with a stack of nodes
// popped 32 at a time against a stack of families popped 4 at a time).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>
#include "gravity/tree.hpp"
using u64 = std::uint64_t;
using hayate::gravity::hilbert_key;
using hayate::gravity::morton_key;
static u64 morton(u64 x, u64 y, u64 z) {
  return morton_key(x, y, z);
}
static u64 hilbert(u64 x, u64 y, u64 z) {
  return hilbert_key(x, y, z);
}
struct Node {
  int b, e, level;
  double cx, cy, cz, m, bj;
  int first, nch;
};
int main(int argc, char** argv) {
  int N = argc > 1 ? atoi(argv[1]) : 1 << 20;
  int use_h = argc > 2 ? atoi(argv[2]) : 0;
  double dacc = argc > 3 ? atof(argv[3]) : 1.0 / 512;
  int mode = argc > 4 ? atoi(argv[4]) : 0;
  int G = getenv("G") ? atoi(getenv("G")) : 32, leaf = getenv("LEAF") ? atoi(getenv("LEAF")) : 32,
      gcell = argc > 5 ? atoi(argv[5]) : 64;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(0, 1);
  std::vector<double> x(N), y(N), z(N), ax(N);
  double sc = 3 * M_PI / 16;
  for (int i = 0; i < N; i++) {
    double r;
    do {
      r = 1 / std::sqrt(std::pow(U(rng), -2.0 / 3) - 1);
    } while (r > 20);
    double ct = 2 * U(rng) - 1, ph = 2 * M_PI * U(rng), st = std::sqrt(1 - ct * ct);
    x[i] = r * st * std::cos(ph) * sc;
    y[i] = r * st * std::sin(ph) * sc;
    z[i] = r * ct * sc;
    double rr = r * sc;
    ax[i] = rr / std::pow(rr * rr + sc * sc, 1.5);
  }
  std::vector<double> mass(N, 1.0 / N);
  bool fromfile = getenv("XYZ") != nullptr;
  if (fromfile) {
    FILE* f = fopen(getenv("XYZ"), "r");
    long n0;
    if (fscanf(f, "%ld\n", &n0) != 1) return 1;
    N = std::min<long>(N, n0);
    char line[4096];
    if (!fgets(line, sizeof line, f)) return 1;
    x.resize(N);
    y.resize(N);
    z.resize(N);
    ax.resize(N);
    mass.resize(N);
    for (int i = 0; i < N; i++) {
      char sp[8];
      double m, px, py, pz, vx, vy, vz;
      if (fscanf(f, "%7s %lf %lf %lf %lf %lf %lf %lf", sp, &m, &px, &py, &pz, &vx, &vy, &vz) != 8)
        return 1;
      mass[i] = m;
      x[i] = px;
      y[i] = py;
      z[i] = pz;
    }
    fclose(f);
  }
  double lo = 1e30, hi = -1e30;
  for (int i = 0; i < N; i++) {
    lo = std::min({lo, x[i], y[i], z[i]});
    hi = std::max({hi, x[i], y[i], z[i]});
  }
  double side = (hi - lo) * 1.0001;
  int B = 21;
  double cells = double(1 << B);
  std::vector<u64> key(N);
  std::vector<int> ord(N);
  for (int i = 0; i < N; i++) {
    u64 ix = u64((x[i] - lo) / side * cells), iy = u64((y[i] - lo) / side * cells),
        iz = u64((z[i] - lo) / side * cells);
    key[i] = use_h ? hilbert(ix, iy, iz) : morton(ix, iy, iz);
  }
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return key[a] < key[b]; });
  std::vector<double> X(N), Y(N), Z(N), A(N), MS(N);
  std::vector<u64> K(N);
  for (int i = 0; i < N; i++) {
    X[i] = x[ord[i]];
    Y[i] = y[ord[i]];
    Z[i] = z[ord[i]];
    A[i] = ax[ord[i]];
    MS[i] = mass[ord[i]];
    K[i] = key[ord[i]];
  }
  // build tree (BFS)
  std::vector<Node> nodes;
  nodes.push_back({0, N, 0});
  for (size_t q = 0; q < nodes.size(); q++) {
    Node nd = nodes[q];
    nodes[q].first = -1;
    nodes[q].nch = 0;
    if (nd.e - nd.b > leaf && nd.level < B) {
      int shift = 3 * (B - 1 - nd.level);
      int prev = nd.b;
      int first = nodes.size();
      int c = 0;
      for (int d = 0; d < 8; d++) {
        int at = prev;
        while (at < nd.e && int((K[at] >> shift) & 7) == d) at++;
        if (at > prev) {
          nodes.push_back({prev, at, nd.level + 1});
          c++;
        }
        prev = at;
      }
      nodes[q].first = first;
      nodes[q].nch = c;
    }
  }
  if (getenv("LEVELS")) {
    std::vector<long> cnt(64), lv(64), lp(64);
    for (auto& nd : nodes) { cnt[nd.level]++; if (nd.nch == 0) { lv[nd.level]++; lp[nd.level] += nd.e - nd.b; } }
    for (int l = 0; l < 64; l++) if (cnt[l]) printf("level %d nodes %ld leaves %ld leaf particles %ld\n", l, cnt[l], lv[l], lp[l]);
    printf("nodes %zu\n", nodes.size());
  }
  for (auto& nd : nodes) {
    double m = 0, sx = 0, sy = 0, sz = 0;
    for (int i = nd.b; i < nd.e; i++) {
      m += MS[i];
      sx += MS[i] * X[i];
      sy += MS[i] * Y[i];
      sz += MS[i] * Z[i];
    }
    nd.m = m;
    nd.cx = sx / m;
    nd.cy = sy / m;
    nd.cz = sz / m;
    double bb = 0;
    for (int i = nd.b; i < nd.e; i++) {
      double dx = X[i] - nd.cx, dy = Y[i] - nd.cy, dz = Z[i] - nd.cz;
      bb = std::max(bb, dx * dx + dy * dy + dz * dz);
    }
    nd.bj = std::sqrt(bb);
  }
  if (fromfile) {
#pragma omp parallel for schedule(dynamic, 1024)
    for (int i = 0; i < N; i++) {
      double a[3] = {0, 0, 0};
      std::vector<int> st{0};
      while (!st.empty()) {
        int q = st.back();
        st.pop_back();
        const Node& nd = nodes[q];
        double dx = nd.cx - X[i], dy = nd.cy - Y[i], dz = nd.cz - Z[i];
        double r2 = dx * dx + dy * dy + dz * dz;
        double side = (hi - lo) / double(1 << nd.level);
        if (nd.nch == 0 || side * side < 0.09 * r2) {
          if (nd.nch == 0 && !(side * side < 0.09 * r2)) {
            for (int j = nd.b; j < nd.e; j++) {
              double ex = X[j] - X[i], ey = Y[j] - Y[i], ez = Z[j] - Z[i];
              double rr = ex * ex + ey * ey + ez * ez + 1e-6;
              double w = MS[j] / (rr * std::sqrt(rr));
              a[0] += w * ex;
              a[1] += w * ey;
              a[2] += w * ez;
            }
          } else {
            double rr = r2 + 1e-6;
            double w = nd.m / (rr * std::sqrt(rr));
            a[0] += w * dx;
            a[1] += w * dy;
            a[2] += w * dz;
          }
        } else
          for (int k = 0; k < nd.nch; k++) st.push_back(nd.first + k);
      }
      A[i] = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    }
  }
  if (getenv("BOUND")) {  // the device's b_J: exact for leaves; above, the largest over children of
    // min(|com_c - com| + b_c, distance from com to the farthest corner of the child's particle
    // box)
    std::vector<std::array<double, 6>> box(nodes.size());
    for (long q = long(nodes.size()) - 1; q >= 0; q--) {
      Node& nd = nodes[q];
      std::array<double, 6> bx = {1e30, 1e30, 1e30, -1e30, -1e30, -1e30};
      if (nd.nch == 0) {
        for (int i = nd.b; i < nd.e; i++) {
          double p3[3] = {X[i], Y[i], Z[i]};
          for (int k = 0; k < 3; k++) {
            bx[k] = std::min(bx[k], p3[k]);
            bx[3 + k] = std::max(bx[3 + k], p3[k]);
          }
        }
      } else {
        double bj = 0;
        for (int c = 0; c < nd.nch; c++) {
          const Node& ch = nodes[nd.first + c];
          const auto& cb = box[nd.first + c];
          for (int k = 0; k < 3; k++) {
            bx[k] = std::min(bx[k], cb[k]);
            bx[3 + k] = std::max(bx[3 + k], cb[3 + k]);
          }
          double dx = ch.cx - nd.cx, dy = ch.cy - nd.cy, dz = ch.cz - nd.cz;
          double b1 = std::sqrt(dx * dx + dy * dy + dz * dz) + ch.bj;
          double fx = std::max(std::fabs(cb[0] - nd.cx), std::fabs(cb[3] - nd.cx)),
                 fy = std::max(std::fabs(cb[1] - nd.cy), std::fabs(cb[4] - nd.cy)),
                 fz = std::max(std::fabs(cb[2] - nd.cz), std::fabs(cb[5] - nd.cz));
          double b2 = std::sqrt(fx * fx + fy * fy + fz * fz);
          bj = std::max(bj, std::min(b1, b2));
        }
        int exact_upto = getenv("EXACT_UPTO") ? atoi(getenv("EXACT_UPTO")) : 0;
        if (nd.e - nd.b > exact_upto) nd.bj = bj;
      }
      box[q] = bx;
    }
  }
  // groups: runs of G cut at boundaries between children of cells with > gcell*G particles
  std::vector<char> cut(N + 1, 0);
  for (auto& nd : nodes)
    if (nd.e - nd.b > gcell * G && nd.nch)
      for (int c = 0; c < nd.nch; c++) cut[nodes[nd.first + c].b] = 1;
  std::vector<int> gb;
  if (mode == 0) {
    int start = 0;
    gb.push_back(0);
    for (int i = 1; i <= N; i++) {
      if (i == N || cut[i] || i - start == G) {
        if (i < N) gb.push_back(i);
        start = i;
      }
    }
    gb.push_back(N);
  } else {  // pack whole leaves in order; mode 2: also never cross a parent boundary
    std::vector<int> parent(nodes.size(), -1);
    for (size_t q = 0; q < nodes.size(); q++)
      for (int c = 0; c < nodes[q].nch; c++) parent[nodes[q].first + c] = q;
    std::vector<int> leaves;
    for (size_t q = 0; q < nodes.size(); q++)
      if (nodes[q].nch == 0) leaves.push_back(q);
    std::sort(leaves.begin(), leaves.end(), [&](int a, int b) { return nodes[a].b < nodes[b].b; });
    gb.push_back(0);
    int cur = 0, par = -2;
    for (int q : leaves) {
      int c = nodes[q].e - nodes[q].b;
      bool newg = cur > 0 && (cur + c > G || cut[nodes[q].b] || (mode == 2 && parent[q] != par));
      if (newg) {
        gb.push_back(nodes[q].b);
        cur = 0;
      }
      if (cur == 0) par = parent[q];
      cur += c;
      while (cur > G) {
        gb.push_back(gb.back() + G);
        cur -= G;
      }
    }
    gb.push_back(N);
  }
  int ng = gb.size() - 1;
  if (getenv("ROUNDS")) {
    std::vector<long> hist(9);
    for (auto& nd : nodes) if (nd.nch) hist[nd.nch]++;
    for (int c = 1; c <= 8; c++) printf("children %d: %ld\n", c, hist[c]);
    double r_old = 0, r_new = 0, t_old = 0, t_new = 0, maxs_old = 0, maxs_new = 0;
    long sampled = 0;
    for (int g = 0; g < ng; g += 16) {
      int b = gb[g], e = gb[g + 1];
      double mn[3] = {1e30, 1e30, 1e30}, mx[3] = {-1e30, -1e30, -1e30}, amin = 1e30;
      for (int i = b; i < e; i++) {
        double p3[3] = {X[i], Y[i], Z[i]};
        for (int k = 0; k < 3; k++) { mn[k] = std::min(mn[k], p3[k]); mx[k] = std::max(mx[k], p3[k]); }
        amin = std::min(amin, A[i]);
      }
      auto opens = [&](int q) {  // node q rejected and internal
        const Node& nd = nodes[q];
        double c[3] = {nd.cx, nd.cy, nd.cz}, d2 = 0;
        for (int k = 0; k < 3; k++) { double dd = std::max({mn[k] - c[k], 0.0, c[k] - mx[k]}); d2 += dd * dd; }
        bool acc = d2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * amin * d2 * d2;
        return !acc && nd.nch > 0;
      };
      // old: stack of nodes, pop up to 32
      std::vector<int> st{0};
      while (!st.empty()) {
        int pop = std::min<int>(st.size(), 32);
        std::vector<int> cur(st.end() - pop, st.end());
        st.resize(st.size() - pop);
        r_old++; t_old += pop;
        for (int q : cur) if (opens(q)) for (int k = 0; k < nodes[q].nch; k++) st.push_back(nodes[q].first + k);
        maxs_old = std::max<double>(maxs_old, st.size());
      }
      // new: stack of parents (first,count), pop up to 4
      std::vector<std::pair<int,int>> ps{{0, 1}};
      while (!ps.empty()) {
        int pop = std::min<int>(ps.size(), 4);
        std::vector<std::pair<int,int>> cur(ps.end() - pop, ps.end());
        ps.resize(ps.size() - pop);
        r_new++;
        for (auto& pr : cur) for (int k = 0; k < pr.second; k++) { t_new++; int q = pr.first + k; if (opens(q)) ps.push_back({nodes[q].first, nodes[q].nch}); }
        maxs_new = std::max<double>(maxs_new, ps.size());
      }
      sampled++;
    }
    printf("rounds/group old %.2f new %.2f; tests/group old %.1f new %.1f; max stack old %.0f new %.0f\n", r_old / sampled, r_new / sampled, t_old / sampled, t_new / sampled, maxs_old, maxs_new);
    return 0;
  }
  std::vector<double> gcost(ng, 0), gtests_(ng, 0), ghalf(ng, 0);
  std::vector<int> glevel(ng, 0);
  std::vector<int> lev(N, 0);
  {
    double eps = getenv("EPS") ? atof(getenv("EPS")) : 0.02,
           dtmax = getenv("DTMAX") ? atof(getenv("DTMAX")) : 0.015625;
    for (int i = 0; i < N; i++) {
      double dti = 0.025 * std::sqrt(eps / std::max(A[i], 1e-30));
      int k = 0;
      while (dtmax / double(1 << k) > dti && k < 10) k++;
      lev[i] = k;
    }
  }
  double tot_u = 0, tot_r = 0, tot_n = 0, tot_p = 0, tot_t = 0, diag = 0, tot_n_l = 0, tot_p_l = 0;
  long targets = 0;
  std::vector<double> errs;
  const double EPS2 = std::pow(getenv("EPS") ? atof(getenv("EPS")) : 0.02, 2);
#pragma omp parallel for reduction(+:tot_u,tot_r,tot_n,tot_p,tot_t,diag,targets,tot_n_l,tot_p_l) schedule(dynamic,64)
  for (int g = 0; g < ng; g++) {
    int b = gb[g], e = gb[g + 1];
    double mn[3] = {1e30, 1e30, 1e30}, mx[3] = {-1e30, -1e30, -1e30}, amin = 1e30;
    for (int i = b; i < e; i++) {
      double p[3] = {X[i], Y[i], Z[i]};
      for (int k = 0; k < 3; k++) {
        mn[k] = std::min(mn[k], p[k]);
        mx[k] = std::max(mx[k], p[k]);
      }
      amin = std::min(amin, A[i]);
    }
    diag += std::sqrt((mx[0] - mn[0]) * (mx[0] - mn[0]) + (mx[1] - mn[1]) * (mx[1] - mn[1]) +
                      (mx[2] - mn[2]) * (mx[2] - mn[2]));
    ghalf[g] = 0.5 * std::sqrt((mx[0] - mn[0]) * (mx[0] - mn[0]) + (mx[1] - mn[1]) * (mx[1] - mn[1]) +
                      (mx[2] - mn[2]) * (mx[2] - mn[2]));
    std::vector<int> st{0};
    long nn = 0, np = 0, nt = 0, nr = 0, nunc = 0;
    const int stride = getenv("SAMPLE") ? atoi(getenv("SAMPLE")) : 0;
    const bool sampled = stride > 0 && g % stride == 0;
    const int ts_ = b + (g * 7) % (e - b);
    double at[3] = {0, 0, 0};
    const double se2 = EPS2;
    auto add = [&](double px, double py, double pz, double pm) {
      double dx = px - X[ts_], dy = py - Y[ts_], dz = pz - Z[ts_];
      double r2 = dx * dx + dy * dy + dz * dz + se2;
      double w = pm / (r2 * std::sqrt(r2));
      at[0] += w * dx; at[1] += w * dy; at[2] += w * dz;
    };
    while (!st.empty()) {
      int q = st.back();
      st.pop_back();
      const Node& nd = nodes[q];
      nt++;
      double c[3] = {nd.cx, nd.cy, nd.cz}, d2 = 0;
      for (int k = 0; k < 3; k++) {
        double dd = std::max({mn[k] - c[k], 0.0, c[k] - mx[k]});
        d2 += dd * dd;
      }
      bool acc = d2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * amin * d2 * d2;
      if (getenv("SUB")) {
        int k = atoi(getenv("SUB"));
        int cnt = e - b;
        acc = true;
        for (int s0 = 0; s0 < k && acc; s0++) {
          int sb = b + cnt * s0 / k, se = b + cnt * (s0 + 1) / k;
          if (se <= sb) continue;
          double lo3[3] = {1e30, 1e30, 1e30}, hi3[3] = {-1e30, -1e30, -1e30}, am = 1e30;
          for (int i = sb; i < se; i++) {
            double p[3] = {X[i], Y[i], Z[i]};
            for (int q = 0; q < 3; q++) {
              lo3[q] = std::min(lo3[q], p[q]);
              hi3[q] = std::max(hi3[q], p[q]);
            }
            am = std::min(am, A[i]);
          }
          double dd2 = 0;
          for (int q = 0; q < 3; q++) {
            double dd = std::max({lo3[q] - c[q], 0.0, c[q] - hi3[q]});
            dd2 += dd * dd;
          }
          acc = dd2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * am * dd2 * dd2;
        }
      }
      if (getenv("AMIN_ONLY")) {
        double am = 1e30;
        for (int i = b; i < e; i++) am = std::min(am, A[i]);
        double dmin2 = 1e30;
        for (int i = b; i < e; i++) {
          double dx = X[i] - c[0], dy = Y[i] - c[1], dz = Z[i] - c[2];
          dmin2 = std::min(dmin2, dx * dx + dy * dy + dz * dz);
        }
        acc = dmin2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * am * dmin2 * dmin2;
      }
      if (getenv("HYBRID") && !acc && (!getenv("LEAVES") || nd.nch == 0) &&
          (!getenv("MINP") || nd.e - nd.b >= atoi(getenv("MINP")))) {
        // farthest corner of the box: an upper bound of the nearest member's distance
        double f2 = 0;
        for (int k = 0; k < 3; k++) {
          double dd = std::max(std::fabs(mn[k] - c[k]), std::fabs(c[k] - mx[k]));
          f2 += dd * dd;
        }
        if (getenv("REP")) {
          int r = atoi(getenv("REP")) == 2 ? b + (q * 7) % (e - b) : b + (e - b) / 2;
          double dx = X[r] - c[0], dy = Y[r] - c[1], dz = Z[r] - c[2];
          f2 = dx * dx + dy * dy + dz * dz;
        }
        bool could = f2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * amin * f2 * f2;
        if (getenv("OWN")) could = true;
        if (could) {
          nunc++;
          acc = true;
          for (int i = b; i < e && acc; i++) {
            double dx = X[i] - c[0], dy = Y[i] - c[1], dz = Z[i] - c[2];
            double di2 = dx * dx + dy * dy + dz * dz;
            double ai = getenv("OWN") ? A[i] : amin;
            acc = di2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * ai * di2 * di2;
          }
        }
      }
      bool boxacc = acc;
      if (getenv("EXACT")) {
        acc = true;
        for (int i = b; i < e && acc; i++) {
          double dx = X[i] - c[0], dy = Y[i] - c[1], dz = Z[i] - c[2];
          double di2 = dx * dx + dy * dy + dz * dz;
          acc = di2 > nd.bj * nd.bj && nd.m * nd.bj * nd.bj <= dacc * A[i] * di2 * di2;
        }
      }
      if (!boxacc) nr++;
      if (acc) {
        nn++;
        if (sampled) add(nd.cx, nd.cy, nd.cz, nd.m);
      } else if (nd.nch == 0) {
        np += nd.e - nd.b;
        if (sampled) for (int j = nd.b; j < nd.e; j++) add(X[j], Y[j], Z[j], MS[j]);
      }
      else
        for (int k = 0; k < nd.nch; k++) st.push_back(nd.first + k);
    }
    if (sampled) {
      double ar[3] = {0, 0, 0};
      for (int j = 0; j < N; j++) {
        double dx = X[j] - X[ts_], dy = Y[j] - Y[ts_], dz = Z[j] - Z[ts_];
        double r2 = dx * dx + dy * dy + dz * dz + se2;
        double w = MS[j] / (r2 * std::sqrt(r2));
        ar[0] += w * dx; ar[1] += w * dy; ar[2] += w * dz;
      }
      double num = std::sqrt((at[0]-ar[0])*(at[0]-ar[0])+(at[1]-ar[1])*(at[1]-ar[1])+(at[2]-ar[2])*(at[2]-ar[2]));
      double den = std::sqrt(ar[0]*ar[0]+ar[1]*ar[1]+ar[2]*ar[2]);
#pragma omp critical
      errs.push_back(num / den);
    }
    int cnt = e - b;
    gcost[g] = nn + np;
    gtests_[g] = nt;
    {
      int mx = 0;
      for (int i = b; i < e; i++) mx = std::max(mx, lev[i]);
      glevel[g] = mx;
    }
    tot_n_l += nn;
    tot_p_l += np;
    tot_n += double(nn) * cnt;
    tot_p += double(np) * cnt;
    tot_t += nt;
    tot_r += nr;
    tot_u += nunc;
    targets += cnt;
  }
  {
    int maxl = 0;
    for (int g = 0; g < ng; g++) maxl = std::max(maxl, glevel[g]);
    for (int L = maxl; L >= std::max(0, maxl - 3); L--) {
      std::vector<double> c;
      for (int g = 0; g < ng; g++)
        if (glevel[g] >= L) c.push_back(gcost[g]);
      std::sort(c.begin(), c.end());
      double sum = 0;
      for (double v : c) sum += v;
      if (c.empty()) continue;
      printf(
          "  groups due at level>=%d: %zu, cost sum %.3g, mean %.0f, p50 %.0f, p99 %.0f, max "
          "%.0f\n",
          L, c.size(), sum, sum / c.size(), c[c.size() / 2], c[size_t(c.size() * 0.99)], c.back());
    }
  }
  {
    int W = 32 / G;
    double wc = 0, wt = 0;
    std::vector<double> ent(ng), tst(ng);
    // recompute entries per group from gcost is mixed with tests; store separately below
    (void)wt;
    (void)wc;
  }
  {
    int W = 32 / G;
    double we = 0, wtests = 0;
    for (int w = 0; w * W < ng; w++) {
      double me = 0, mt = 0;
      for (int k = 0; k < W && w * W + k < ng; k++) {
        me = std::max(me, gcost[w * W + k]);
        mt = std::max(mt, gtests_[w * W + k]);
      }
      we += me;
      wtests += mt;
    }
    printf(
        "G=%d: warps %d, warp list entries per target %.0f (sum of max over the warp's groups x 32 "
        "/ N), warp test rounds per warp %.1f\n",
        G, (ng + W - 1) / W, we * 32.0 / N, wtests / G / ((ng + W - 1) / W));
  }
  {
    const double eps = std::sqrt(EPS2);
    double tot = 0;
    for (int g = 0; g < ng; g++) tot += gcost[g];
    for (double k : {2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
      double c = 0; long n = 0;
      for (int g = 0; g < ng; g++) if (ghalf[g] <= k * eps) { c += gcost[g]; n++; }
      printf("half-diagonal <= %g eps: groups %.3f, walk entries %.3f\n", k, double(n) / ng, c / tot);
    }
  }
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    printf("err samples %zu p50 %.3g p90 %.3g p99 %.3g max %.3g\n", errs.size(), errs[errs.size()/2], errs[size_t(errs.size()*0.9)], errs[size_t(errs.size()*0.99)], errs.back());
  }
  printf("box-rejected/group=%.0f uncertain/group=%.0f ", tot_r / ng, tot_u / ng);
  printf("mode %d gcell %d lanecost/target=%.0f ", mode, gcell,
         (tot_n_l + tot_p_l) * G / double(N));
  printf(
      "%s N=%d dacc=%g groups=%d (full %.3f) nodes/target=%.0f particles/target=%.0f "
      "tests/group=%.0f mean diag=%.4g\n",
      use_h ? "hilbert" : "morton", N, dacc, ng, double(N) / ng / G, tot_n / targets,
      tot_p / targets, tot_t / ng, diag / ng);
}
