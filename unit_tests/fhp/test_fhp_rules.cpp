// Collision tables: counts, conservation, symmetry and unbiased chirality, and the bit-parallel
// boolean expansion against the table for every state.
#include "fhp/fhp_bitlogic.hpp"
#include "fhp/fhp_lattice.hpp"
#include "fhp/fhp_rules.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hayate::fhp {
namespace {

constexpr Model all_models[] = {Model::fhp1, Model::fhp2, Model::fhp3};

TEST(FhpRules, ChangeCounts) {
  EXPECT_EQ(changing_states(table_of(Model::fhp1)), 5);
  EXPECT_EQ(changing_states(table_of(Model::fhp2)), 22);
  EXPECT_EQ(changing_states(table_of(Model::fhp3)), 76);
  // FHP-III by particle number: 15 two-, 23 three-, 23 four- and 15 five-particle states.
  const auto& t3 = table_of(Model::fhp3);
  EXPECT_EQ(changing_states_of_mass(t3, 2), 15);
  EXPECT_EQ(changing_states_of_mass(t3, 3), 23);
  EXPECT_EQ(changing_states_of_mass(t3, 4), 23);
  EXPECT_EQ(changing_states_of_mass(t3, 5), 15);
}

TEST(FhpRules, EveryEntryConservesMassAndMomentum) {
  for (const Model m : all_models) {
    const auto& t = table_of(m);
    for (unsigned i = 0; i < 256; ++i) {
      const unsigned s = i & 0x7fu, o = t.out[i] & 0x7fu;
      if (i & 0x80u) continue;  // solid sites bounce back; checked by verify_table
      EXPECT_EQ(popcount7(s), popcount7(o)) << model_name(m) << " state " << s;
      EXPECT_EQ(momentum_x2(s), momentum_x2(o)) << model_name(m) << " state " << s;
      EXPECT_EQ(momentum_y(s), momentum_y(o)) << model_name(m) << " state " << s;
      const unsigned o1 = t.out[i | 256u] & 0x7fu;
      EXPECT_EQ(popcount7(s), popcount7(o1));
      EXPECT_EQ(momentum_x2(s), momentum_x2(o1));
      EXPECT_EQ(momentum_y(s), momentum_y(o1));
    }
    EXPECT_EQ(verify_table(m, table_of(m)), "") << model_name(m);
  }
}

TEST(FhpRules, KnownCollisions) {
  const auto& t1 = table_of(Model::fhp1);
  // Head-on pair {0,3} rotates to {1,4} or {2,5}.
  EXPECT_EQ(t1.out[0x09], 0x12);
  EXPECT_EQ(t1.out[0x09 | 256], 0x24);
  // Symmetric triple {0,2,4} -> {1,3,5} whatever the chirality.
  EXPECT_EQ(t1.out[0x15], 0x2a);
  EXPECT_EQ(t1.out[0x15 | 256], 0x2a);
  // FHP-II: rest + particle 0 <-> particles 1 and 5.
  const auto& t2 = table_of(Model::fhp2);
  EXPECT_EQ(t2.out[0x41], 0x22);
  EXPECT_EQ(t2.out[0x22 | 256], 0x41);
  // Solid site: bounce-back.
  EXPECT_EQ(t2.out[0x80 | 0x01], 0x80 | 0x08);
}

TEST(FhpRules, VerifierCatchesBrokenTables) {
  CollisionTable broken = table_of(Model::fhp3);
  broken.out[0x09] = 0x09;  // a head-on pair that no longer collides for one chirality
  EXPECT_NE(verify_table(Model::fhp3, broken), "");
  broken = table_of(Model::fhp3);
  broken.out[0x09 | 256] = 0x12;  // both chiralities rotate the same way: biased
  EXPECT_NE(verify_table(Model::fhp3, broken), "");
  broken = table_of(Model::fhp2);
  broken.out[0x41] = 0x03;  // does not conserve momentum
  EXPECT_NE(verify_table(Model::fhp2, broken), "");
}

// The chirality bits are fair: over many words, the fraction of ones is 1/2 within 5 sigma, and
// forcing bits have the requested probability.
TEST(FhpRules, RandomBitsAreFair) {
  std::int64_t ones = 0, forced = 0;
  const int words = 20000;
  const std::uint32_t q = 6554;  // ~0.1
  for (int w = 0; w < words; ++w) {
    ones += popcount64(chirality_bits(7, 3, w));
    forced += popcount64(forcing_bits(7, 3, w, q));
  }
  const double n = 64.0 * words;
  EXPECT_NEAR(ones / n, 0.5, 5 * std::sqrt(0.25 / n));
  const double p = q / 65536.0;
  EXPECT_NEAR(forced / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

template <Model M>
void check_bitlogic() {
  const auto& t = TableOf<M>::value;
  // Lanes enumerate all 128 states x 2 solid flags x 2 chiralities x 2 forcing flags.
  for (int block = 0; block < 16; ++block) {
    std::uint64_t n[7] = {0, 0, 0, 0, 0, 0, 0}, solid = 0, chir = 0, force = 0;
    for (int j = 0; j < 64; ++j) {
      const unsigned combo = unsigned(block * 64 + j);
      const unsigned s = combo & 0x7fu;
      for (int i = 0; i < 7; ++i) n[i] |= std::uint64_t((s >> i) & 1u) << j;
      solid |= std::uint64_t((combo >> 7) & 1u) << j;
      chir |= std::uint64_t((combo >> 8) & 1u) << j;
      force |= std::uint64_t((combo >> 9) & 1u) << j;
    }
    std::uint64_t out[7];
    collide_bits<M>(n, solid, chir, force, out);
    for (int j = 0; j < 64; ++j) {
      const unsigned combo = unsigned(block * 64 + j);
      const unsigned index = combo & 0x1ffu;
      std::uint8_t want = t.out[index];
      if (((combo >> 9) & 1u) && !(index & 0x80u)) want = apply_forcing(want);
      unsigned got = ((solid >> j) & 1u) << 7;
      for (int i = 0; i < 7; ++i) got |= unsigned((out[i] >> j) & 1u) << i;
      ASSERT_EQ(got, want) << model_name(M) << " combo " << combo;
    }
  }
}

TEST(FhpRules, OnlyFhp3IsSelfDual) {
  EXPECT_FALSE(Duality<Model::fhp1>::value);
  EXPECT_FALSE(Duality<Model::fhp2>::value);
  EXPECT_TRUE(Duality<Model::fhp3>::value);
}

TEST(FhpRules, BitLogicMatchesTable) {
  check_bitlogic<Model::fhp1>();
  check_bitlogic<Model::fhp2>();
  check_bitlogic<Model::fhp3>();
}

// Eigenvalue of the Boltzmann-linearized collision operator on the traceless stress mode
// c_x c_y, computed from the table, equals the theory behind the FHP viscosity formulas
// nu = -1/(4 lambda) - 1/8 (Frisch et al. 1987): this checks the whole rule set, not one entry.
double stress_eigenvalue(Model m, double d) {
  const auto& t = table_of(m);
  const int b = channels(m);
  double q[7];
  for (int i = 0; i < 7; ++i) q[i] = i < 6 ? 0.5 * dir_cx2(i) * sqrt3_2 * dir_cy(i) : 0.0;
  double jq[7] = {0, 0, 0, 0, 0, 0, 0};
  for (unsigned s = 0; s < (1u << b); ++s)
    for (unsigned c = 0; c < 2; ++c) {
      const unsigned o = t.out[s | (c << 8)];
      double p = 0.5;  // chirality
      for (int k = 0; k < b; ++k) p *= ((s >> k) & 1u) ? d : 1 - d;
      double dp = 0;  // derivative of p along q
      for (int j = 0; j < b; ++j) dp += p * (((s >> j) & 1u) ? 1 / d : -1 / (1 - d)) * q[j];
      for (int i = 0; i < b; ++i) jq[i] += (double((o >> i) & 1u) - double((s >> i) & 1u)) * dp;
    }
  return jq[1] / q[1];
}

TEST(FhpRules, BoltzmannViscosityOfTheTables) {
  for (double d : {0.1, 0.25, 0.4}) {
    const double nu1 = 1 / (12 * d * std::pow(1 - d, 3)) - 0.125;
    const double nu2 = 1 / (28 * d * std::pow(1 - d, 3) * (1 - 4 * d / 7)) - 0.125;
    const double nu3 = 1 / (28 * d * (1 - d) * (1 - 8 * d * (1 - d) / 7)) - 0.125;
    EXPECT_NEAR(-0.25 / stress_eigenvalue(Model::fhp1, d) - 0.125, nu1, 1e-12);
    EXPECT_NEAR(-0.25 / stress_eigenvalue(Model::fhp2, d) - 0.125, nu2, 1e-12);
    EXPECT_NEAR(-0.25 / stress_eigenvalue(Model::fhp3, d) - 0.125, nu3, 1e-12);
  }
}

TEST(FhpRules, ForcingConservesMassAndPushesX) {
  for (unsigned s = 0; s < 128; ++s) {
    const unsigned f = apply_forcing(std::uint8_t(s));
    EXPECT_EQ(popcount7(s), popcount7(f));
    EXPECT_GE(momentum_x2(f), momentum_x2(s));
    EXPECT_EQ(momentum_y(f), momentum_y(s));
  }
  EXPECT_EQ(apply_forcing(0x08), 0x01);  // a particle moving -x turns to +x
  EXPECT_EQ(apply_forcing(0x09), 0x09);  // blocked: the +x slot is full
}

}  // namespace
}  // namespace hayate::fhp
