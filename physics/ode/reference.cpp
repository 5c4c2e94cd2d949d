#include "ode/reference.hpp"

#include "ode/compiler.hpp"

namespace hayate::ode {

ReferenceInterpreter::ReferenceInterpreter(const Program& program, std::size_t members,
                                           Method method)
    : HostIntegrator(program.n_states, program.n_vars, members, method), prog_(program) {
  ref_ = ProgramRef{prog_.code.data(),     prog_.groups.data(), prog_.lane_code.data(),
                    prog_.lane_len.data(), prog_.itab.data(),   prog_.ctab.data(),
                    prog_.consts.data()};
  for (const auto& [index, value] : prog_.constant_vars)
    for (std::size_t m = 0; m < members; ++m) v[index * members + m] = value;
}

template <class Assign>
void ReferenceInterpreter::sweep(const double* in, double t, const Assign& a) {
  const StateRef s{in, v.data(), t, M_};
  for (std::size_t p = 0; p < prog_.n_phases(); ++p)
    for (int g = prog_.phase_begin[p]; g < prog_.phase_begin[p + 1]; ++g)
      for (int lane = 0; lane < kWarp; ++lane)
        for (std::size_t m = 0; m < M_; ++m) run_group_lane(ref_, g, lane, s, m, a);
}

AstIntegrator::AstIntegrator(const FlatModel& model, Method method)
    : HostIntegrator(model.n_states(), model.n_vars(), 1, method), model_(model) {
  order_ = topological_order(model);
  for (std::size_t i = 0; i < model.equations.size(); ++i)
    if (model.equations[i].derivative) order_.push_back(i);
  for (std::size_t j = 0; j < model.param_values.size(); ++j)
    v[model.n_alg + j] = model.param_values[j];
}

template <class Assign>
void AstIntegrator::sweep(const double* in, double t, const Assign& a) {
  for (std::size_t i : order_) {
    const Equation& e = model_.equations[i];
    const double value = ode::evaluate(*e.expr, in, v.data(), t);
    if (e.derivative)
      a(e.target, value);
    else
      v[e.target] = value;
  }
}

void ReferenceInterpreter::sweep_euler(const double* in, double t, const AssignEuler& a) {
  sweep(in, t, a);
}
void ReferenceInterpreter::sweep_rk4(const double* in, double t, const AssignRK4& a) {
  sweep(in, t, a);
}
void ReferenceInterpreter::sweep_function(const double* in, double t, double* out) {
  sweep(in, t, AssignFunction{out});
}

void AstIntegrator::sweep_euler(const double* in, double t, const AssignEuler& a) {
  sweep(in, t, a);
}
void AstIntegrator::sweep_rk4(const double* in, double t, const AssignRK4& a) {
  sweep(in, t, a);
}
void AstIntegrator::sweep_function(const double* in, double t, double* out) {
  sweep(in, t, AssignFunction{out});
}

}  // namespace hayate::ode
