#include "run/driver.hpp"

#include "compat/kokkos_compat.hpp"
#include "exec/dispatch.hpp"
#include "io/atomic_file.hpp"
#include "io/folder_lock.hpp"
#include "parallel/comm.hpp"
#include "run/progress.hpp"
#include "run/registry.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#ifdef KOKKOS_ENABLE_CUDA
#include "cuda/device_info.hpp"
#endif

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>
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
  os << Comm::world().describe() << "\n";
  os << "GPU buffers handed to MPI (run --gpu-aware auto): "
     << (Comm::world().cuda_aware() ? "yes" : "no, staged through host memory") << "\n";
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

std::string resolve_output_dir(const Config& config, const std::string& cli_output) {
  if (!cli_output.empty()) return cli_output;
  const std::string dir = config.string("output.directory");
  if (dir.empty()) return "out/" + config.input_stem();
  // An input names a folder below the working directory, or an absolute one: a relative path
  // that climbs above it would let an input written elsewhere write anywhere.
  const std::filesystem::path path(dir);
  if (path.is_relative()) {
    const auto normal = path.lexically_normal();
    if (!normal.empty() && *normal.begin() == "..")
      config.fail("output.directory",
                  "a relative output folder must stay below the working directory; give an "
                  "absolute path to write elsewhere");
  }
  return dir;
}

int gpu_device_count() {
#ifdef KOKKOS_ENABLE_CUDA
  return cuda::device_count();
#else
  return 0;
#endif
}

void check_launch_options(int threads, bool threads_given, int device, bool device_given) {
  constexpr int max_threads = 4096;
  if (threads_given && (threads < 1 || threads > max_threads))
    throw InputError(SourceLocation{"--threads " + std::to_string(threads), 0, 0},
                     "expected a number of threads in [1, " + std::to_string(max_threads) + "]");
  if (device_given) {
    const int count = gpu_device_count();
    if (device < 0 || device >= count)
      throw InputError(SourceLocation{"--device " + std::to_string(device), 0, 0},
                       count == 0
                           ? std::string("no GPU to select (this build or this machine has none)")
                           : fmt::format("no such GPU (devices 0 to {} exist)", count - 1));
  }
}

