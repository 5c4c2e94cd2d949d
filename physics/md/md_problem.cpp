#include "md_problem.hpp"

#include "md_setup.hpp"
#include "potentials/styles.hpp"

namespace hayate::md {

void register_problem(core::Registry& registry) {
  core::ProblemInfo info{"md",
                         "Molecular dynamics: pair styles lj/cut and morse, cell and Verlet lists, "
                         "NVE/Langevin/Berendsen",
                         declare_schema,
                         [](const core::Config& config, const std::string& backend) {
                           const bool single = config.string("precision") == "float";
                           return dispatch_style(config.string("pair.style"), [&](auto style) {
                             using Style = decltype(style);
                             return single ? make_md_problem<float, Style>(config, backend)
                                           : make_md_problem<double, Style>(config, backend);
                           });
                         }};
  info.check = check_input;
  info.check_restart = check_checkpoint;
  registry.add(std::move(info));
}

}  // namespace hayate::md
