#include "run/driver.hpp"

#include "compat/kokkos_compat.hpp"
#include "exec/dispatch.hpp"
#include "io/atomic_file.hpp"
#include "run/progress.hpp"
#include "run/registry.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <sstream>

#ifndef HAYATE_VERSION
#define HAYATE_VERSION "0.0.0"
#endif
#ifndef HAYATE_GIT_COMMIT
#define HAYATE_GIT_COMMIT "unknown"
#endif

namespace hayate::core {

std::string version_text() {
  return fmt::format("hayate {} (commit {}, Kokkos {})", HAYATE_VERSION, HAYATE_GIT_COMMIT,
                     compat::kokkos_version_string());
}

std::string info_text() {
  std::ostringstream os;
  os << version_text() << "\n";
  const auto backends = enabled_backends();
  os << "backends:";
  for (const auto& b : backends) os << ' ' << b;
  os << "\ndefault backend: " << default_backend() << "\n";
  os << "problems:";
  for (const auto& p : Registry::instance().names()) os << ' ' << p;
  os << "\n\n";
  Kokkos::print_configuration(os, true);
  return os.str();
}

std::string resolve_backend(const Config& config, const std::string& cli_backend) {
  const auto enabled = enabled_backends();
  std::string list;
  for (const auto& b : enabled) list += (list.empty() ? "" : ", ") + b;
  if (!cli_backend.empty()) {
    const std::string name = cli_backend == "auto" ? default_backend() : cli_backend;
    if (std::find(enabled.begin(), enabled.end(), name) == enabled.end())
      throw InputError(SourceLocation{"--backend " + cli_backend, 0, 0},
                       "backend not enabled in this build (enabled: " + list + ", auto)");
    return name;
  }
  const std::string name = config.string("backend");
  if (name == "auto") return default_backend();
  if (std::find(enabled.begin(), enabled.end(), name) == enabled.end())
    config.fail("backend",
                "'" + name + "' is not enabled in this build (enabled: " + list + ", auto)");
  return name;
}

namespace {

std::string run_yaml(const Config& config, const std::string& backend, const std::string& outdir) {
  YAML::Emitter out;
  out << YAML::Comment("Resolved input of this run: defaults filled in, overrides applied.");
  out << YAML::BeginMap;
  for (auto it = config.tree().begin(); it != config.tree().end(); ++it)
    out << YAML::Key << it->first << YAML::Value << it->second;
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  out << YAML::Key << "hayate" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << HAYATE_VERSION;
  out << YAML::Key << "commit" << YAML::Value << HAYATE_GIT_COMMIT;
  out << YAML::Key << "kokkos" << YAML::Value << compat::kokkos_version_string();
  out << YAML::Key << "backend_used" << YAML::Value << backend;
  out << YAML::Key << "backends_enabled" << YAML::Value << YAML::Flow << enabled_backends();
  out << YAML::Key << "concurrency" << YAML::Value
      << dispatch_backend(backend, [](auto space) { return space.concurrency(); });
  out << YAML::Key << "input" << YAML::Value << config.input_file();
  out << YAML::Key << "output" << YAML::Value << outdir;
  out << YAML::Key << "started" << YAML::Value << stamp;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

RunResult run_problem(const Config& config, const RunOptions& options) {
  // Everything `hayate check` checks, the restart checkpoint included, before anything is
  // written: a run refused here leaves the output folder as it was.
  ValidatedRun validated = validate_run(config, options.backend);
  const std::string backend = validated.backend;
  std::string outdir = options.output_dir;
  if (outdir.empty()) outdir = config.string("output.directory");
  if (outdir.empty()) outdir = "out/" + config.input_stem();
  make_directories(outdir);

  RunContext ctx{config, backend, outdir, {}, options.quiet};
  const ProblemInfo& info = Registry::instance().find(config.problem());
  write_file_atomic(ctx.path("run.yaml"), run_yaml(config, backend, outdir));
  if (!options.quiet)
    spdlog::info("{}: problem {} on {}, output in {}", config.input_file(), config.problem(),
                 backend, outdir);

  std::unique_ptr<Problem> problem = info.create(config, backend);
  {
    auto scope = ctx.timers.scope("setup");
    if (!validated.checkpoint) {
      problem->initialize(ctx);
    } else {
      problem->restore(*validated.checkpoint, ctx);
      validated.checkpoint.reset();  // its bytes are on the device now
      if (!options.quiet)
        spdlog::info("restarted from {} at step {}", config.string("checkpoint.restart"),
                     problem->current_step());
    }
  }

  const std::int64_t every = config.integer("checkpoint.every");
  const auto write_checkpoint = [&] {
    auto scope = ctx.timers.scope("checkpoint");
    CheckpointWriter writer(config.problem());
    problem->save(writer);
    writer.write(ctx.path("checkpoint.bin"));
  };

  const std::int64_t first = problem->current_step();
  const std::int64_t last = problem->total_steps();
  Progress progress(first, last, options.quiet, config.real("output.progress_seconds"));
  try {
    problem->output(ctx, first >= last);
    while (problem->current_step() < last) {
      problem->advance(ctx);
      const std::int64_t step = problem->current_step();
      problem->output(ctx, step >= last);
      if (every > 0 && step % every == 0) write_checkpoint();
      progress.update(step);
    }
    if (config.boolean("checkpoint.at_end") && !(every > 0 && last % every == 0))
      write_checkpoint();
  } catch (...) {
    // Keep what was measured: timers and every file the problem wrote are committed.
    problem.reset();
    ctx.timers.write_csv(ctx.path("timers.csv"));
    throw;
  }
  progress.finish(problem->current_step());
  RunResult result{outdir, backend, problem->current_step() - first};
  problem.reset();
  ctx.timers.write_csv(ctx.path("timers.csv"));
  return result;
}

}  // namespace hayate::core
