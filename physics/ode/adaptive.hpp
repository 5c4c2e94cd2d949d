#pragma once
// Step-size control of the adaptive Dormand-Prince method (Hairer, Norsett, Wanner, Solving ODEs I,
// II.4): accept when the RMS scaled error is <= 1, next step dt * clamp(0.9 err^(-1/5), 0.2, 5).
// One dt for every ensemble member (the largest error decides), so lanes stay in lock-step.
#include "config/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace hayate::ode {

struct AdaptiveStats {
  std::int64_t accepted = 0, rejected = 0;
};

// attempt(t, dt) -> error norm; accept() commits the attempted state. h is the trial step,
// updated for the next call; the last step is shortened to end exactly at t1.
template <class Attempt, class Accept>
void dp_integrate(double t0, double t1, double& h, AdaptiveStats& stats, Attempt&& attempt,
                  Accept&& accept) {
  double t = t0;
  while (t < t1) {
    const bool last = h >= t1 - t;
    const double dt = last ? t1 - t : h;
    const double err = attempt(t, dt);
    const double fac =
        std::isfinite(err) ? std::clamp(0.9 * std::pow(std::max(err, 1e-10), -0.2), 0.2, 5.0) : 0.2;
    if (!(err <= 1.0)) {
      ++stats.rejected;
      h = dt * std::min(fac, 0.9);
      if (h < 1e-14 * std::max(1.0, std::fabs(t)))
        throw core::RuntimeFailure("ode: rk45 step size underflow at t = " + std::to_string(t) +
                                   " (the model is stiff or not finite there)");
      continue;
    }
    accept();
    ++stats.accepted;
    t = last ? t1 : t + dt;
    h = last ? std::max(h, dt * fac) : dt * fac;
  }
}

}  // namespace hayate::ode
