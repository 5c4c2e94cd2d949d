#pragma once
// The Ewald sum's wave-space part on the device, as LAMMPS' kspace_style ewald: for every wave
// vector k = 2 pi (kx/Lx, ky/Ly, kz/Lz) in half of k-space with |k| within the cutoff the
// accuracy sets, the structure factor S(k) = sum_j q_j exp(i k.r_j) (a team per block of k
// vectors reducing over the atoms), then per atom the force
//   F_i = C q_i sum_k 2 u(k) k [sin(k.r_i) Re S - cos(k.r_i) Im S],  u(k) = (4 pi / V)
//   e^(-k^2/4g^2) / k^2,
// the energy C [sum_k u(k) |S(k)|^2 - g/sqrt(pi) sum q^2 - pi Q^2 / (2 V g^2)] (self term and
// neutralizing background) and the virial C sum_k u(k) |S(k)|^2 (1 - k^2 / (2 g^2)). C is the
// units' Coulomb constant. The real-space part is pair style coul/long with the same g.
#include "compat/kokkos_compat.hpp"
#include "exec/instantiate.hpp"
#include "force.hpp"

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::md {

// What the accuracy chooses, as LAMMPS' Ewald::init and setup do.
struct EwaldSetup {
  double g_ewald = 0;       // splitting parameter (1/distance)
  int kmax[3] = {1, 1, 1};  // largest |k| index per axis
  double gsqmx = 0;         // |k|^2 cutoff
  double accuracy = 0;      // absolute force accuracy asked for (force units)
  double estimated = 0;     // LAMMPS' estimate of the resulting RMS force error
  int kcount = 0;           // wave vectors in the half space

  // relative: the requested relative accuracy (kspace.accuracy); two_charge_force: the force
  // between two unit charges at unit distance (qqr2e); q2 = qqr2e sum q^2; cutoff: the real-space
  // Coulomb cutoff. g_ewald > 0 keeps the given splitting.
  static EwaldSetup choose(double relative, double two_charge_force, double q2, double natoms,
                           const double box[3], double cutoff, double g_ewald = 0) {
    const double pi = 3.14159265358979323846;
    EwaldSetup s;
    s.accuracy = relative * two_charge_force;
    if (!(q2 > 0)) throw std::invalid_argument("the Ewald sum needs charges");
    if (g_ewald > 0) {
      s.g_ewald = g_ewald;
    } else {
      double g = s.accuracy * std::sqrt(natoms * cutoff * box[0] * box[1] * box[2]) / (2.0 * q2);
      s.g_ewald = g >= 1.0 ? (1.35 - 0.15 * std::log(s.accuracy)) / cutoff
                           : std::sqrt(-std::log(g)) / cutoff;
    }
    auto rms = [&](int km, double prd) {
      return 2.0 * q2 * s.g_ewald / prd * std::sqrt(1.0 / (pi * km * natoms)) *
             std::exp(-pi * pi * km * km / (s.g_ewald * s.g_ewald * prd * prd));
    };
    double lpr2 = 0;
    for (int d = 0; d < 3; ++d) {
      int k = 1;
      while (rms(k, box[d]) > s.accuracy && k < 4096) ++k;
      s.kmax[d] = k;
      const double unit = 2.0 * pi / box[d];
      s.gsqmx = std::max(s.gsqmx, unit * unit * k * k);
      lpr2 += rms(k, box[d]) * rms(k, box[d]);
    }
    s.gsqmx *= 1.00001;
    const double spr = 2.0 * q2 / std::sqrt(natoms * cutoff * box[0] * box[1] * box[2]) *
                       std::exp(-s.g_ewald * s.g_ewald * cutoff * cutoff);
    s.estimated = std::sqrt(lpr2 / 3.0 + spr * spr);
    return s;
  }
};

// Energy and scalar virial of one evaluation, in double.
struct EwaldResult {
  double energy = 0, virial = 0;
};

template <class Space>
class Ewald {
 public:
  using Mem = typename Space::memory_space;

  Ewald() = default;

  // Wave vectors and their coefficients for the box; q_sum, q2_sum: sum q and sum q^2;
  // qqr2e: Coulomb's constant.
  void setup(const Space& space, const EwaldSetup& s, const double box[3], double q_sum,
             double q2_sum, double qqr2e) {
    space_ = space;
    setup_ = s;
    qqr2e_ = qqr2e;
    q_sum_ = q_sum;
    q2_sum_ = q2_sum;
    volume_ = box[0] * box[1] * box[2];
    const double pi = 3.14159265358979323846;
    std::vector<double> kv, uk;
    const double g2inv = 1.0 / (s.g_ewald * s.g_ewald);
    for (int kx = 0; kx <= s.kmax[0]; ++kx)
      for (int ky = -s.kmax[1]; ky <= s.kmax[1]; ++ky)
        for (int kz = -s.kmax[2]; kz <= s.kmax[2]; ++kz) {
          // Half of k-space: the first non-zero index positive (S(-k) = S(k)*).
          if (!(kx > 0 || (kx == 0 && (ky > 0 || (ky == 0 && kz > 0))))) continue;
          const double k[3] = {2.0 * pi * kx / box[0], 2.0 * pi * ky / box[1],
                               2.0 * pi * kz / box[2]};
          const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
          if (k2 > s.gsqmx) continue;
          for (double c : k) kv.push_back(c);
          const double u = 4.0 * pi / volume_ * std::exp(-0.25 * k2 * g2inv) / k2;
          uk.push_back(u);
          uk.push_back(u * (1.0 - 0.5 * k2 * g2inv));  // virial weight
        }
    kcount_ = static_cast<int>(uk.size() / 2);
    setup_.kcount = kcount_;
    k_ = Kokkos::View<double* [3], Kokkos::LayoutRight, Mem>("hayate::md::ewald_k", kcount_);
    u_ = Kokkos::View<double* [2], Kokkos::LayoutRight, Mem>("hayate::md::ewald_u", kcount_);
    s_ = Kokkos::View<double* [2], Kokkos::LayoutRight, Mem>("hayate::md::ewald_s", kcount_);
    auto hk = Kokkos::create_mirror_view(k_);
    auto hu = Kokkos::create_mirror_view(u_);
    for (int n = 0; n < kcount_; ++n) {
      for (int d = 0; d < 3; ++d) hk(n, d) = kv[3 * n + d];
      hu(n, 0) = uk[2 * n];
      hu(n, 1) = uk[2 * n + 1];
    }
    Kokkos::deep_copy(space_, k_, hk);
    Kokkos::deep_copy(space_, u_, hu);
    space_.fence();
  }

  const EwaldSetup& settings() const { return setup_; }
  int kcount() const { return kcount_; }
  // On several ranks: sums the structure factors (Re, Im per k vector) over the ranks, so that
  // each rank's forces and the energy see every charge.
  void set_reduction(std::function<void(double*, int)> sum) { reduce_ = std::move(sum); }

  // Adds the wave-space forces to f; returns energy and virial (in double) when ev.
  template <class X, class Q, class F>
  EwaldResult compute(const X& x, const Q& q, const F& f, int natoms, bool ev);

  // Public only because CUDA forbids device lambdas in private member functions.
  // S(k) for every k: a team per k vector, its threads reducing over the atoms.
  template <class X, class Q>
  void structure_factors(const X& x, const Q& q, int natoms);

  template <class X, class Q, class F>
  void add_forces(const X& x, const Q& q, const F& f, int natoms);

 private:
  Space space_;
  EwaldSetup setup_;
  double qqr2e_ = 1, q_sum_ = 0, q2_sum_ = 0, volume_ = 1;
  int kcount_ = 0;
  Kokkos::View<double* [3], Kokkos::LayoutRight, Mem> k_;
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> u_;  // u(k), u(k) (1 - k^2 / 2g^2)
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> s_;  // Re S(k), Im S(k)
  std::function<void(double*, int)> reduce_;
};

template <class Space>
template <class X, class Q, class F>
EwaldResult Ewald<Space>::compute(const X& x, const Q& q, const F& f, int natoms, bool ev) {
  structure_factors(x, q, natoms);
  if (reduce_) {
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s_);
    reduce_(hs.data(), 2 * kcount_);
    Kokkos::deep_copy(space_, s_, hs);
  }
  add_forces(x, q, f, natoms);
  EwaldResult r;
  if (!ev) return r;
  const auto s = s_;
  const auto u = u_;
  EnergyVirial sum;
  Kokkos::parallel_reduce(
      "hayate::md::ewald_energy", Kokkos::RangePolicy<Space>(space_, 0, kcount_),
      KOKKOS_LAMBDA(int n, EnergyVirial& v) {
        const double s2 = s(n, 0) * s(n, 0) + s(n, 1) * s(n, 1);
        v.energy += u(n, 0) * s2;
        v.virial += u(n, 1) * s2;
      },
      Kokkos::Sum<EnergyVirial>(sum));
  const double e = sum.energy, w = sum.virial;
  const double pi = 3.14159265358979323846, g = setup_.g_ewald;
  r.energy =
      qqr2e_ * (e - g * q2_sum_ / std::sqrt(pi) - pi * q_sum_ * q_sum_ / (2.0 * volume_ * g * g));
  r.virial = qqr2e_ * w;
  return r;
}

