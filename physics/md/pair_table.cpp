#include "pair_table.hpp"

#include "io/text_reader.hpp"
#include "potentials/lj_cut.hpp"
#include "potentials/morse.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>

namespace hayate::md {

namespace {

// Second derivatives of the cubic spline through (x_k, y_k): natural (zero second derivative at
// both ends) or, with `slopes`, with the given first derivatives at the ends (as LAMMPS
// splines a table file).
struct EndSlopes {
  double first, last;
};

std::vector<double> spline_second_derivatives(const std::vector<double>& x,
                                              const std::vector<double>& y,
                                              const EndSlopes* slopes = nullptr) {
  const std::size_t n = x.size();
  std::vector<double> y2(n, 0.0), u(n, 0.0);
  if (slopes) {
    y2[0] = -0.5;
    u[0] = 3.0 / (x[1] - x[0]) * ((y[1] - y[0]) / (x[1] - x[0]) - slopes->first);
  }
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double sig = (x[i] - x[i - 1]) / (x[i + 1] - x[i - 1]);
    const double p = sig * y2[i - 1] + 2.0;
    y2[i] = (sig - 1.0) / p;
    u[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1]);
    u[i] = (6.0 * u[i] / (x[i + 1] - x[i - 1]) - sig * u[i - 1]) / p;
  }
  double qn = 0, un = 0;
  if (slopes) {
    qn = 0.5;
    un = 3.0 / (x[n - 1] - x[n - 2]) *
         (slopes->last - (y[n - 1] - y[n - 2]) / (x[n - 1] - x[n - 2]));
  }
  y2[n - 1] = (un - qn * u[n - 2]) / (qn * y2[n - 2] + 1.0);
  for (std::size_t k = n - 1; k-- > 0;) y2[k] = y2[k] * y2[k + 1] + u[k];
  return y2;
}

double spline_at(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& y2, double at) {
  std::size_t lo = 0, hi = x.size() - 1;
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    (x[mid] > at ? hi : lo) = mid;
  }
  const double h = x[hi] - x[lo];
  const double a = (x[hi] - at) / h, b = (at - x[lo]) / h;
  return a * y[lo] + b * y[hi] +
         ((a * a * a - a) * y2[lo] + (b * b * b - b) * y2[hi]) * h * h / 6.0;
}

// The n-point table in r^2 from the values at its points, with the second derivatives the
// spline interpolation needs.
TableData tabulate(double inner, double cutoff, const TableSampling& s,
                   const std::function<void(double r, double& e, double& f)>& at) {
  if (s.points < 2) throw std::invalid_argument("a pair table needs at least 2 points");
  TableData t;
  t.n = s.points;
  t.spline = s.spline;
  t.innersq = inner * inner;
  t.delta = (cutoff * cutoff - t.innersq) / (t.n - 1);
  std::vector<double> rsq(t.n);
  t.e.resize(t.n);
  t.f.resize(t.n);
  for (int k = 0; k < t.n; ++k) {
    rsq[k] = t.innersq + k * t.delta;
    const double r = std::sqrt(rsq[k]);
    double force = 0;
    at(r, t.e[k], force);
    t.f[k] = force / r;
  }
  // Clamped splines, as LAMMPS' pair table: natural ends (zero curvature) would leave an error of
  // second order in the spacing next to the inner end, where |F|/r curves most. The slopes in
  // r^2: dE/d(r^2) = -F / (2 r) exactly; d(F/r)/d(r^2) by a central difference of a hundredth of
  // the spacing.
  const auto f_over_r = [&](double r2) {
    const double r = std::sqrt(r2);
    double e = 0, force = 0;
    at(r, e, force);
    return force / r;
  };
  const auto f_slope = [&](double r2) {
    const double h = 0.01 * t.delta;
    return (f_over_r(r2 + h) - f_over_r(r2 - h)) / (2.0 * h);
  };
  const EndSlopes e_ends{-0.5 * t.f.front(), -0.5 * t.f.back()};  // t.f holds F / r
  const EndSlopes f_ends{f_slope(rsq.front()), f_slope(rsq.back())};
  t.e2 = spline_second_derivatives(rsq, t.e, &e_ends);
  t.f2 = spline_second_derivatives(rsq, t.f, &f_ends);
  return t;
}

}  // namespace

