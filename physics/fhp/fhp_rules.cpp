#include "fhp/fhp_rules.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace hayate::fhp {

const CollisionTable& table_of(Model m) {
  switch (m) {
    case Model::fhp1:
      return TableOf<Model::fhp1>::value;
    case Model::fhp2:
      return TableOf<Model::fhp2>::value;
    case Model::fhp3:
      return TableOf<Model::fhp3>::value;
  }
  throw std::logic_error("fhp: unknown model");
}

Model parse_model(const std::string& name) {
  if (name == "fhp1") return Model::fhp1;
  if (name == "fhp2") return Model::fhp2;
  if (name == "fhp3") return Model::fhp3;
  throw std::logic_error("fhp: unknown model '" + name + "'");
}

std::string model_name(Model m) {
  return fmt::format("fhp{}", int(m));
}

std::string verify_table(Model m, const CollisionTable& t) {
  const int changes = changing_states(t);
  if (changes != expected_changes(m))
    return fmt::format("{} changes {} states, expected {}", model_name(m), changes,
                       expected_changes(m));
  for (unsigned c = 0; c < 2; ++c) {
    for (unsigned s = 0; s < 128; ++s) {
      const unsigned o = t.out[s | (c << 8)];
      if (o > 127) return fmt::format("state {:#04x}: outcome {:#04x} sets the solid bit", s, o);
      if (!same_class(s, o))
        return fmt::format("state {:#04x} chirality {}: outcome {:#04x} changes mass or momentum",
                           s, c, o);
      if (m == Model::fhp1 && s < 64 && o >= 64)
        return fmt::format("state {:#04x}: FHP-I outcome creates a rest particle", s);
      for (int k = 1; k < 6; ++k) {
        const unsigned rs = rotate_state(s, k);
        if (t.out[rs | (c << 8)] != rotate_state(o, k))
          return fmt::format("state {:#04x}: rule is not invariant under a {} degree rotation", s,
                             60 * k);
      }
      // The mirror image of an outcome is the other chirality's outcome of the mirror state.
      if (t.out[mirror_state(s) | ((1 - c) << 8)] != mirror_state(o))
        return fmt::format("state {:#04x}: mirror image does not swap the chirality", s);
      const unsigned solid = t.out[s | 0x80u | (c << 8)];
      if (solid != (bounce_back(s) | 0x80u))
        return fmt::format("solid state {:#04x}: not bounce-back", s);
    }
    for (unsigned s = 0; s < 128; ++s) {
      // Unbiased choice: where a class offers two other members, the two chiralities lead to
      // different ones (each with probability 1/2); the zero-momentum triples {0,2,4} <-> {1,3,5}
      // are the one case where both rotations agree.
      const unsigned o0 = t.out[s], o1 = t.out[s | 256];
      if (o0 != s && o1 == s)
        return fmt::format("state {:#04x}: changes for one chirality only", s);
      if (o0 == s && o1 != s)
        return fmt::format("state {:#04x}: changes for one chirality only", s);
      if (o0 != s && o0 == o1 && class_size(s) != 2 && rotate_state(s, 1) != rotate_state(s, -1))
        return fmt::format("state {:#04x}: both chiralities choose the same outcome", s);
      if (m == Model::fhp3 && class_size(s) >= 2 && o0 == s)
        return fmt::format("state {:#04x}: FHP-III must change every state with a partner", s);
    }
  }
  return {};
}

}  // namespace hayate::fhp
