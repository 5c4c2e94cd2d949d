// problem: stream — the memory-bandwidth probe. Each step runs STREAM's four kernels, each timed
// between fences of the problem's execution-space instance; stream.csv records GB/s per kernel
// and the final state is checked exactly. On several ranks every rank runs the arrays on its
// own device, the ranks start each kernel together and the rate is the bytes of all ranks over
// the slowest rank's time: the aggregate bandwidth (as MPI versions of STREAM report it).
#include "stream/stream_problem.hpp"

#include "exec/dispatch.hpp"
#include "io/csv_writer.hpp"
#include "parallel/comm.hpp"
#include "stream/stream_kernels.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace hayate::stream {
namespace {

using core::CheckpointReader;
using core::CheckpointWriter;
using core::Config;
using core::RunContext;

// Checks a checkpoint against the input before anything is made from it: n, the precision
// (from the arrays' size), the step within run.steps, every value finite.
void check_checkpoint(const Config& config, const CheckpointReader& cp) {
  const std::int64_t n = config.integer("system.n");
  const auto saved_n = cp.get<std::int64_t>("n", 0, std::numeric_limits<std::int64_t>::max());
  if (saved_n != n)
    core::checkpoint_mismatch(config, "system.n", cp,
                              fmt::format("holds n = {}, the input {}", saved_n, n));
  const std::int64_t steps = config.integer("run.steps");
  const auto step = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
  if (step > steps)
    core::checkpoint_mismatch(config, "run.steps", cp,
                              fmt::format("is at step {}, beyond run.steps = {}", step, steps));
  const bool single = config.string("system.precision") == "float";
  const std::size_t element = single ? sizeof(float) : sizeof(double);
  for (const char* name : {"a", "b", "c"}) {
    const std::size_t bytes = cp.size(name);
    if (bytes != std::size_t(n) * element && bytes == std::size_t(n) * (12 - element))
      core::checkpoint_mismatch(config, "system.precision", cp,
                                fmt::format("holds {} arrays", single ? "double" : "float"));
    if (single)
      cp.check_reals<float>(name, std::size_t(n));
    else
      cp.check_reals<double>(name, std::size_t(n));
  }
}

template <class Space, class Real>
class StreamProblem final : public core::Problem {
 public:
  StreamProblem(const Config& config, const Space& space)
      : n_(config.integer("system.n")),
        steps_(config.integer("run.steps")),
        every_(config.integer("output.every")),
        scalar_(static_cast<Real>(config.real("run.scalar"))),
        unroll_(parse_unroll(config.string("tuning.unroll"))),
        arrays_(space, n_) {}

  void initialize(RunContext& ctx) override {
    arrays_.fill();
    step_ = 0;
    open_output(ctx, std::nullopt);
  }

  void restore(const CheckpointReader& cp, RunContext& ctx) override {
    check_checkpoint(ctx.config, cp);
    step_ = cp.get<std::int64_t>("step", 0, steps_);
    cp.get_view("a", arrays_.a);
    cp.get_view("b", arrays_.b);
    cp.get_view("c", arrays_.c);
    open_output(ctx, step_);
  }

  void save(CheckpointWriter& cp) const override {
    cp.put<std::int64_t>("n", n_);
    cp.put<std::int64_t>("step", step_);
    cp.put_view("a", arrays_.a);
    cp.put_view("b", arrays_.b);
    cp.put_view("c", arrays_.c);
  }

  std::int64_t current_step() const override { return step_; }
  std::int64_t total_steps() const override { return steps_; }

