#pragma once
// FHP collision rules. A site state is 7 bits: bits 0..5 are particles moving along the six
// lattice directions c_i (angle 60 i degrees), bit 6 is the rest particle; bit 7 marks a solid
// site in the one-byte layout. The collision tables are generated at compile time from the
// rules below (enumerate the 128 states, group them by mass and momentum, apply the model's
// allowed transitions), so both kernels use exactly the same description:
//   - the byte kernel looks the table up,
//   - the bit-parallel kernel expands it into boolean logic (fhp_bitlogic.hpp).
// One chirality bit per site chooses between the two outcomes of a collision; the rules are
// rotation-equivariant and a mirror image swaps the chirality, so the coin treats mirror-image
// outcomes alike (verified by verify_table()).
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace hayate::fhp {

enum class Model : int { fhp1 = 1, fhp2 = 2, fhp3 = 3 };

inline constexpr int rest_bit = 6;
inline constexpr int solid_bit = 7;
inline constexpr std::uint8_t moving_mask = 0x3f;

// Lattice velocities in exact integer units: x in halves, y in units of sqrt(3)/2.
KOKKOS_INLINE_FUNCTION constexpr int dir_cx2(int i) {
  return i == 0 ? 2 : i == 1 ? 1 : i == 2 ? -1 : i == 3 ? -2 : i == 4 ? -1 : 1;
}
KOKKOS_INLINE_FUNCTION constexpr int dir_cy(int i) {
  return i == 1 || i == 2 ? 1 : i == 4 || i == 5 ? -1 : 0;
}

constexpr int popcount7(unsigned s) {
  int n = 0;
  for (int i = 0; i < 7; ++i) n += (s >> i) & 1u;
  return n;
}
constexpr int momentum_x2(unsigned s) {
  int p = 0;
  for (int i = 0; i < 6; ++i) p += ((s >> i) & 1u) ? dir_cx2(i) : 0;
  return p;
}
constexpr int momentum_y(unsigned s) {
  int p = 0;
  for (int i = 0; i < 6; ++i) p += ((s >> i) & 1u) ? dir_cy(i) : 0;
  return p;
}
// Rotation of the moving particles by k x 60 degrees; the rest particle is unchanged.
constexpr unsigned rotate_state(unsigned s, int k) {
  k = ((k % 6) + 6) % 6;
  unsigned r = s & (1u << rest_bit);
  for (int i = 0; i < 6; ++i)
    if ((s >> i) & 1u) r |= 1u << ((i + k) % 6);
  return r;
}
// Mirror image in the x axis: direction i -> -i.
constexpr unsigned mirror_state(unsigned s) {
  unsigned r = s & (1u << rest_bit);
  for (int i = 0; i < 6; ++i)
    if ((s >> i) & 1u) r |= 1u << ((6 - i) % 6);
  return r;
}
constexpr bool same_class(unsigned a, unsigned b) {
  return popcount7(a) == popcount7(b) && momentum_x2(a) == momentum_x2(b) &&
         momentum_y(a) == momentum_y(b);
}
constexpr int class_size(unsigned s) {
  int n = 0;
  for (unsigned t = 0; t < 128; ++t) n += same_class(s, t) ? 1 : 0;
  return n;
}

// Pseudo-angle of (x, y), monotonic in the true angle, in [0, 4).
constexpr double pseudo_angle(double x, double y) {
  if (y >= 0) return x >= 0 ? y / (x + y) : 1.0 - x / (-x + y);
  return x < 0 ? 2.0 - y / (-x - y) : 3.0 + x / (x - y);
}
// Angle of the quadrupole moment sum_i exp(2 i theta_i) of the moving particles. Rotating a
// state by 60 degrees turns it by 120 degrees and a mirror image reverses it, so the cyclic
// order of these angles is a rotation-covariant, mirror-reversed order of a class.
constexpr double quadrupole_angle(unsigned s) {
  int a[3] = {0, 0, 0};
  for (int i = 0; i < 6; ++i)
    if ((s >> i) & 1u) ++a[i % 3];
  const double x = 2.0 * a[0] - a[1] - a[2];  // in units of 1/2
  const double y = 1.7320508075688772 * (a[1] - a[2]);
  if (x == 0 && y == 0) throw "fhp: quadrupole of a three-member class vanishes";
  return pseudo_angle(x, y);
}

// Mass and momentum of every state as one key, and the size of each state's class, computed
// once per table (device compilers limit the work a constant expression may do).
struct Classes {
  int key[128];
  int size[128];
};
constexpr int class_key(unsigned s) {
  return popcount7(s) * 10000 + (momentum_x2(s) + 20) * 100 + (momentum_y(s) + 20);
}
constexpr Classes make_classes() {
  Classes c{};
  for (unsigned s = 0; s < 128; ++s) c.key[s] = class_key(s);
  for (unsigned s = 0; s < 128; ++s)
    for (unsigned t = 0; t < 128; ++t) c.size[s] += c.key[s] == c.key[t] ? 1 : 0;
  return c;
}

struct Outcomes {
  unsigned out[2];  // by chirality
};

// The saturated rule on one class of (mass, momentum): zero momentum rotates by +-60 degrees;
// two members swap; three members (nonzero momentum) cycle through the quadrupole order,
// forward or backward by chirality.
constexpr Outcomes saturated_outcomes(const Classes& c, unsigned s) {
  if (c.size[s] < 2) return {{s, s}};
  if (momentum_x2(s) == 0 && momentum_y(s) == 0) return {{rotate_state(s, 1), rotate_state(s, -1)}};
  unsigned others[2] = {0, 0};
  int k = 0;
  for (unsigned t = 0; t < 128; ++t)
    if (t != s && c.key[t] == c.key[s]) {
      if (k >= 2) throw "fhp: a class of nonzero momentum has more than three members";
      others[k++] = t;
    }
  if (c.size[s] == 2) return {{others[0], others[0]}};
  const double a0 = quadrupole_angle(s);
  double d[2] = {0, 0};
  for (int j = 0; j < 2; ++j) {
    d[j] = quadrupole_angle(others[j]) - a0;
    if (d[j] <= 0) d[j] += 4.0;
  }
  return d[0] < d[1] ? Outcomes{{others[0], others[1]}} : Outcomes{{others[1], others[0]}};
}

// The model's outcomes for a fluid site.
constexpr Outcomes rule_outcomes(Model model, const Classes& c, unsigned s) {
  const unsigned moving = s & moving_mask;
  const int moving_mass = popcount7(moving);
  const bool moving_zero = momentum_x2(moving) == 0 && momentum_y(moving) == 0;
  const Outcomes rotated{{rotate_state(s, 1), rotate_state(s, -1)}};
  switch (model) {
    case Model::fhp1:
      // Head-on pairs and symmetric triples rotate; no rest particles exist.
      if (s == moving && moving_zero && (moving_mass == 2 || moving_mass == 3)) return rotated;
      return {{s, s}};
    case Model::fhp2:
      // FHP-I collisions with or without a spectator rest particle, plus
      // rest + moving <-> two moving particles at 120 degrees.
      if (moving_zero && (moving_mass == 2 || moving_mass == 3)) return rotated;
      if (popcount7(s) == 2 && !(momentum_x2(s) == 0 && momentum_y(s) == 0) && c.size[s] == 2)
        return saturated_outcomes(c, s);
      return {{s, s}};
    case Model::fhp3:
      return saturated_outcomes(c, s);
  }
  return {{s, s}};
}

// Outcome of a solid site: bounce-back (every moving particle reverses), solid flag kept.
constexpr unsigned bounce_back(unsigned s) {
  return rotate_state(s & 0x7fu, 3) | (s & (1u << solid_bit));
}

// Index: site byte (7 state bits + solid bit) | chirality << 8.
struct CollisionTable {
  std::uint8_t out[512];
};

constexpr CollisionTable make_table(Model model) {
  CollisionTable t{};
  const Classes classes = make_classes();
  for (unsigned s = 0; s < 128; ++s) {
    const Outcomes o = rule_outcomes(model, classes, s);
    for (unsigned c = 0; c < 2; ++c) {
      t.out[s | (c << 8)] = static_cast<std::uint8_t>(o.out[c]);
      t.out[s | 0x80u | (c << 8)] = static_cast<std::uint8_t>(bounce_back(s | 0x80u));
    }
  }
  return t;
}

template <Model M>
struct TableOf {
  static constexpr CollisionTable value = make_table(M);
};

// Number of fluid states (of 128) that some chirality changes.
constexpr int changing_states(const CollisionTable& t) {
  int n = 0;
  for (unsigned s = 0; s < 128; ++s) n += (t.out[s] != s || t.out[s | 256] != s) ? 1 : 0;
  return n;
}
constexpr int changing_states_of_mass(const CollisionTable& t, int mass) {
  int n = 0;
  for (unsigned s = 0; s < 128; ++s)
    n += popcount7(s) == mass && (t.out[s] != s || t.out[s | 256] != s) ? 1 : 0;
  return n;
}

inline constexpr int expected_changes(Model m) {
  return m == Model::fhp1 ? 5 : m == Model::fhp2 ? 22 : 76;
}

static_assert(changing_states(TableOf<Model::fhp1>::value) == 5, "FHP-I changes 5 states");
static_assert(changing_states(TableOf<Model::fhp2>::value) == 22, "FHP-II changes 22 states");
static_assert(changing_states(TableOf<Model::fhp3>::value) == 76, "FHP-III changes 76 states");

const CollisionTable& table_of(Model m);
Model parse_model(const std::string& name);
std::string model_name(Model m);
// Moving channels that hold particles (6 for FHP-I, 7 with the rest particle).
inline int channels(Model m) {
  return m == Model::fhp1 ? 6 : 7;
}

// Checks a table: the change count, mass and momentum conservation of every entry, outcomes
// in the state's class, rotation equivariance, mirror symmetry with swapped chirality, that
// both outcomes differ wherever the class offers more than one other member, and
// bounce-back on solid sites. Returns an empty string or a description of the first failure.
std::string verify_table(Model m, const CollisionTable& t);

// Body forcing moves a particle from a -x direction to its +x mirror when that slot is empty:
// mass is conserved and x momentum grows by one unit (two half units) per move.
struct ForcingMove {
  int from, to;
};
KOKKOS_INLINE_FUNCTION constexpr ForcingMove forcing_move(int k) {
  return k == 0 ? ForcingMove{3, 0} : k == 1 ? ForcingMove{2, 1} : ForcingMove{4, 5};
}
inline constexpr int forcing_moves = 3;

KOKKOS_INLINE_FUNCTION std::uint8_t apply_forcing(std::uint8_t s) {
  for (int k = 0; k < forcing_moves; ++k) {
    const ForcingMove m = forcing_move(k);
    if (((s >> m.from) & 1) && !((s >> m.to) & 1))
      s = static_cast<std::uint8_t>(s ^ ((1u << m.from) | (1u << m.to)));
  }
  return s;
}

}  // namespace hayate::fhp