TableFile read_table_file(const std::string& path, const std::string& keyword) {
  core::TextReader in(path, "the table file");
  core::TextLine line;
  // The section: the keyword alone on its line, the parameter line, then the points.
  bool found = false;
  while (in.next(line))
    if (!line.tokens.empty() && line.tokens[0].text == keyword) {
      found = true;
      break;
    }
  if (!found) in.fail(in.lines_read(), 1, "no section '" + keyword + "' in the table file");
  while (in.next(line) && line.tokens.empty()) {
  }
  if (line.tokens.empty() || line.tokens[0].text != "N")
    in.fail(line, 0, "expected the parameter line 'N n [R|RSQ lo hi] [FPRIME lo hi]'");
  if (line.tokens.size() < 2) in.fail(line, 0, "the parameter line names no point count");
  const std::int64_t n = in.integer(line, 1, "the point count");
  if (n < 2 || n > 10000000) in.fail(line, 1, "the point count must be in [2, 10000000]");
  char spacing = 0;  // 'R' or 'S' (RSQ): distances computed, not read
  double lo = 0, hi = 0;
  bool fprime = false;
  double fplo = 0, fphi = 0;
  for (std::size_t k = 2; k < line.tokens.size();) {
    const std::string& w = line.tokens[k].text;
    if ((w == "R" || w == "RSQ") && k + 2 < line.tokens.size()) {
      spacing = w == "R" ? 'R' : 'S';
      lo = in.real(line, k + 1, "the first distance");
      hi = in.real(line, k + 2, "the last distance");
      if (!(lo > 0 && hi > lo)) in.fail(line, k + 1, "expected 0 < lo < hi");
      k += 3;
    } else if ((w == "FPRIME" || w == "FP") && k + 2 < line.tokens.size()) {
      fprime = true;
      fplo = in.real(line, k + 1, "the force's derivative at the first point");
      fphi = in.real(line, k + 2, "the force's derivative at the last point");
      k += 3;
    } else {
      in.fail(line, k, "unknown table parameter '" + w + "' (N, R, RSQ, FPRIME)");
    }
  }
  TableFile t;
  while (std::int64_t(t.r.size()) < n) {
    if (!in.next(line))
      in.fail(
          in.lines_read(), 1,
          fmt::format("the section '{}' ends after {} of its {} points", keyword, t.r.size(), n));
    if (line.tokens.empty()) continue;
    if (line.tokens.size() != 4) in.fail(line, 0, "a table line is 'index r energy force'");
    const std::int64_t index = in.integer(line, 0, "the point's index");
    if (index != std::int64_t(t.r.size()) + 1)
      in.fail(line, 0, fmt::format("expected point {} here", t.r.size() + 1));
    double r = in.real(line, 1, "the distance");
    const std::size_t k = t.r.size();
    if (spacing == 'R') r = lo + (hi - lo) * double(k) / double(n - 1);
    if (spacing == 'S') r = std::sqrt(lo * lo + (hi * hi - lo * lo) * double(k) / double(n - 1));
    if (!(r > 0) || (k > 0 && !(r > t.r.back())))
      in.fail(line, 1, "distances must be positive and increase");
    t.r.push_back(r);
    t.e.push_back(in.real(line, 2, "the energy"));
    t.f.push_back(in.real(line, 3, "the force"));
  }
  // The force's end slopes: given, or from the end intervals (as LAMMPS).
  const std::size_t last = t.r.size() - 1;
  t.fplo = fprime ? fplo : (t.f[1] - t.f[0]) / (t.r[1] - t.r[0]);
  t.fphi = fprime ? fphi : (t.f[last] - t.f[last - 1]) / (t.r[last] - t.r[last - 1]);
  return t;
}

TableData resample(const TableFile& file, double cutoff, const TableSampling& sampling) {
  const double hi = cutoff > 0 ? cutoff : file.r.back();
  if (hi > file.r.back() * (1 + 1e-12))
    throw std::invalid_argument(
        fmt::format("the cutoff {} lies beyond the table's last distance {}", hi, file.r.back()));
  // The energy's slopes at the ends are minus the forces there.
  const EndSlopes e_slopes{-file.f.front(), -file.f.back()}, f_slopes{file.fplo, file.fphi};
  const auto e2 = spline_second_derivatives(file.r, file.e, &e_slopes);
  const auto f2 = spline_second_derivatives(file.r, file.f, &f_slopes);
  return tabulate(file.r.front(), hi, sampling, [&](double r, double& e, double& f) {
    e = spline_at(file.r, file.e, e2, r);
    f = spline_at(file.r, file.f, f2, r);
  });
}

TableData table_of_style(const std::string& style, const std::vector<double>& params, double inner,
                         double cutoff, const TableSampling& sampling) {
  if (!(inner > 0 && cutoff > inner))
    throw std::invalid_argument("a table needs 0 < inner radius < cutoff");
  return tabulate(inner, cutoff, sampling, [&](double r, double& e, double& f) {
    PairForce<double> p{};
    if (style == LjCut::name)
      p = LjCut::compute(r * r, LjCut::coeff<double>(params.data()));
    else if (style == Morse::name)
      p = Morse::compute(r * r, Morse::coeff<double>(params.data()));
    else
      throw std::invalid_argument("no built-in expression '" + style + "' for a table");
    e = p.energy;
    f = p.fpair * r;
  });
}

}  // namespace hayate::md
