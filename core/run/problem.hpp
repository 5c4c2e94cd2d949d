#pragma once
// What the driver needs from a physics. A Problem is constructed from a validated Config for one
// execution space, then either initialized or restored from a checkpoint, and stepped.
#include "config/config.hpp"
#include "io/series_file.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"

#include <cstdint>
#include <string>

namespace hayate::core {

struct RunContext {
  const Config& config;
  std::string backend;     // resolved backend name ("cuda", "openmp", "serial")
  std::string output_dir;  // exists when the problem is constructed
  Timers timers;
  bool quiet = false;
  // The run's series files (time series, trajectories): problems open theirs here and the
  // driver commits them, after the last step or after a failure.
  RunOutputs outputs;

  std::string path(const std::string& file) const { return output_dir + "/" + file; }
};

class Problem {
 public:
  virtual ~Problem() = default;

  // Fresh start from the input.
  virtual void initialize(RunContext& ctx) = 0;
  // Continue from a checkpoint; must reproduce the saved state exactly.
  virtual void restore(const CheckpointReader& checkpoint, RunContext& ctx) = 0;
  virtual void save(CheckpointWriter& checkpoint) const = 0;

  virtual std::int64_t current_step() const = 0;
  virtual std::int64_t total_steps() const = 0;
  // Advances one step.
  virtual void advance(RunContext& ctx) = 0;
  // Called after initialize/restore and after every step; the problem applies its own output
  // cadence. `final` is true once, after the last step. Series are opened in ctx.outputs
  // (restore continues them from the checkpoint's step); the driver commits them.
  virtual void output(RunContext& ctx, bool final) = 0;
  // Throws RuntimeFailure naming the step and the quantity when the state is not fit to go on
  // or to be saved (not finite, exploded, particles lost). Problems check what is cheap every
  // step themselves; the driver calls this before every checkpoint, so that a checkpoint always
  // holds a good state.
  virtual void check_state(RunContext& ctx) { (void)ctx; }
  // Hands every record computed so far to its file. The driver calls it before every
  // checkpoint, so the files hold at least what the checkpoint has passed.
  virtual void flush_output() {}
};

}  // namespace hayate::core
