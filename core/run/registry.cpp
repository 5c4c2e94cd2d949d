#include "run/registry.hpp"

#include "exec/dispatch.hpp"
#include "parallel/comm.hpp"
#include "run/driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace hayate::core {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(ProblemInfo info) {
  for (const auto& p : problems_)
    if (p.name == info.name) throw std::logic_error("problem '" + info.name + "' registered twice");
  problems_.push_back(std::move(info));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> n;
  for (const auto& p : problems_) n.push_back(p.name);
  return n;
}

const ProblemInfo& Registry::find(const std::string& name) const {
  for (const auto& p : problems_)
    if (p.name == name) return p;
  throw std::logic_error("no problem named '" + name + "'");
}

const Schema& Registry::schema(const std::string& name) const {
  for (const auto& s : schemas_)
    if (s->problem() == name) return *s;
  const ProblemInfo& info = find(name);
  auto s = std::make_unique<Schema>(info.name, info.summary);
  declare_common_keys(*s, names());
  info.declare(*s);
  schemas_.push_back(std::move(s));
  return *schemas_.back();
}

namespace {
const Schema& lookup(const std::string& name) {
  return Registry::instance().schema(name);
}
}  // namespace

ConfigLoader Registry::loader() const {
  // The loader looks schemas up through the global registry, which is where problems live.
  if (this != &instance()) throw std::logic_error("loader() of a non-global registry");
  return ConfigLoader(names(), &lookup);
}

ValidatedRun validate_run(const Config& config, const std::string& cli_backend) {
  ValidatedRun run;
  run.backend = resolve_backend(config, cli_backend);
  const ProblemInfo& info = Registry::instance().find(config.problem());
  const Comm& world = Comm::world();
  if (world.distributed() && !runs_distributed(config.problem())) {
    std::string list;
    for (const auto& p : distributed_problems()) list += (list.empty() ? "" : ", ") + p;
    config.fail("problem", fmt::format("'{}' runs on one rank; this run was started on {} ranks "
                                       "(problems that run on several: {})",
                                       config.problem(), world.size(), list));
  }
  if (info.check) info.check(config, run.backend);
  const std::string restart = config.string("checkpoint.restart");
  if (restart.empty()) return run;
  run.checkpoint = std::make_unique<CheckpointReader>(
      restart, FileOrigin{config.where("checkpoint.restart"), "checkpoint.restart"});
  if (run.checkpoint->problem() != config.problem())
    config.fail("checkpoint.restart", quoted(restart, 4 * echo_limit) + " holds a " +
                                          quoted(run.checkpoint->problem()) + " state, not '" +
                                          config.problem() + "'");
  if (info.check_restart) info.check_restart(config, *run.checkpoint);
  return run;
}

void declare_common_keys(Schema& s, const std::vector<std::string>& problems) {
  s.choice("problem", problems, "Which solver family this input drives");
  std::vector<std::string> backends{"auto"};
  for (const auto& b : {"cuda", "openmp", "serial"}) backends.push_back(b);
  s.choice("backend", backends,
           "Execution space; auto = the build's default (cuda in a CUDA build). --backend wins")
      .defaults("auto");
  s.section("output", "Where and how often results are written");
  s.string("output.directory", "Output folder; empty = out/<input file stem>. --output wins")
      .defaults("\"\"");
  s.real("output.progress_seconds", "Seconds between progress log lines when not on a terminal")
      .defaults(10.0)
      .above(0);
  s.section("checkpoint", "Saving and resuming the full state");
  s.integer("checkpoint.every", "Write checkpoint.bin every this many steps; 0 = never")
      .defaults(0)
      .at_least(0);
  s.boolean("checkpoint.at_end", "Write checkpoint.bin after the last step").defaults(false);
  s.string("checkpoint.restart",
           "Continue from this checkpoint file instead of the initial "
           "state; empty = fresh start")
      .defaults("\"\"");
}

}  // namespace hayate::core
