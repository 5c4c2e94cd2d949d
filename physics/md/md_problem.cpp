#include "md_problem.hpp"

#include "md_problem_impl.hpp"
#include "md_setup.hpp"

namespace hayate::md {

void register_problem(core::Registry& registry) {
  registry.add(core::ProblemInfo{
      "md", "Lennard-Jones molecular dynamics: cell and Verlet lists, NVE/Langevin/Berendsen",
      declare_schema, [](const core::Config& config, const std::string& backend) {
        if (config.string("precision") == "float") return make_md_problem<float>(config, backend);
        return make_md_problem<double>(config, backend);
      }});
}

}  // namespace hayate::md