template <class Space>
template <class X, class Q>
void Ewald<Space>::structure_factors(const X& x, const Q& q, int natoms) {
  using Team = typename Kokkos::TeamPolicy<Space>::member_type;
  const auto k = k_;
  const auto s = s_;
  Kokkos::parallel_for(
      "hayate::md::ewald_structure", Kokkos::TeamPolicy<Space>(space_, kcount_, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int n = team.league_rank();
        const double kx = k(n, 0), ky = k(n, 1), kz = k(n, 2);
        Kokkos::complex<double> sum;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, natoms),
            [&](const int j, Kokkos::complex<double>& acc) {
              const double phase =
                  kx * double(x(j, 0)) + ky * double(x(j, 1)) + kz * double(x(j, 2));
              const double qj = double(q(j));
              acc += Kokkos::complex<double>(qj * compat::cos(phase), qj * compat::sin(phase));
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          s(n, 0) = sum.real();
          s(n, 1) = sum.imag();
        });
      });
}

template <class Space>
template <class X, class Q, class F>
void Ewald<Space>::add_forces(const X& x, const Q& q, const F& f, int natoms) {
  const auto k = k_;
  const auto u = u_;
  const auto s = s_;
  const int kcount = kcount_;
  const double c = qqr2e_;
  Kokkos::parallel_for(
      "hayate::md::ewald_force", Kokkos::RangePolicy<Space>(space_, 0, natoms),
      KOKKOS_LAMBDA(int i) {
        const double xi = double(x(i, 0)), yi = double(x(i, 1)), zi = double(x(i, 2));
        double fx = 0, fy = 0, fz = 0;
        for (int n = 0; n < kcount; ++n) {
          const double kx = k(n, 0), ky = k(n, 1), kz = k(n, 2);
          const double phase = kx * xi + ky * yi + kz * zi;
          const double partial =
              2.0 * u(n, 0) * (compat::sin(phase) * s(n, 0) - compat::cos(phase) * s(n, 1));
          fx += partial * kx;
          fy += partial * ky;
          fz += partial * kz;
        }
        const double qc = c * double(q(i));
        using Real = typename F::value_type;
        f(i, 0) += Real(qc * fx);
        f(i, 1) += Real(qc * fy);
        f(i, 2) += Real(qc * fz);
      });
}

