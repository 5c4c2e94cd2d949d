#include "md_problem.hpp"

#include "md_setup.hpp"
#include "md_styles_built.hpp"
#include "parallel/comm.hpp"
#include "potentials/styles.hpp"

namespace hayate::md {

void register_problem(core::Registry& registry) {
  core::ProblemInfo info{
      "md",
      "Molecular dynamics: lj/cut, morse, tables, Coulomb with the Ewald sum; cell and Verlet "
      "lists; NVE/Langevin/Berendsen",
      declare_schema, [](const core::Config& config, const std::string& backend) {
        const bool single = config.string("precision") == "float";
        return dispatch_style(
            config.string("pair.style"), [&](auto style) -> std::unique_ptr<core::Problem> {
              using Style = decltype(style);
              if constexpr (style_built<Style>::value)
                return single ? make_md_problem<float, Style>(config, backend)
                              : make_md_problem<double, Style>(config, backend);
              else
                config.fail("pair.style", std::string("pair style ") + Style::name +
                                              " is not compiled into this build (CMake option "
                                              "HAYATE_MD_STYLES)");
            });
      }};
  info.check = check_input;
  info.check_restart = [](const core::Config& config, const core::CheckpointReader& cp) {
    check_checkpoint(config, cp);
  };
  registry.add(std::move(info));
  core::declare_distributed("md");  // spatial decomposition (domain.hpp)
}

bool style_is_built(const std::string& name) {
  try {
    return dispatch_style(name, [](auto style) { return style_built<decltype(style)>::value; });
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace hayate::md