  void advance(RunContext& ctx) override {
    arrays_.space.fence();
    for (std::size_t k = 0; k < 4; ++k) {
      const Kernel kernel = all_kernels[k];
      world_.barrier();
      const auto start = std::chrono::steady_clock::now();
      arrays_.run(kernel, scalar_, unroll_);
      arrays_.space.fence();
      const double s = world_.max(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      ctx.timers.add(kernel_name(kernel), s);
      last_rate_[k] = arrays_.bytes(kernel) * double(world_.size()) / s * 1e-9;
      // The first step pays for page faults and clock ramp-up; STREAM excludes it too.
      if (ran_ > 0) best_rate_[k] = std::max(best_rate_[k], last_rate_[k]);
    }
    ++step_;
    ++ran_;
  }

  void output(RunContext& ctx, bool final) override {
    // Rates exist only for steps this process ran (not for the state a restart starts from).
    if (ran_ > 0 && (step_ % every_ == 0 || final) && world_.root()) {
      auto scope = ctx.timers.scope("output");
      csv_.row({step_, last_rate_[0], last_rate_[1], last_rate_[2], last_rate_[3]});
    }
    if (final) verify(ctx);
  }

 private:
  void verify(RunContext& ctx) {
    Real ea, eb, ec;
    expected_values<Real>(step_, scalar_, ea, eb, ec);
    if (!std::isfinite(double(ea)) || !std::isfinite(double(eb)) || !std::isfinite(double(ec)))
      throw core::CollectiveFailure(fmt::format(
          "stream: the values overflow {} after {} rounds with run.scalar = {} (they grow "
          "{:.4g}x per round); the results cannot be checked: use |run.scalar| <= 0.414 or "
          "fewer rounds",
          sizeof(Real) == 4 ? "float" : "double", step_, double(scalar_),
          std::fabs(double(scalar_) * double(scalar_) + 2 * double(scalar_))));
    const double worst = world_.max(arrays_.max_relative_error(ea, eb, ec));
    // Devices may contract b + s*c into an FMA, so allow a few rounding steps per round.
    const double tolerance = 16.0 * std::numeric_limits<Real>::epsilon() * double(step_ + 1);
    if (!(worst <= tolerance))
      throw core::CollectiveFailure(
          fmt::format("stream: arrays differ from the expected values after {} steps (max relative "
                      "error {:.3g}); the backend computed wrong results",
                      step_, worst));
    if (!ctx.quiet && steps_ > 1) {
      spdlog::info(
          "best GB/s ({} {}, n = {}{}): copy {:.1f}  scale {:.1f}  add {:.1f}  triad {:.1f}",
          ctx.backend, sizeof(Real) == 4 ? "float" : "double", n_,
          world_.distributed() ? fmt::format(" on each of {} ranks", world_.size()) : "",
          best_rate_[0], best_rate_[1], best_rate_[2], best_rate_[3]);
    }
  }

  // A fresh stream.csv, or (resume_after: the checkpoint's step) the folder's one continued.
  void open_output(RunContext& ctx, std::optional<std::int64_t> resume_after) {
    if (!world_.root()) return;
    csv_ = core::CsvWriter(ctx.outputs, ctx.path("stream.csv"),
                           {"step", "copy_GBps", "scale_GBps", "add_GBps", "triad_GBps"},
                           resume_after);
  }

  const core::Comm& world_ = core::Comm::world();
  std::int64_t n_, steps_, every_;
  Real scalar_;
  int unroll_;
  StreamArrays<Space, Real> arrays_;
  std::int64_t step_ = 0, ran_ = 0;
  double last_rate_[4] = {0, 0, 0, 0};
  double best_rate_[4] = {0, 0, 0, 0};
  core::CsvWriter csv_;
};

// One round maps a -> (s^2 + 2s) a (and b, c follow a), so for |s^2 + 2s| > 1 the values grow
// geometrically: a run that would overflow the element type is refused before it starts.
void validate(const Config& config) {
  const double s = config.real("run.scalar");
  const double growth = std::fabs(s * s + 2 * s);
  if (!(growth > 1)) return;
  const bool single = config.string("system.precision") == "float";
  const double largest =
      single ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  // |a_n| = g^n and |c_n| = |1 + s| g^(n-1) <= 2 g^n: safe while 2 g^n stays below the largest.
  const double rounds = (std::log(largest) - std::log(2.0)) / std::log(growth);
  if (double(config.integer("run.steps")) > rounds)
    config.fail("run.steps",
                fmt::format("with run.scalar = {} the values grow {:.4g}x per round and overflow "
                            "{} after about {:.0f} rounds; use at most that many rounds or "
                            "|run.scalar| <= 0.414 (the default keeps them bounded)",
                            s, growth, single ? "float" : "double", std::floor(rounds)));
}

void declare(core::Schema& s) {
  s.section("system", "The arrays");
  s.integer("system.n", "Elements per array (three arrays; on every rank)")
      .defaults(1 << 24)
      .range(1, 1LL << 34);
  s.choice("system.precision", {"float", "double"}, "Element type").defaults("double");
  s.section("run", "Repetitions");
  s.integer("run.steps", "Rounds of copy, scale, add, triad").defaults(10).at_least(1);
  // s = sqrt(2) - 1 makes one round map a -> a (s^2 + 2s = 1), so values stay O(1) for any
  // number of rounds; STREAM's s = 3 grows 15x per round and overflows float after 32 rounds.
  s.real("run.scalar", "Scalar s in b = s*c and a = b + s*c; the default keeps values bounded")
      .defaults(0.41421356237309515)
      .range(-1, 1);
  s.integer("output.every", "Write a stream.csv row every this many rounds")
      .defaults(1)
      .at_least(1);
  s.section("tuning", "Performance switches; results do not depend on them");
  s.choice("tuning.unroll", {"auto", "1", "2", "4", "8"},
           "Elements per thread, all loads issued before the stores (memory-level parallelism); "
           "auto: 4 on every backend")
      .defaults("auto");
  s.moved("run.unroll", "tuning.unroll");
}

}  // namespace

void register_problem(core::Registry& registry) {
  core::declare_distributed("stream");  // every rank its own arrays: the aggregate bandwidth
  registry.add(core::ProblemInfo{
      "stream", "Memory-bandwidth probe: STREAM copy/scale/add/triad on the chosen backend",
      declare,
      [](const Config& config, const std::string& backend) {
        validate(config);
        return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
          using Space = decltype(space);
          if (config.string("system.precision") == "float")
            return std::make_unique<StreamProblem<Space, float>>(config, space);
          return std::make_unique<StreamProblem<Space, double>>(config, space);
        });
      },
      [](const Config& config, const std::string&) { validate(config); }, check_checkpoint});
}

}  // namespace hayate::stream