// Compiled once, in md/shared_kernels.cpp, for the views MdSystem passes (see neighbor.hpp).
#define HAYATE_MD_EWALD_KERNELS(EXTERN, S, R)                                                    \
  EXTERN template EwaldResult                                                                    \
  Ewald<S>::compute<ConstVecView<R, S::memory_space>, Kokkos::View<R*, S::memory_space>,         \
                    VecView<R, S::memory_space>>(const ConstVecView<R, S::memory_space>&,        \
                                                 const Kokkos::View<R*, S::memory_space>&,       \
                                                 const VecView<R, S::memory_space>&, int, bool); \
  EXTERN template void Ewald<S>::structure_factors<ConstVecView<R, S::memory_space>,             \
                                                   Kokkos::View<R*, S::memory_space>>(           \
      const ConstVecView<R, S::memory_space>&, const Kokkos::View<R*, S::memory_space>&, int);   \
  EXTERN template void                                                                           \
  Ewald<S>::add_forces<ConstVecView<R, S::memory_space>, Kokkos::View<R*, S::memory_space>,      \
                       VecView<R, S::memory_space>>(const ConstVecView<R, S::memory_space>&,     \
                                                    const Kokkos::View<R*, S::memory_space>&,    \
                                                    const VecView<R, S::memory_space>&, int);
#define HAYATE_MD_EWALD_SPACE(EXTERN, S)    \
  HAYATE_MD_EWALD_KERNELS(EXTERN, S, float) \
  HAYATE_MD_EWALD_KERNELS(EXTERN, S, double)
#ifndef HAYATE_MD_DEFINE_SHARED_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_MD_EWALD_SPACE, extern)
#endif

}  // namespace hayate::md
