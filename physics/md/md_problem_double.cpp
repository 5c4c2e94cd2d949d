// MdProblem for every enabled backend in double precision (one translation unit per precision so
// the two compile in parallel).
#include "md_problem_impl.hpp"
#include "exec/dispatch.hpp"

namespace hayate::md {

template <>
std::unique_ptr<core::Problem> make_md_problem<double>(const core::Config& config,
                                                       const std::string& backend) {
  return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
    return std::make_unique<MdProblem<decltype(space), double>>(config, backend);
  });
}

}  // namespace hayate::md
