#pragma once
// Accuracy of approximate accelerations against a reference: percentiles of |da| / |a|.
#include <algorithm>
#include <cmath>
#include <vector>

namespace hayate::gravity {

struct ForceErrorStats {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles of the relative errors (rows of 3 components, host arrays).
template <class A, class B>
ForceErrorStats force_error_stats(const A& approx, const B& reference, int count) {
  std::vector<double> rel(count);
  for (int k = 0; k < count; ++k) {
    double num = 0, den = 0;
    for (int c = 0; c < 3; ++c) {
      const double d = approx(k, c) - reference(k, c);
      num += d * d;
      den += reference(k, c) * reference(k, c);
    }
    rel[k] = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  }
  std::sort(rel.begin(), rel.end());
  auto rank = [&](double q) {
    const int r = int(std::ceil(q * count)) - 1;
    return rel[std::min(count - 1, std::max(0, r))];
  };
  ForceErrorStats s;
  if (count == 0) return s;
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = rel.back();
  return s;
}

}  // namespace hayate::gravity