namespace {

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

std::string run_yaml(const Config& config, const std::string& backend, const std::string& outdir,
                     const std::string& started) {
  YAML::Emitter out;
  out << YAML::Comment("Resolved input of this run: defaults filled in, overrides applied.");
  out << YAML::BeginMap;
  for (auto it = config.tree().begin(); it != config.tree().end(); ++it)
    out << YAML::Key << it->first << YAML::Value << it->second;
  out << YAML::Key << "hayate" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << HAYATE_VERSION;
  out << YAML::Key << "commit" << YAML::Value << HAYATE_GIT_COMMIT;
  out << YAML::Key << "kokkos" << YAML::Value << compat::kokkos_version_string();
  out << YAML::Key << "backend_used" << YAML::Value << backend;
  out << YAML::Key << "ranks" << YAML::Value << Comm::world().size();
  out << YAML::Key << "backends_enabled" << YAML::Value << YAML::Flow << enabled_backends();
  out << YAML::Key << "concurrency" << YAML::Value
      << dispatch_backend(backend, [](auto space) { return space.concurrency(); });
  out << YAML::Key << "input" << YAML::Value << config.input_file();
  out << YAML::Key << "output" << YAML::Value << outdir;
  out << YAML::Key << "started" << YAML::Value << started;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// After a failure: the first error is the one reported (the caller rethrows it); the problem's
// writers are drained, every series keeps what it holds and timers.csv is written, and whatever
// fails on the way is only logged.
void keep_after_failure(std::unique_ptr<Problem>& problem, RunContext& ctx) noexcept {
  problem.reset();
  for (const auto& failure : ctx.outputs.keep_written())
    spdlog::warn("while stopping after the error below: {}", failure);
  if (!Comm::world().root()) return;
  try {
    ctx.timers.write_csv(ctx.path("timers.csv"));
  } catch (const std::exception& e) {
    spdlog::warn("while stopping after the error below: {}", e.what());
  }
}

}  // namespace

RunResult run_problem(const Config& config, const RunOptions& options) {
  // On several ranks, each step below that may fail on some ranks only (a file one rank cannot
  // read, the folder the first rank owns) ends in an agreement (Comm::agree), so that no rank
  // waits for one that stopped.
  const Comm& world = Comm::world();
  // Everything `hayate check` checks, the restart checkpoint included, before the output
  // folder is touched: a run refused here leaves it as it was. The problem is made before the
  // folder is touched too: its constructor may still refuse.
  ValidatedRun validated;
  std::string outdir;
  const ProblemInfo& info = Registry::instance().find(config.problem());
  std::unique_ptr<Problem> problem;
  world.agree([&] {
    validated = validate_run(config, options.backend);
    outdir = resolve_output_dir(config, options.output_dir);
    problem = info.create(config, validated.backend);
  });
  const std::string backend = validated.backend;

  // The first rank owns the folder, its lock and every file in it but the parts of a checkpoint,
  // which each rank writes there itself.
  bool created = false;
  const std::string started = utc_stamp();
  FolderLock lock;
  world.on_root([&] {
    created = make_directories(outdir);
    lock = FolderLock(outdir,
                      this_process() + ", input " + config.input_file() + ", started " + started);
  });
  RunContext ctx{config, backend, outdir, {}, options.quiet, {}};
  const auto remove_folder = [&] {
    // Refused before anything was written: the folder stays as it was.
    problem.reset();
    lock = FolderLock();
    std::error_code ec;
    if (created) std::filesystem::remove(outdir, ec);
  };
  try {
    auto scope = ctx.timers.scope("setup");
    world.agree([&] {
      // Found now rather than at the first checkpoint, hours in: every rank writes its part of
      // a checkpoint into the first rank's folder.
      const bool checkpoints =
          config.integer("checkpoint.every") > 0 || config.boolean("checkpoint.at_end");
      std::error_code ec;
      if (world.distributed() && checkpoints && !std::filesystem::is_directory(outdir, ec))
        throw RuntimeFailure("the output folder '" + outdir +
                             "' is not there on this rank: on several ranks each writes its "
                             "part of a checkpoint into it, so it must be on a file system "
                             "every rank shares");
    });
    // Separate from the check above: set-up below may be collective, so no rank may leave it
    // early.
    world.agree([&] {
      if (!validated.checkpoint) {
        problem->initialize(ctx);
      } else {
        problem->restore(*validated.checkpoint, ctx);
        if (!options.quiet)
          spdlog::info("restarted from {} at step {}", config.string("checkpoint.restart"),
                       problem->current_step());
      }
    });
  } catch (const InputError&) {
    remove_folder();
    throw;
  } catch (const ReportedFailure& e) {
    if (e.code == 2) remove_folder();
    throw;
  }
  validated.checkpoint.reset();  // its bytes are on the device now
  world.on_root(
      [&] { write_file_atomic(ctx.path("run.yaml"), run_yaml(config, backend, outdir, started)); });
  if (!options.quiet)
    spdlog::info("{}: problem {} on {}, output in {}", config.input_file(), config.problem(),
                 backend, outdir);

  const std::int64_t every = config.integer("checkpoint.every");
  const auto write_checkpoint = [&] {
    // Only a good state is saved, and the series hold every row up to it.
    problem->check_state(ctx);
    problem->flush_output();
    auto scope = ctx.timers.scope("checkpoint");
    CheckpointWriter writer(config.problem());
    problem->save(writer);  // every rank: each saves the state it holds split as its part
    writer.write(ctx.path("checkpoint.bin"), world);
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
    problem->flush_output();
    ctx.outputs.commit();
  } catch (...) {
    progress.interrupt();
    keep_after_failure(problem, ctx);
    throw;
  }
  progress.finish(problem->current_step());
  RunResult result{outdir, backend, problem->current_step() - first};
  problem.reset();
  if (world.root()) ctx.timers.write_csv(ctx.path("timers.csv"));
  return result;
}

}  // namespace hayate::core
