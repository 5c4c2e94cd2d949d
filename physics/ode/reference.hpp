#pragma once
// Serial host references: the bytecode interpreter (same program, plain loops, one core) and the
// AST-walking evaluator (the model's expression trees, no bytecode at all). Both step with the
// same schedule and assign policies as the device, so results agree to rounding.
#include "ode/interp.hpp"
#include "ode/model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hayate::ode {

class HostIntegrator {
 public:
  HostIntegrator(std::size_t n_states, std::size_t n_vars, std::size_t members, Method method)
      : M_(members), method_(method), v(n_vars * members, 0.0), f(n_states * members, 0.0) {
    for (auto& b : bufs_) b.assign(n_states * members, 0.0);
  }
  virtual ~HostIntegrator() = default;

  std::vector<double>& x() { return bufs_[0]; }
  std::size_t members() const { return M_; }

  void advance(std::int64_t first_step, std::int64_t steps, double dt) {
    for (std::int64_t n = 0; n < steps; ++n) {
      double* ptr[4] = {bufs_[0].data(), bufs_[1].data(), bufs_[2].data(), bufs_[3].data()};
      const int r = step_schedule(method_, double(first_step + n) * dt, dt, ptr, Sweep{this});
      std::swap(bufs_[0], bufs_[r]);
    }
  }
  void evaluate(double t) { sweep_function(bufs_[0].data(), t, f.data()); }

 protected:
  // Evaluates every equation once; derivative stores go through the policy.
  virtual void sweep_euler(const double* in, double t, const AssignEuler& a) = 0;
  virtual void sweep_rk4(const double* in, double t, const AssignRK4& a) = 0;
  virtual void sweep_function(const double* in, double t, double* out) = 0;

  std::size_t M_;
  Method method_;

 public:
  std::vector<double> v, f;

 private:
  struct Sweep {
    HostIntegrator* self;
    void operator()(const double* in, double t, const AssignEuler& a) const {
      self->sweep_euler(in, t, a);
    }
    void operator()(const double* in, double t, const AssignRK4& a) const {
      self->sweep_rk4(in, t, a);
    }
  };
  std::vector<double> bufs_[4];
};

// The serial reference interpreter of a compiled program.
class ReferenceInterpreter final : public HostIntegrator {
 public:
  ReferenceInterpreter(const Program& program, std::size_t members, Method method);
  const Program& program() const { return prog_; }

 private:
  template <class Assign>
  void sweep(const double* in, double t, const Assign& a);
  void sweep_euler(const double* in, double t, const AssignEuler& a) override;
  void sweep_rk4(const double* in, double t, const AssignRK4& a) override;
  void sweep_function(const double* in, double t, double* out) override;

  Program prog_;
  ProgramRef ref_;
};

// Walks the model's expression trees in dependency order (one ensemble member).
class AstIntegrator final : public HostIntegrator {
 public:
  AstIntegrator(const FlatModel& model, Method method);

 private:
  template <class Assign>
  void sweep(const double* in, double t, const Assign& a);
  void sweep_euler(const double* in, double t, const AssignEuler& a) override;
  void sweep_rk4(const double* in, double t, const AssignRK4& a) override;
  void sweep_function(const double* in, double t, double* out) override;

  const FlatModel& model_;
  std::vector<std::size_t> order_;
};

}  // namespace hayate::ode
