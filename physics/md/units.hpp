#pragma once
// LAMMPS' unit styles (the `units` command) as the conversion constants the integrator and the
// thermodynamics use; lj makes every one of them 1.
//   lj:    reduced units (epsilon, sigma, mass, k_B = 1), charges in reduced units
//   real:  kcal/mol, Angstrom, fs, g/mol, charges in e, pressure in atm
//   metal: eV, Angstrom, ps, g/mol, charges in e, pressure in bar
#include <stdexcept>
#include <string>

namespace hayate::md {

struct Units {
  std::string name = "lj";
  double boltz = 1.0;   // k_B in energy / temperature
  double mvv2e = 1.0;   // mass * velocity^2 to energy
  double ftm2v = 1.0;   // force / mass * time to velocity
  double nktv2p = 1.0;  // energy / volume to pressure
  double qqr2e = 1.0;   // q_i q_j / r to energy (Coulomb's constant)

  static Units named(const std::string& name) {
    Units u;
    u.name = name;
    if (name == "lj") return u;
    if (name == "real") {
      u.boltz = 0.0019872067;
      u.mvv2e = 48.88821291 * 48.88821291;
      u.ftm2v = 1.0 / 48.88821291 / 48.88821291;
      u.nktv2p = 68568.415;
      u.qqr2e = 332.06371;
      return u;
    }
    if (name == "metal") {
      u.boltz = 8.617343e-5;
      u.mvv2e = 1.0364269e-4;
      u.ftm2v = 1.0 / 1.0364269e-4;
      u.nktv2p = 1.6021765e6;
      u.qqr2e = 14.399645;
      return u;
    }
    throw std::invalid_argument("unknown unit style '" + name + "'");
  }
};

}  // namespace hayate::md
